//! Row types of judgments: one combined outcome per judge and conversation
//! (or pair), and the model calls it was made of. A call is cached by (judge
//! hash, conversation A, conversation B, order, sample); a judgment by (judge
//! hash, conversation A, conversation B). Conversation B is `None` for a
//! judgment of one conversation (pointwise, equivalence, assertions, or
//! pairwise against a reference text).

use serde::Serialize;

/// One model call of a judge, as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewJudgeCall {
    /// `single`, `ab` or `ba`.
    pub order: String,
    pub sample: i64,
    /// sha256 of the rendered prompt: a cached call is reused only while the
    /// prompt it answered is the same.
    pub prompt_hash: String,
    pub model: String,
    pub raw_output: String,
    /// The verdict this call's output parsed to (`judge::Verdict` as JSON, in
    /// the call's own order), `None` when it did not parse or failed.
    pub parsed: Option<serde_json::Value>,
    /// `ok`, `unparseable` or `failed`.
    pub status: String,
    pub error: Option<String>,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub latency_ms: i64,
    /// Answered through a provider's Batch API (priced at the endpoint's
    /// batch prices).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub batch: bool,
}

/// A judgment to store with the calls made for it. Storing replaces an
/// earlier judgment with the same key, and calls with the same call key
/// (a retried failed or unparseable call replaces the old one).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewJudgment {
    /// The job whose work produced it: a judging job, or the generation job
    /// that ran its judges itself.
    pub job_id: i64,
    pub judge_name: String,
    pub judge_hash: String,
    pub conversation_a: i64,
    pub conversation_b: Option<i64>,
    /// Combined: `ok`, `unparseable` or `failed`.
    pub status: String,
    /// Combined verdict (`judge::Verdict` as JSON), `None` unless `ok`.
    pub verdict: Option<serde_json::Value>,
    /// The verdict's score where it has one (pointwise, pass/fail).
    pub score: Option<f64>,
    /// Pairwise/equivalence with a swap check: whether both orders agreed.
    pub consistent: Option<bool>,
    /// Why it is not `ok`, or how an inconsistency was resolved.
    pub reason: Option<String>,
    /// Calls made for this judgment now (cached calls it reused are already
    /// stored and are not repeated here).
    pub calls: Vec<NewJudgeCall>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeCallRow {
    pub id: i64,
    pub judge_name: String,
    pub judge_hash: String,
    pub conversation_a: i64,
    pub conversation_b: Option<i64>,
    pub call: NewJudgeCall,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgmentRow {
    pub id: i64,
    pub job_id: i64,
    pub judge_name: String,
    pub judge_hash: String,
    pub conversation_a: i64,
    pub conversation_b: Option<i64>,
    pub status: String,
    pub verdict: Option<serde_json::Value>,
    pub score: Option<f64>,
    pub consistent: Option<bool>,
    pub reason: Option<String>,
    pub updated_at: i64,
}

/// What matches a conversation across jobs: the same scenario, persona and
/// sample number.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationKey {
    pub conversation_id: i64,
    pub scenario_id: String,
    pub persona_id: String,
    pub sample: i64,
    pub reward: Option<f64>,
    pub termination: String,
}
