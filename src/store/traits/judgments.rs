//! Judgments and the judge calls behind them.

use async_trait::async_trait;

use crate::store::{JudgeCallRow, JudgmentRow, NewJudgment, StoreError};

/// Judgments and the judge calls behind them.
#[async_trait]
pub trait JudgmentStore: Send + Sync {
    /// In one transaction: store the judgment (replacing one with the same
    /// judge hash and conversations) and its calls (replacing calls with the
    /// same judge hash, conversations, order and sample). Returns its id.
    async fn save_judgment(&self, judgment: &NewJudgment) -> Result<i64, StoreError>;

    /// The stored judgment of `judge_hash` over conversation `a` (and `b`).
    async fn find_judgment(
        &self,
        judge_hash: &str,
        a: i64,
        b: Option<i64>,
    ) -> Result<Option<JudgmentRow>, StoreError>;

    /// The stored calls of `judge_hash` over conversation `a` (and `b`), by
    /// order then sample: the cache a judgment run starts from.
    async fn judge_calls(
        &self,
        judge_hash: &str,
        a: i64,
        b: Option<i64>,
    ) -> Result<Vec<JudgeCallRow>, StoreError>;

    /// Every judgment whose conversation A belongs to `job_id` (whichever job
    /// made it), by id. For statistics, filters and exports.
    async fn judgments_of_job(&self, job_id: i64) -> Result<Vec<JudgmentRow>, StoreError>;

    /// The judgment with this id.
    async fn get_judgment(&self, id: i64) -> Result<Option<JudgmentRow>, StoreError>;

    /// Every judgment of conversation `id`, as conversation A or B, by id.
    async fn judgments_of_conversation(&self, id: i64) -> Result<Vec<JudgmentRow>, StoreError>;

    /// Judgments job `job_id` made (a judging job's work), by id, at most
    /// `limit` after id `after`.
    async fn judgments_made_by(
        &self,
        job_id: i64,
        after: i64,
        limit: u32,
    ) -> Result<Vec<JudgmentRow>, StoreError>;

    /// Every call behind those judgments, by id (position-bias statistics).
    async fn judge_calls_of_job(&self, job_id: i64) -> Result<Vec<JudgeCallRow>, StoreError>;

    /// `(judge name, model)` of those calls, each pair once, sorted: which
    /// models judged a job, without reading the calls (a dataset card).
    async fn judge_models_of_job(&self, job_id: i64) -> Result<Vec<(String, String)>, StoreError>;
}
