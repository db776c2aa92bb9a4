//! The Postgres store: many workers, on many machines, sharing one database.
//!
//! Every operation is one statement or one transaction on a pooled
//! connection, so workers never hold a connection while a conversation runs.
//! Leasing locks candidate items with `FOR UPDATE SKIP LOCKED` while it scans
//! them, so concurrent leasers pass each other by instead of queueing, and no
//! two of them ever lease the same item.
//!
//! Times are read from the database server's clock, not the worker's: lease
//! expiries are set and compared by one clock, so a worker whose clock runs
//! ahead cannot take over live leases. They are still unix milliseconds, as in
//! SQLite.

mod connect;
mod conversations;
mod items;
mod jobs;
mod judgments;

// Children read rows with the shared decoders as `super::decode`.
use super::decode;
use async_trait::async_trait;
use sqlx::postgres::PgPool;

pub use connect::is_postgres_url;

use crate::store::{
    ConversationKey, ItemCounts, ItemRow, JobRow, JobStatus, JobSummary, JudgeCallRow, JudgmentRow,
    LatencyHistogram, NewConversation, NewItem, NewJob, NewJudgment, Store, StoreError,
    StoredConversation,
};

/// The server's clock in unix milliseconds, fixed for the whole statement (a
/// macro, so it can be spliced into `concat!`ed SQL).
macro_rules! server_now_ms {
    () => {
        "FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT"
    };
}
use server_now_ms;

/// A [`Store`] in a Postgres database.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
}

impl PostgresStore {
    /// Open `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (or
    /// `postgresql://…`) and bring its schema up to date. Workers starting at
    /// once take turns migrating: the first applies the schema, the others
    /// find it applied.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Ok(PostgresStore {
            pool: connect::open(url).await?,
        })
    }

    /// Wait for running statements, then close every connection.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

#[async_trait]
impl Store for PostgresStore {
    async fn create_job(&self, job: &NewJob) -> Result<JobRow, StoreError> {
        jobs::create(&self.pool, job).await
    }

    async fn get_job(&self, id: i64) -> Result<Option<JobRow>, StoreError> {
        jobs::get(&self.pool, id).await
    }

    async fn find_job_by_config_hash(&self, hash: &str) -> Result<Option<JobRow>, StoreError> {
        jobs::find_by_config_hash(&self.pool, hash).await
    }

    async fn find_job_by_name(&self, name: &str) -> Result<Option<JobRow>, StoreError> {
        jobs::find_by_name(&self.pool, name).await
    }

    async fn all_jobs(&self) -> Result<Vec<JobRow>, StoreError> {
        jobs::all(&self.pool).await
    }

    async fn open_jobs(&self) -> Result<Vec<JobRow>, StoreError> {
        jobs::open(&self.pool).await
    }

    async fn set_job_status(&self, id: i64, status: JobStatus) -> Result<(), StoreError> {
        jobs::set_status(&self.pool, id, status).await
    }

    async fn add_items(&self, job_id: i64, items: &[NewItem]) -> Result<u64, StoreError> {
        items::add(&self.pool, job_id, items).await
    }

    async fn lease_items(
        &self,
        job_id: i64,
        owner: &str,
        limit: u32,
        lease_ms: i64,
    ) -> Result<Vec<ItemRow>, StoreError> {
        items::lease(&self.pool, job_id, owner, limit, lease_ms).await
    }

    async fn renew_leases(
        &self,
        owner: &str,
        item_ids: &[i64],
        lease_ms: i64,
    ) -> Result<u64, StoreError> {
        items::renew(&self.pool, owner, item_ids, lease_ms).await
    }

    async fn complete_items(
        &self,
        owner: &str,
        batch: &[(i64, &NewConversation)],
    ) -> Result<Vec<Result<i64, StoreError>>, StoreError> {
        conversations::complete_items(&self.pool, owner, batch).await
    }

    async fn finish_item(&self, item_id: i64, owner: &str) -> Result<(), StoreError> {
        items::finish(&self.pool, item_id, owner).await
    }

    async fn fail_item(
        &self,
        item_id: i64,
        owner: &str,
        class: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        items::fail(&self.pool, item_id, owner, class, message).await
    }

    async fn reset_failed_items(&self, job_id: i64) -> Result<u64, StoreError> {
        items::reset_failed(&self.pool, job_id).await
    }

    async fn release_items(&self, job_id: i64, owner: &str) -> Result<u64, StoreError> {
        items::release(&self.pool, job_id, owner).await
    }

    async fn item_counts(&self, job_id: i64) -> Result<ItemCounts, StoreError> {
        items::counts(&self.pool, job_id).await
    }

    async fn get_conversation(&self, id: i64) -> Result<Option<StoredConversation>, StoreError> {
        conversations::get(&self.pool, id).await
    }

    async fn conversations_page(
        &self,
        job_id: i64,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<StoredConversation>, StoreError> {
        conversations::page(&self.pool, job_id, after_id, limit).await
    }

    async fn job_summary(&self, job_id: i64) -> Result<JobSummary, StoreError> {
        conversations::summary(&self.pool, job_id).await
    }

    async fn call_latencies(&self, job_id: i64) -> Result<Vec<LatencyHistogram>, StoreError> {
        conversations::latencies(&self.pool, job_id).await
    }

    async fn save_judgment(&self, judgment: &NewJudgment) -> Result<i64, StoreError> {
        judgments::save(&self.pool, judgment).await
    }

    async fn find_judgment(
        &self,
        judge_hash: &str,
        a: i64,
        b: Option<i64>,
    ) -> Result<Option<JudgmentRow>, StoreError> {
        judgments::find(&self.pool, judge_hash, a, b).await
    }

    async fn judge_calls(
        &self,
        judge_hash: &str,
        a: i64,
        b: Option<i64>,
    ) -> Result<Vec<JudgeCallRow>, StoreError> {
        judgments::calls(&self.pool, judge_hash, a, b).await
    }

    async fn judgments_of_job(&self, job_id: i64) -> Result<Vec<JudgmentRow>, StoreError> {
        judgments::of_job(&self.pool, job_id).await
    }

    async fn judge_calls_of_job(&self, job_id: i64) -> Result<Vec<JudgeCallRow>, StoreError> {
        judgments::calls_of_job(&self.pool, job_id).await
    }

    async fn get_judgment(&self, id: i64) -> Result<Option<JudgmentRow>, StoreError> {
        judgments::get(&self.pool, id).await
    }

    async fn judgments_of_conversation(&self, id: i64) -> Result<Vec<JudgmentRow>, StoreError> {
        judgments::of_conversation(&self.pool, id).await
    }

    async fn judgments_made_by(
        &self,
        job_id: i64,
        after: i64,
        limit: u32,
    ) -> Result<Vec<JudgmentRow>, StoreError> {
        judgments::made_by(&self.pool, job_id, after, limit).await
    }

    async fn conversation_keys(&self, job_id: i64) -> Result<Vec<ConversationKey>, StoreError> {
        judgments::conversation_keys(&self.pool, job_id).await
    }
}
