//! Row types the store reads and writes. The store knows rows, not engines:
//! JSON-valued columns travel as `serde_json::Value` and are opaque here.

use std::sync::Arc;

use serde::Serialize;

use crate::token_ids::TokenIds;

/// Status of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    Pending,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pending => "pending",
            JobStatus::Running => "running",
            JobStatus::Done => "done",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => JobStatus::Pending,
            "running" => JobStatus::Running,
            "done" => JobStatus::Done,
            "failed" => JobStatus::Failed,
            "cancelled" => JobStatus::Cancelled,
            _ => return None,
        })
    }
}

/// Status of a work item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    Pending,
    Leased,
    Done,
    Failed,
}

impl ItemStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemStatus::Pending => "pending",
            ItemStatus::Leased => "leased",
            ItemStatus::Done => "done",
            ItemStatus::Failed => "failed",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => ItemStatus::Pending,
            "leased" => ItemStatus::Leased,
            "done" => ItemStatus::Done,
            "failed" => ItemStatus::Failed,
            _ => return None,
        })
    }
}

/// What a job's items are: conversations to generate, stored
/// conversations to judge, scenarios to propose, or conversations imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    Generation,
    Judging,
    /// Scenario synthesis: proposals of task blueprints (`sparring synthesize`).
    Synthesis,
    /// Conversations sparring did not generate (`sparring import`): each item
    /// is done as it is stored, with its conversation.
    Import,
}

impl JobKind {
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Generation => "generation",
            JobKind::Judging => "judging",
            JobKind::Synthesis => "synthesis",
            JobKind::Import => "import",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "generation" => JobKind::Generation,
            "judging" => JobKind::Judging,
            "synthesis" => JobKind::Synthesis,
            "import" => JobKind::Import,
            _ => return None,
        })
    }
}

impl std::fmt::Display for JobKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone)]
pub struct NewJob {
    pub name: String,
    pub kind: JobKind,
    /// The config exactly as loaded (TOML text), so a job can be re-read later.
    pub config_snapshot: String,
    /// Hash of the canonical config; equal hashes mean the same job.
    pub config_hash: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct JobRow {
    pub id: i64,
    pub name: String,
    pub kind: JobKind,
    pub config_snapshot: String,
    pub config_hash: String,
    pub status: JobStatus,
    /// Unix milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewItem {
    /// Unique within the job: `scenario/persona/sample`.
    pub key: String,
    pub scenario_id: String,
    pub persona_id: String,
    pub sample: i64,
    /// The item seed (a u64 stored bit-for-bit as i64).
    pub seed: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ItemRow {
    pub id: i64,
    pub job_id: i64,
    pub key: String,
    pub scenario_id: String,
    pub persona_id: String,
    pub sample: i64,
    pub seed: i64,
    pub status: ItemStatus,
    pub attempts: i64,
    pub lease_owner: Option<String>,
    /// Unix milliseconds.
    pub lease_expires_at: Option<i64>,
    /// `class: message` of the last failure.
    pub last_error: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ItemCounts {
    pub pending: i64,
    pub leased: i64,
    pub done: i64,
    pub failed: i64,
}

impl ItemCounts {
    pub fn total(&self) -> i64 {
        self.pending + self.leased + self.done + self.failed
    }
}

/// Per-role usage of one conversation (`role` is `policy`, `user`, later `judge`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UsageRow {
    pub role: String,
    pub calls: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub latency_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewMessage {
    /// `system`, `user`, `assistant` or `tool` (the policy's view).
    pub role: String,
    /// Shared with the transcript it came from (and, for the system prompt,
    /// with every conversation of the job): a finished conversation waiting
    /// for its commit holds no second copy of its text.
    pub content: Arc<str>,
    /// JSON array of `{id, name, arguments}`, or `None`.
    pub tool_calls: Option<serde_json::Value>,
    pub tool_call_id: Option<String>,
    /// Who produced it: `policy`, `user` (simulator), `env`, `system`.
    pub author: String,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub latency_ms: Option<i64>,
    /// The token ids and log probabilities of the policy's generation that
    /// produced it, where its server returned them (stored in
    /// `message_tokens`); shared with the recorded turn, not copied.
    #[serde(skip)]
    pub tokens: Option<Arc<TokenIds>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewConversation {
    pub job_id: i64,
    pub item_id: i64,
    pub item_key: String,
    pub scenario_id: String,
    pub persona_id: String,
    pub sample: i64,
    pub seed: i64,
    pub policy_model: String,
    pub user_model: String,
    /// A termination reason, e.g. `user_stop`.
    pub termination: String,
    pub reward: Option<f64>,
    /// Verification breakdown (JSON object), `null` when not verified.
    pub reward_breakdown: serde_json::Value,
    /// Resolved persona knobs and anything else worth keeping (JSON object).
    pub metadata: serde_json::Value,
    /// The tools offered to the policy (JSON array of specs), for export.
    /// Shared: every conversation of a job offers the same tools.
    pub tools: Arc<serde_json::Value>,
    pub usage: Vec<UsageRow>,
    pub started_at: i64,
    pub finished_at: i64,
    /// The deterministic checks of the simulated user (JSON object, see
    /// `user_checks::UserChecks`); `None` stores none.
    pub user_checks: Option<serde_json::Value>,
    pub messages: Vec<NewMessage>,
}

impl NewConversation {
    /// The conversation as it will read back once stored with id `id`: what a
    /// judge sees of it before it is stored (a reward judge), so that its
    /// prompt is the one a later judging job renders from the stored rows.
    pub fn as_stored(&self, id: i64) -> StoredConversation {
        StoredConversation {
            conversation: ConversationRow {
                id,
                job_id: self.job_id,
                item_id: self.item_id,
                item_key: self.item_key.clone(),
                scenario_id: self.scenario_id.clone(),
                persona_id: self.persona_id.clone(),
                sample: self.sample,
                seed: self.seed,
                policy_model: self.policy_model.clone(),
                user_model: self.user_model.clone(),
                termination: self.termination.clone(),
                reward: self.reward,
                reward_breakdown: self.reward_breakdown.clone(),
                metadata: self.metadata.clone(),
                tools: self.tools.as_ref().clone(),
                started_at: self.started_at,
                finished_at: self.finished_at,
                user_checks: self.user_checks.clone(),
            },
            messages: self
                .messages
                .iter()
                .enumerate()
                .map(|(idx, m)| MessageRow {
                    idx: idx as i64,
                    role: m.role.clone(),
                    content: m.content.to_string(),
                    tool_calls: m.tool_calls.clone(),
                    tool_call_id: m.tool_call_id.clone(),
                    author: m.author.clone(),
                    prompt_tokens: m.prompt_tokens,
                    completion_tokens: m.completion_tokens,
                    latency_ms: m.latency_ms,
                })
                .collect(),
            usage: self.usage.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageRow {
    pub idx: i64,
    pub role: String,
    pub content: String,
    pub tool_calls: Option<serde_json::Value>,
    pub tool_call_id: Option<String>,
    pub author: String,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub latency_ms: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationRow {
    pub id: i64,
    pub job_id: i64,
    pub item_id: i64,
    pub item_key: String,
    pub scenario_id: String,
    pub persona_id: String,
    pub sample: i64,
    pub seed: i64,
    pub policy_model: String,
    pub user_model: String,
    pub termination: String,
    pub reward: Option<f64>,
    pub reward_breakdown: serde_json::Value,
    pub metadata: serde_json::Value,
    pub tools: serde_json::Value,
    pub started_at: i64,
    pub finished_at: i64,
    /// The deterministic checks of the simulated user stored with it (JSON
    /// object, see `user_checks::UserChecks`); `None` for a conversation stored
    /// before they existed.
    pub user_checks: Option<serde_json::Value>,
}

/// A conversation with its messages (in order) and usage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredConversation {
    pub conversation: ConversationRow,
    pub messages: Vec<MessageRow>,
    pub usage: Vec<UsageRow>,
}

/// Aggregates of one job's stored conversations.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct JobSummary {
    pub conversations: i64,
    /// Mean over conversations that have a reward.
    pub mean_reward: Option<f64>,
    /// (termination reason, count), most frequent first.
    pub terminations: Vec<(String, i64)>,
    /// Usage summed per role.
    pub usage: Vec<UsageRow>,
    /// Latencies of the model calls per role, for percentiles.
    pub call_latencies: Vec<LatencyHistogram>,
}

/// How many model calls of one author took each latency. The calls are the
/// messages that carry a latency: one per model reply stored (`policy`, `user`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LatencyHistogram {
    /// Who made the calls: `policy` or `user` (the role names of `UsageRow`).
    pub author: String,
    /// `(latency_ms, calls)`, ascending by latency, each latency once.
    pub counts: Vec<(i64, i64)>,
}

impl LatencyHistogram {
    /// Histograms from `(author, latency_ms, calls)` rows ordered by author,
    /// then latency.
    pub fn from_rows(rows: impl IntoIterator<Item = (String, i64, i64)>) -> Vec<Self> {
        let mut histograms: Vec<LatencyHistogram> = Vec::new();
        for (author, latency_ms, calls) in rows {
            match histograms.last_mut() {
                Some(last) if last.author == author => last.counts.push((latency_ms, calls)),
                _ => histograms.push(LatencyHistogram {
                    author,
                    counts: vec![(latency_ms, calls)],
                }),
            }
        }
        histograms
    }
}
