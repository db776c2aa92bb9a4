//! The one [`Store`] over both backends: each query is written once here,
//! in SQL both dialects read, and runs on whichever [`Backend`] the store
//! holds. A backend brings its pools and transactions and the statements its
//! dialect writes its own way: leasing and bulk inserts.

pub(crate) mod backend;
mod conversations;
mod items;
mod jobs;
mod judgments;
pub(crate) mod runs;
pub(crate) mod statement;

use async_trait::async_trait;

pub(crate) use backend::Backend;

use crate::store::{
    ConversationKey, ItemCounts, ItemRow, JobRow, JobStatus, JobSummary, JudgeCallRow, JudgmentRow,
    LatencyHistogram, NewConversation, NewItem, NewJob, NewJudgment, Store, StoreError,
    StoredConversation,
};

/// A [`Store`] on a backend: [`crate::store::sqlite::SqliteStore`] or
/// [`crate::store::postgres::PostgresStore`].
#[derive(Debug, Clone)]
pub struct SqlStore<B> {
    backend: B,
}

impl<B> SqlStore<B> {
    pub(crate) fn new(backend: B) -> Self {
        SqlStore { backend }
    }

    pub(crate) fn backend(&self) -> &B {
        &self.backend
    }
}

#[async_trait]
impl<B: Backend> Store for SqlStore<B> {
    async fn create_job(&self, job: &NewJob) -> Result<JobRow, StoreError> {
        jobs::create(&self.backend, job).await
    }

    async fn get_job(&self, id: i64) -> Result<Option<JobRow>, StoreError> {
        jobs::get(&self.backend, id).await
    }

    async fn find_job_by_config_hash(&self, hash: &str) -> Result<Option<JobRow>, StoreError> {
        jobs::find_by_config_hash(&self.backend, hash).await
    }

    async fn find_job_by_name(&self, name: &str) -> Result<Option<JobRow>, StoreError> {
        jobs::find_by_name(&self.backend, name).await
    }

    async fn all_jobs(&self) -> Result<Vec<JobRow>, StoreError> {
        jobs::all(&self.backend).await
    }

    async fn open_jobs(&self) -> Result<Vec<JobRow>, StoreError> {
        jobs::open(&self.backend).await
    }

    async fn set_job_status(&self, id: i64, status: JobStatus) -> Result<(), StoreError> {
        jobs::set_status(&self.backend, id, status).await
    }

    async fn add_items(&self, job_id: i64, items: &[NewItem]) -> Result<u64, StoreError> {
        self.backend.add_items(job_id, items).await
    }

    async fn lease_items(
        &self,
        job_id: i64,
        owner: &str,
        limit: u32,
        lease_ms: i64,
    ) -> Result<Vec<ItemRow>, StoreError> {
        self.backend
            .lease_items(job_id, owner, limit, lease_ms)
            .await
    }

    async fn renew_leases(
        &self,
        owner: &str,
        item_ids: &[i64],
        lease_ms: i64,
    ) -> Result<u64, StoreError> {
        self.backend.renew_leases(owner, item_ids, lease_ms).await
    }

    async fn complete_items(
        &self,
        owner: &str,
        batch: &[(i64, &NewConversation)],
    ) -> Result<Vec<Result<i64, StoreError>>, StoreError> {
        conversations::complete_items(&self.backend, owner, batch).await
    }

    async fn finish_item(&self, item_id: i64, owner: &str) -> Result<(), StoreError> {
        items::finish(&self.backend, item_id, owner).await
    }

    async fn fail_item(
        &self,
        item_id: i64,
        owner: &str,
        class: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        items::fail(&self.backend, item_id, owner, class, message).await
    }

    async fn reset_failed_items(&self, job_id: i64) -> Result<u64, StoreError> {
        items::reset_failed(&self.backend, job_id).await
    }

    async fn release_items(&self, job_id: i64, owner: &str) -> Result<u64, StoreError> {
        items::release(&self.backend, job_id, owner).await
    }

    async fn item_counts(&self, job_id: i64) -> Result<ItemCounts, StoreError> {
        items::counts(&self.backend, job_id).await
    }

    async fn get_conversation(&self, id: i64) -> Result<Option<StoredConversation>, StoreError> {
        conversations::get(&self.backend, id).await
    }

    async fn conversations_page(
        &self,
        job_id: i64,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<StoredConversation>, StoreError> {
        conversations::page(&self.backend, job_id, after_id, limit).await
    }

    async fn job_summary(&self, job_id: i64) -> Result<JobSummary, StoreError> {
        conversations::summary(&self.backend, job_id).await
    }

    async fn call_latencies(&self, job_id: i64) -> Result<Vec<LatencyHistogram>, StoreError> {
        conversations::latencies(&mut self.backend.reader(), job_id).await
    }

    async fn save_judgment(&self, judgment: &NewJudgment) -> Result<i64, StoreError> {
        judgments::save(&self.backend, judgment).await
    }

    async fn find_judgment(
        &self,
        judge_hash: &str,
        a: i64,
        b: Option<i64>,
    ) -> Result<Option<JudgmentRow>, StoreError> {
        judgments::find(&self.backend, judge_hash, a, b).await
    }

    async fn judge_calls(
        &self,
        judge_hash: &str,
        a: i64,
        b: Option<i64>,
    ) -> Result<Vec<JudgeCallRow>, StoreError> {
        judgments::calls(&self.backend, judge_hash, a, b).await
    }

    async fn judgments_of_job(&self, job_id: i64) -> Result<Vec<JudgmentRow>, StoreError> {
        judgments::of_job(&self.backend, job_id).await
    }

    async fn judge_calls_of_job(&self, job_id: i64) -> Result<Vec<JudgeCallRow>, StoreError> {
        judgments::calls_of_job(&self.backend, job_id).await
    }

    async fn get_judgment(&self, id: i64) -> Result<Option<JudgmentRow>, StoreError> {
        judgments::get(&self.backend, id).await
    }

    async fn judgments_of_conversation(&self, id: i64) -> Result<Vec<JudgmentRow>, StoreError> {
        judgments::of_conversation(&self.backend, id).await
    }

    async fn judgments_made_by(
        &self,
        job_id: i64,
        after: i64,
        limit: u32,
    ) -> Result<Vec<JudgmentRow>, StoreError> {
        judgments::made_by(&self.backend, job_id, after, limit).await
    }

    async fn conversation_keys(&self, job_id: i64) -> Result<Vec<ConversationKey>, StoreError> {
        judgments::conversation_keys(&self.backend, job_id).await
    }
}
