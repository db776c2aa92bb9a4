//! Row types of scenario synthesis: one stored proposal per item of a
//! synthesis job, what its generator prompt became after its feedback
//! retries. JSON-valued columns travel as `serde_json::Value`; the synthesis
//! job gives them their meaning.

use serde::Serialize;

/// Whether a proposal's last attempt passed every check of its item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    Valid,
    Rejected,
}

impl ProposalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalStatus::Valid => "valid",
            ProposalStatus::Rejected => "rejected",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "valid" => Some(ProposalStatus::Valid),
            "rejected" => Some(ProposalStatus::Rejected),
            _ => None,
        }
    }
}

/// A proposal to store as its item completes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewProposal {
    /// The proposal number (the item's index in the job).
    pub index: i64,
    pub status: ProposalStatus,
    /// The last attempt's rejection stage and reason (rejected proposals).
    pub stage: Option<String>,
    pub reason: Option<String>,
    pub brief: serde_json::Value,
    /// The scenario row (valid proposals).
    pub scenario: Option<serde_json::Value>,
    pub attempts: serde_json::Value,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub review_prompt_tokens: i64,
    pub review_completion_tokens: i64,
    pub latency_ms: i64,
}

/// A stored proposal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProposalRow {
    pub id: i64,
    pub job_id: i64,
    pub item_id: i64,
    #[serde(flatten)]
    pub proposal: NewProposal,
    pub created_at: i64,
}
