//! Row types of judging through a provider's Batch API: a batch (the
//! provider's ids, stored as soon as they exist) and the judge calls sent in
//! it, each under a `custom_id` that is never sent twice.

use serde::Serialize;

use super::NewJudgeCall;

/// One judge call to send in a batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewBatchRequest {
    /// Names the call and its attempt; unique within the job.
    pub custom_id: String,
    pub judge_name: String,
    pub judge_hash: String,
    pub conversation_a: i64,
    pub conversation_b: Option<i64>,
    /// `single`, `ab` or `ba`.
    pub order: String,
    pub sample: i64,
    pub prompt_hash: String,
    /// 1 for the first submission of this call.
    pub attempt: i64,
}

/// A request as stored, with what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchRequestRow {
    pub id: i64,
    /// The `batches` row it was sent in.
    pub batch: i64,
    pub request: NewBatchRequest,
    /// `submitted`, `answered` or `failed`.
    pub status: String,
    pub error: Option<String>,
}

/// A batch as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchRow {
    pub id: i64,
    pub job_id: i64,
    pub endpoint: String,
    pub input_file_id: Option<String>,
    pub batch_id: Option<String>,
    pub output_file_id: Option<String>,
    pub error_file_id: Option<String>,
    /// `preparing`, the provider's status, or `ingested`.
    pub status: String,
    pub requests: i64,
    pub created_at: i64,
}

/// What the provider said of a batch; `None` keeps what is stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchUpdate {
    pub input_file_id: Option<String>,
    pub batch_id: Option<String>,
    pub output_file_id: Option<String>,
    pub error_file_id: Option<String>,
    pub status: Option<String>,
}

/// What became of one request of a batch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchAnswer {
    pub custom_id: String,
    /// `answered` or `failed`.
    pub status: String,
    pub error: Option<String>,
    /// The judge call to store: the answer, or the failure of a request that
    /// used up its attempts.
    pub call: Option<NewJudgeCall>,
}
