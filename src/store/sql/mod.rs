//! The one [`Store`] over both backends: each query is written once here,
//! in SQL both dialects read, and runs on the store's pools. A backend's
//! [`Dialect`] brings how its transactions begin and the statements it writes
//! its own way: leasing and bulk inserts. Every call is a `store.*` span at
//! debug level, with the ids it is about.

mod batches;
mod conversations;
pub(crate) mod dialect;
mod failed_items;
pub(crate) mod imports;
mod items;
mod job_personas;
mod jobs;
mod judgments;
mod proposals;
mod rollouts;
pub(crate) mod runs;
mod scenario_attempts;
pub(crate) mod statement;

use async_trait::async_trait;
use sqlx::{Database, Pool};

use dialect::{Dialect, Lease, Renewal};
use runs::Runs;

use crate::store::{
    BatchAnswer, BatchRequestRow, BatchRow, BatchUpdate, ConversationKey, ItemCounts, ItemRow,
    JobPersona, JobRow, JobStatus, JobSummary, JudgeCallRow, JudgmentRow, LatencyHistogram,
    NewBatchRequest, NewConversation, NewItem, NewJob, NewJudgment, NewProposal, ProposalRow,
    ScenarioAttempts, Store, StoreError, StoredConversation,
};

/// A [`Store`] in a database of `D`: [`crate::store::sqlite::SqliteStore`]
/// or [`crate::store::postgres::PostgresStore`].
#[derive(Debug)]
pub struct SqlStore<D: Database> {
    /// Where reads go (SQLite: read-only connections beside the writer).
    reader: Pool<D>,
    /// Where writes go (SQLite: the one writer connection).
    writer: Pool<D>,
}

impl<D: Database> Clone for SqlStore<D> {
    fn clone(&self) -> Self {
        SqlStore {
            reader: self.reader.clone(),
            writer: self.writer.clone(),
        }
    }
}

impl<D: Database> SqlStore<D> {
    pub(crate) fn new(reader: Pool<D>, writer: Pool<D>) -> Self {
        SqlStore { reader, writer }
    }
}

// The helpers below are private to `sql/`, as `Dialect` is to the crate.
#[allow(private_bounds)]
impl<D: Dialect> SqlStore<D> {
    fn reader(&self) -> impl Runs<Row = D::Row> + '_ {
        D::on_pool(&self.reader)
    }

    fn writer(&self) -> impl Runs<Row = D::Row> + '_ {
        D::on_pool(&self.writer)
    }

    async fn begin_read(&self) -> Result<D::Tx, StoreError> {
        D::begin(&self.reader, D::BEGIN_READ).await
    }

    async fn begin_write(&self) -> Result<D::Tx, StoreError> {
        D::begin(&self.writer, D::BEGIN_WRITE).await
    }
}

#[async_trait]
impl<D: Dialect> Store for SqlStore<D> {
    async fn close(&self) {
        // Readers first: SQLite checkpoints and removes the write-ahead log only
        // when the last connection to close can write, and the readers cannot.
        self.reader.close().await;
        self.writer.close().await;
    }

    #[tracing::instrument(name = "store.create_job", level = "debug", skip_all)]
    async fn create_job(&self, job: &NewJob) -> Result<JobRow, StoreError> {
        jobs::create(self, job).await
    }

    #[tracing::instrument(name = "store.get_job", level = "debug", skip_all, fields(id = id))]
    async fn get_job(&self, id: i64) -> Result<Option<JobRow>, StoreError> {
        jobs::get(self, id).await
    }

    #[tracing::instrument(name = "store.find_job_by_config_hash", level = "debug", skip_all)]
    async fn find_job_by_config_hash(&self, hash: &str) -> Result<Option<JobRow>, StoreError> {
        jobs::find_by_config_hash(self, hash).await
    }

    #[tracing::instrument(name = "store.find_job_by_name", level = "debug", skip_all)]
    async fn find_job_by_name(&self, name: &str) -> Result<Option<JobRow>, StoreError> {
        jobs::find_by_name(self, name).await
    }

    #[tracing::instrument(name = "store.all_jobs", level = "debug", skip_all)]
    async fn all_jobs(&self) -> Result<Vec<JobRow>, StoreError> {
        jobs::all(self).await
    }

    #[tracing::instrument(name = "store.open_jobs", level = "debug", skip_all)]
    async fn open_jobs(&self) -> Result<Vec<JobRow>, StoreError> {
        jobs::open(self).await
    }

    #[tracing::instrument(name = "store.set_job_status", level = "debug", skip_all, fields(id = id))]
    async fn set_job_status(&self, id: i64, status: JobStatus) -> Result<(), StoreError> {
        jobs::set_status(self, id, status).await
    }

    #[tracing::instrument(name = "store.add_items", level = "debug", skip_all, fields(job_id = job_id))]
    async fn add_items(&self, job_id: i64, items: &[NewItem]) -> Result<u64, StoreError> {
        if items.is_empty() {
            return Ok(0);
        }
        D::add_items(&self.writer, job_id, items).await
    }

    #[tracing::instrument(name = "store.lease_items", level = "debug", skip_all, fields(job_id = job_id))]
    async fn lease_items(
        &self,
        job_id: i64,
        owner: &str,
        limit: u32,
        lease_ms: i64,
    ) -> Result<Vec<ItemRow>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let lease = Lease {
            job_id,
            owner,
            limit,
            lease_ms,
        };
        D::lease_items(&self.writer, &lease).await
    }

    #[tracing::instrument(name = "store.renew_leases", level = "debug", skip_all)]
    async fn renew_leases(
        &self,
        owner: &str,
        item_ids: &[i64],
        lease_ms: i64,
    ) -> Result<u64, StoreError> {
        if item_ids.is_empty() {
            return Ok(0);
        }
        let renewal = Renewal {
            owner,
            item_ids,
            lease_ms,
        };
        D::renew_leases(&self.writer, &renewal).await
    }

    #[tracing::instrument(name = "store.complete_items", level = "debug", skip_all)]
    async fn complete_items(
        &self,
        owner: &str,
        batch: &[(i64, &NewConversation)],
    ) -> Result<Vec<Result<i64, StoreError>>, StoreError> {
        conversations::complete_items(self, owner, batch).await
    }

    #[tracing::instrument(name = "store.store_rollout", level = "debug", skip_all, fields(job_id = job_id))]
    async fn store_rollout(
        &self,
        job_id: i64,
        item: &NewItem,
        conversation: &NewConversation,
    ) -> Result<Option<i64>, StoreError> {
        rollouts::store_rollout(self, job_id, item, conversation).await
    }

    #[tracing::instrument(name = "store.store_imported", level = "debug", skip_all, fields(job_id = job_id))]
    async fn store_imported(
        &self,
        job_id: i64,
        batch: &[(NewItem, NewConversation)],
    ) -> Result<u64, StoreError> {
        if batch.is_empty() {
            return Ok(0);
        }
        imports::store_imported(self, job_id, batch).await
    }

    #[tracing::instrument(name = "store.finish_item", level = "debug", skip_all, fields(item_id = item_id))]
    async fn finish_item(&self, item_id: i64, owner: &str) -> Result<(), StoreError> {
        items::finish(self, item_id, owner).await
    }

    #[tracing::instrument(name = "store.fail_item", level = "debug", skip_all, fields(item_id = item_id))]
    async fn fail_item(
        &self,
        item_id: i64,
        owner: &str,
        class: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        items::fail(self, item_id, owner, class, message).await
    }

    #[tracing::instrument(name = "store.reset_failed_items", level = "debug", skip_all, fields(job_id = job_id))]
    async fn reset_failed_items(&self, job_id: i64) -> Result<u64, StoreError> {
        items::reset_failed(self, job_id).await
    }

    #[tracing::instrument(name = "store.release_items", level = "debug", skip_all, fields(job_id = job_id))]
    async fn release_items(&self, job_id: i64, owner: &str) -> Result<u64, StoreError> {
        items::release(self, job_id, owner).await
    }

    #[tracing::instrument(name = "store.item_errors", level = "debug", skip_all, fields(job_id = job_id))]
    async fn item_errors(&self, job_id: i64, limit: u32) -> Result<Vec<(String, i64)>, StoreError> {
        items::errors(self, job_id, limit).await
    }

    #[tracing::instrument(name = "store.item_counts", level = "debug", skip_all, fields(job_id = job_id))]
    async fn item_counts(&self, job_id: i64) -> Result<ItemCounts, StoreError> {
        items::counts(self, job_id).await
    }

    #[tracing::instrument(name = "store.get_conversation", level = "debug", skip_all, fields(id = id))]
    async fn get_conversation(&self, id: i64) -> Result<Option<StoredConversation>, StoreError> {
        conversations::get(self, id).await
    }

    #[tracing::instrument(name = "store.conversations_page", level = "debug", skip_all, fields(job_id = job_id))]
    async fn conversations_page(
        &self,
        job_id: i64,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<StoredConversation>, StoreError> {
        conversations::page(self, job_id, after_id, limit).await
    }

    #[tracing::instrument(name = "store.replace_user_checks", level = "debug", skip_all)]
    async fn replace_user_checks(
        &self,
        checks: &[(i64, serde_json::Value)],
    ) -> Result<u64, StoreError> {
        conversations::replace_user_checks(self, checks).await
    }

    #[tracing::instrument(name = "store.scenario_rewards", level = "debug", skip_all, fields(job_id = job_id))]
    async fn scenario_rewards(&self, job_id: i64) -> Result<Vec<(String, f64)>, StoreError> {
        conversations::scenario_rewards(self, job_id).await
    }

    #[tracing::instrument(name = "store.message_tokens", level = "debug", skip_all, fields(id = id))]
    async fn message_tokens(
        &self,
        id: i64,
    ) -> Result<Vec<(i64, crate::token_ids::TokenIds)>, StoreError> {
        conversations::message_tokens(self, id).await
    }

    #[tracing::instrument(name = "store.put_job_personas", level = "debug", skip_all, fields(job_id = job_id))]
    async fn put_job_personas(
        &self,
        job_id: i64,
        personas: &[JobPersona],
    ) -> Result<u64, StoreError> {
        job_personas::put(self, job_id, personas).await
    }

    #[tracing::instrument(name = "store.job_personas", level = "debug", skip_all, fields(job_id = job_id))]
    async fn job_personas(&self, job_id: i64) -> Result<Vec<JobPersona>, StoreError> {
        job_personas::of_job(self, job_id).await
    }

    #[tracing::instrument(name = "store.job_summary", level = "debug", skip_all, fields(job_id = job_id))]
    async fn job_summary(&self, job_id: i64) -> Result<JobSummary, StoreError> {
        conversations::summary(self, job_id).await
    }

    #[tracing::instrument(name = "store.call_latencies", level = "debug", skip_all, fields(job_id = job_id))]
    async fn call_latencies(&self, job_id: i64) -> Result<Vec<LatencyHistogram>, StoreError> {
        conversations::latencies(&mut self.reader(), job_id).await
    }

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

    #[tracing::instrument(name = "store.unfinished_item_keys", level = "debug", skip_all, fields(job_id = job_id))]
    async fn unfinished_item_keys(&self, job_id: i64) -> Result<Vec<String>, StoreError> {
        items::unfinished_keys(self, job_id).await
    }

    #[tracing::instrument(name = "store.failed_items", level = "debug", skip_all, fields(job_id = job_id))]
    async fn failed_items(&self, job_id: i64) -> Result<Vec<ItemRow>, StoreError> {
        failed_items::of_job(self, job_id).await
    }

    #[tracing::instrument(name = "store.create_batch", level = "debug", skip_all, fields(job_id = job_id))]
    async fn create_batch(
        &self,
        job_id: i64,
        endpoint: &str,
        requests: &[NewBatchRequest],
    ) -> Result<Option<(i64, Vec<String>)>, StoreError> {
        batches::create(self, job_id, endpoint, requests).await
    }

    #[tracing::instrument(name = "store.update_batch", level = "debug", skip_all, fields(id = id))]
    async fn update_batch(&self, id: i64, update: &BatchUpdate) -> Result<(), StoreError> {
        batches::update(self, id, update).await
    }

    #[tracing::instrument(name = "store.delete_batch", level = "debug", skip_all, fields(id = id))]
    async fn delete_batch(&self, id: i64) -> Result<(), StoreError> {
        batches::delete(self, id).await
    }

    #[tracing::instrument(name = "store.job_batches", level = "debug", skip_all, fields(job_id = job_id))]
    async fn job_batches(&self, job_id: i64) -> Result<Vec<BatchRow>, StoreError> {
        batches::of_job(self, job_id).await
    }

    #[tracing::instrument(name = "store.batch_requests_of_job", level = "debug", skip_all, fields(job_id = job_id))]
    async fn batch_requests_of_job(&self, job_id: i64) -> Result<Vec<BatchRequestRow>, StoreError> {
        batches::requests_of_job(self, job_id).await
    }

    #[tracing::instrument(name = "store.ingest_batch", level = "debug", skip_all, fields(id = id))]
    async fn ingest_batch(&self, id: i64, answers: &[BatchAnswer]) -> Result<(), StoreError> {
        batches::ingest(self, id, answers).await
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

    #[tracing::instrument(name = "store.conversation_keys", level = "debug", skip_all, fields(job_id = job_id))]
    async fn conversation_keys(&self, job_id: i64) -> Result<Vec<ConversationKey>, StoreError> {
        judgments::conversation_keys(self, job_id).await
    }

    #[tracing::instrument(name = "store.complete_proposal", level = "debug", skip_all, fields(item_id = item_id))]
    async fn complete_proposal(
        &self,
        item_id: i64,
        owner: &str,
        proposal: &NewProposal,
    ) -> Result<i64, StoreError> {
        proposals::complete(self, item_id, owner, proposal).await
    }

    #[tracing::instrument(name = "store.proposals_page", level = "debug", skip_all, fields(job_id = job_id))]
    async fn proposals_page(
        &self,
        job_id: i64,
        after: i64,
        limit: u32,
    ) -> Result<Vec<ProposalRow>, StoreError> {
        proposals::page(self, job_id, after, limit).await
    }

    #[tracing::instrument(name = "store.scenario_attempts", level = "debug", skip_all, fields(job_id = job_id))]
    async fn scenario_attempts(
        &self,
        job_id: i64,
        success_reward: f64,
    ) -> Result<Vec<ScenarioAttempts>, StoreError> {
        scenario_attempts::of_job(self, job_id, success_reward).await
    }
}
