//! [`JudgmentStore`] over the shared SQL.

use async_trait::async_trait;

use super::super::{dialect::Dialect, judgments, SqlStore};
use crate::store::{JudgeCallRow, JudgmentRow, JudgmentStore, NewJudgment, StoreError};

#[async_trait]
impl<D: Dialect> JudgmentStore for SqlStore<D> {
    #[tracing::instrument(name = "store.save_judgment", level = "debug", skip_all)]
    async fn save_judgment(&self, judgment: &NewJudgment) -> Result<i64, StoreError> {
        judgments::save(self, judgment).await
    }

    #[tracing::instrument(name = "store.find_judgment", level = "debug", skip_all)]
    async fn find_judgment(
        &self,
        judge_hash: &str,
        a: i64,
        b: Option<i64>,
    ) -> Result<Option<JudgmentRow>, StoreError> {
        judgments::find(self, judge_hash, a, b).await
    }

    #[tracing::instrument(name = "store.judge_calls", level = "debug", skip_all)]
    async fn judge_calls(
        &self,
        judge_hash: &str,
        a: i64,
        b: Option<i64>,
    ) -> Result<Vec<JudgeCallRow>, StoreError> {
        judgments::calls(self, judge_hash, a, b).await
    }

    #[tracing::instrument(name = "store.judgments_of_job", level = "debug", skip_all, fields(job_id = job_id))]
    async fn judgments_of_job(&self, job_id: i64) -> Result<Vec<JudgmentRow>, StoreError> {
        judgments::of_job(self, job_id).await
    }

    #[tracing::instrument(name = "store.judge_calls_of_job", level = "debug", skip_all, fields(job_id = job_id))]
    async fn judge_calls_of_job(&self, job_id: i64) -> Result<Vec<JudgeCallRow>, StoreError> {
        judgments::calls_of_job(self, job_id).await
    }

    #[tracing::instrument(name = "store.judge_models_of_job", level = "debug", skip_all, fields(job_id = job_id))]
    async fn judge_models_of_job(&self, job_id: i64) -> Result<Vec<(String, String)>, StoreError> {
        judgments::judge_models_of_job(self, job_id).await
    }

    #[tracing::instrument(name = "store.get_judgment", level = "debug", skip_all, fields(id = id))]
    async fn get_judgment(&self, id: i64) -> Result<Option<JudgmentRow>, StoreError> {
        judgments::get(self, id).await
    }

    #[tracing::instrument(name = "store.judgments_of_conversation", level = "debug", skip_all, fields(id = id))]
    async fn judgments_of_conversation(&self, id: i64) -> Result<Vec<JudgmentRow>, StoreError> {
        judgments::of_conversation(self, id).await
    }

    #[tracing::instrument(name = "store.judgments_made_by", level = "debug", skip_all, fields(job_id = job_id))]
    async fn judgments_made_by(
        &self,
        job_id: i64,
        after: i64,
        limit: u32,
    ) -> Result<Vec<JudgmentRow>, StoreError> {
        judgments::made_by(self, job_id, after, limit).await
    }
}
