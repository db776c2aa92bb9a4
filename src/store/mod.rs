//! Storage of jobs, items and conversations behind one [`Store`] trait,
//! implemented once over SQL both dialects read (`sql/`), on a backend chosen
//! by the database URL (`sqlite/`, `postgres/`: leasing and bulk inserts).

pub mod batches;
pub mod browse;
pub(crate) mod decode;
pub mod job_personas;
pub mod judgments;
mod migrations;
pub mod postgres;
pub mod proposals;
pub mod rows;
pub mod scenario_attempts;
pub mod sql;
pub mod sqlite;
pub mod tokens;

use std::sync::Arc;

use async_trait::async_trait;

pub use batches::*;
pub use job_personas::JobPersona;
pub use judgments::*;
pub use proposals::*;
pub use rows::*;
pub use scenario_attempts::ScenarioAttempts;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "database URL '{0}' is not supported: use sqlite://PATH (e.g. sqlite://sparring.db) \
         or postgres://USER@HOST:PORT/DATABASE (postgresql:// works too)"
    )]
    UnsupportedUrl(String),
    #[error("cannot open database {url}")]
    Open {
        url: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("database migration failed")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("database error")]
    Sql(#[from] sqlx::Error),
    #[error("item {item_id} is not leased by '{owner}' any more (lease expired or taken over); its result was not stored")]
    LeaseLost { item_id: i64, owner: String },
    #[error(
        "database {path} does not exist; check --database (or SPARRING_DATABASE): this command \
         only reads, so it creates no database"
    )]
    Missing { path: String },
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
}

/// Jobs, items (lease / complete / fail) and conversations.
#[async_trait]
pub trait Store: Send + Sync {
    /// Waits for queued writes, then closes every connection (a SQLite file's
    /// `-wal` and `-shm` companions go when its last connection does).
    async fn close(&self);
    async fn create_job(&self, job: &NewJob) -> Result<JobRow, StoreError>;
    async fn get_job(&self, id: i64) -> Result<Option<JobRow>, StoreError>;
    /// The newest job with this config hash, if any.
    async fn find_job_by_config_hash(&self, hash: &str) -> Result<Option<JobRow>, StoreError>;
    /// The newest job with this name, if any.
    async fn find_job_by_name(&self, name: &str) -> Result<Option<JobRow>, StoreError>;
    /// Every job, newest first (the service's job list).
    async fn all_jobs(&self) -> Result<Vec<JobRow>, StoreError>;
    /// Jobs that may still have work (pending or running), oldest first.
    async fn open_jobs(&self) -> Result<Vec<JobRow>, StoreError>;
    async fn set_job_status(&self, id: i64, status: JobStatus) -> Result<(), StoreError>;

    /// Add items to a job; keys that already exist are left as they are.
    /// Returns how many were new.
    async fn add_items(&self, job_id: i64, items: &[NewItem]) -> Result<u64, StoreError>;
    /// Lease up to `limit` items that are pending, or leased with an expired
    /// lease, for `lease_ms` milliseconds. Increments their attempts.
    async fn lease_items(
        &self,
        job_id: i64,
        owner: &str,
        limit: u32,
        lease_ms: i64,
    ) -> Result<Vec<ItemRow>, StoreError>;
    /// A worker's heartbeat: move the expiry of those of `item_ids` that
    /// `owner` still holds to now + `lease_ms`, so nobody takes them over while
    /// their conversations run. Items leased by someone else, or no longer
    /// leased (done, failed, released), are left as they are. A lease that
    /// expired but was not taken over is still `owner`'s and is renewed.
    /// Returns how many were renewed: fewer than asked means some were lost.
    async fn renew_leases(
        &self,
        owner: &str,
        item_ids: &[i64],
        lease_ms: i64,
    ) -> Result<u64, StoreError>;
    /// In one transaction: check `owner` still holds the lease, store the
    /// conversation with its messages and usage, mark the item done.
    /// Returns the conversation id.
    async fn complete_item(
        &self,
        item_id: i64,
        owner: &str,
        conversation: &NewConversation,
    ) -> Result<i64, StoreError> {
        let mut results = self
            .complete_items(owner, &[(item_id, conversation)])
            .await?;
        results.pop().unwrap_or_else(|| {
            Err(StoreError::Corrupt(
                "complete_items returned no result for one item".into(),
            ))
        })
    }
    /// [`Store::complete_item`] for many items in one transaction (a group
    /// commit): each `(leased item id, conversation)` is stored with its
    /// messages and its item marked done, or is `Err(LeaseLost)` on its own
    /// when `owner` no longer holds that item. Any other error rolls the
    /// whole batch back and is returned as the outer error.
    async fn complete_items(
        &self,
        owner: &str,
        batch: &[(i64, &NewConversation)],
    ) -> Result<Vec<Result<i64, StoreError>>, StoreError>;
    /// In one transaction, each `(item, conversation)` of an import job
    /// whose item key the job does not hold yet: the item, done at once,
    /// and its conversation with its messages and user checks. A key the
    /// job holds is left as it is, so importing the same conversations again
    /// (or after a kill) stores each once. Returns how many were new.
    async fn store_imported(
        &self,
        job_id: i64,
        batch: &[(NewItem, NewConversation)],
    ) -> Result<u64, StoreError>;
    /// In one transaction: a new item of job `job_id`, done at once, and
    /// its conversation with messages, usage and user checks (a rollout an
    /// agent server made). `None`, and nothing written, when the job holds
    /// the item's key already; else the conversation id.
    async fn store_rollout(
        &self,
        job_id: i64,
        item: &NewItem,
        conversation: &NewConversation,
    ) -> Result<Option<i64>, StoreError>;
    /// Mark a leased item done without storing a conversation: a judging
    /// item, whose judgments are stored on their own. `LeaseLost` when
    /// `owner` no longer holds it.
    async fn finish_item(&self, item_id: i64, owner: &str) -> Result<(), StoreError>;
    /// Mark a leased item failed with an error class and message.
    async fn fail_item(
        &self,
        item_id: i64,
        owner: &str,
        class: &str,
        message: &str,
    ) -> Result<(), StoreError>;
    /// Put failed items of a job back to pending (for `--retry-failed`).
    async fn reset_failed_items(&self, job_id: i64) -> Result<u64, StoreError>;
    /// Put the items `owner` holds back to pending, e.g. when a run is cancelled,
    /// so they are redone at once instead of after their lease expires.
    async fn release_items(&self, job_id: i64, owner: &str) -> Result<u64, StoreError>;
    async fn item_counts(&self, job_id: i64) -> Result<ItemCounts, StoreError>;
    /// The commonest `class: message` errors of a job's failed items, with
    /// how many items failed with each, commonest first, at most `limit`.
    async fn item_errors(&self, job_id: i64, limit: u32) -> Result<Vec<(String, i64)>, StoreError>;

    /// Replace the user checks of each `(conversation id, checks)` (a
    /// `user_checks::UserChecks` as JSON), in one transaction: `sparring
    /// recheck` writes the current version's over an older one's.
    async fn replace_user_checks(
        &self,
        checks: &[(i64, serde_json::Value)],
    ) -> Result<u64, StoreError>;

    async fn get_conversation(&self, id: i64) -> Result<Option<StoredConversation>, StoreError>;
    /// Conversations of a job with id > `after_id`, in id order, at most `limit`.
    async fn conversations_page(
        &self,
        job_id: i64,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<StoredConversation>, StoreError>;
    /// `(scenario id, reward)` of each of job `job_id`'s conversations with a
    /// reward, by scenario, then in id order: the rollout groups' rewards.
    async fn scenario_rewards(&self, job_id: i64) -> Result<Vec<(String, f64)>, StoreError>;
    /// The token ids and log probabilities stored with conversation `id`'s
    /// messages (policy generations whose server returned them), as
    /// `(message idx, tokens)` in idx order; empty when it has none.
    async fn message_tokens(
        &self,
        id: i64,
    ) -> Result<Vec<(i64, crate::token_ids::TokenIds)>, StoreError>;
    /// In one transaction, those of `personas` that job `job_id` does not
    /// hold yet (each persona's row is stored once per job: writing them
    /// again, for a resumed job or an agent server's, changes nothing).
    /// Returns how many were new.
    async fn put_job_personas(
        &self,
        job_id: i64,
        personas: &[JobPersona],
    ) -> Result<u64, StoreError>;
    /// Job `job_id`'s personas with their attributes, by persona id; empty
    /// for a job that stored none (an import job, or one stored before them).
    async fn job_personas(&self, job_id: i64) -> Result<Vec<JobPersona>, StoreError>;
    /// Counts, usage and model-call latencies of a job's stored conversations.
    async fn job_summary(&self, job_id: i64) -> Result<JobSummary, StoreError>;
    /// Latencies of the model calls in a job's stored conversations, per role,
    /// as histograms: a few rows per distinct latency, however many calls.
    async fn call_latencies(&self, job_id: i64) -> Result<Vec<LatencyHistogram>, StoreError>;

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
    /// Conversation ids of a job with their scenario, persona and sample, by
    /// id: how two jobs' conversations are matched for pairwise judging.
    async fn conversation_keys(&self, job_id: i64) -> Result<Vec<ConversationKey>, StoreError>;
    /// Keys of a job's items that are pending or leased, by id.
    async fn unfinished_item_keys(&self, job_id: i64) -> Result<Vec<String>, StoreError>;
    /// A job's failed items, by id, each with its last error.
    async fn failed_items(&self, job_id: i64) -> Result<Vec<ItemRow>, StoreError>;

    /// In one transaction: store a batch (status `preparing`) with those of
    /// `requests` whose custom id the job has not stored yet. Returns the
    /// batch's id and the custom ids stored, or `None` (and no batch) when
    /// every one was already stored (another process planned them).
    async fn create_batch(
        &self,
        job_id: i64,
        endpoint: &str,
        requests: &[NewBatchRequest],
    ) -> Result<Option<(i64, Vec<String>)>, StoreError>;
    /// Store what the provider said of a batch (its ids, its status).
    async fn update_batch(&self, id: i64, update: &BatchUpdate) -> Result<(), StoreError>;
    /// Remove a batch nothing of which was sent, with its requests.
    async fn delete_batch(&self, id: i64) -> Result<(), StoreError>;
    /// A job's batches, by id.
    async fn job_batches(&self, job_id: i64) -> Result<Vec<BatchRow>, StoreError>;
    /// A job's batch requests, by id.
    async fn batch_requests_of_job(&self, job_id: i64) -> Result<Vec<BatchRequestRow>, StoreError>;
    /// In one transaction: record what became of a batch's requests (only
    /// those still `submitted` change), store their judge calls, and set the
    /// batch's status to `ingested`.
    async fn ingest_batch(&self, id: i64, answers: &[BatchAnswer]) -> Result<(), StoreError>;

    /// In one transaction: check `owner` still holds the synthesis item,
    /// mark it done and store its proposal (replacing one with the same
    /// index). `LeaseLost`, and nothing stored, when `owner` no longer holds it.
    async fn complete_proposal(
        &self,
        item_id: i64,
        owner: &str,
        proposal: &NewProposal,
    ) -> Result<i64, StoreError>;
    /// Proposals of a synthesis job with an index above `after`, in index
    /// order, at most `limit`.
    async fn proposals_page(
        &self,
        job_id: i64,
        after: i64,
        limit: u32,
    ) -> Result<Vec<ProposalRow>, StoreError>;
    /// Per scenario of a job, sorted by id: its items by how far they got,
    /// a pass being a conversation with reward ≥ `success_reward`.
    async fn scenario_attempts(
        &self,
        job_id: i64,
        success_reward: f64,
    ) -> Result<Vec<ScenarioAttempts>, StoreError>;
}

/// Open the store a URL names (`sqlite://PATH`, `postgres://…` or
/// `postgresql://…`), creating (SQLite) and migrating it.
pub async fn open(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    if url.starts_with("sqlite:") {
        return Ok(Arc::new(sqlite::SqliteStore::open(url).await?));
    }
    if postgres::is_postgres_url(url) {
        return Ok(Arc::new(postgres::PostgresStore::open(url).await?));
    }
    Err(StoreError::UnsupportedUrl(url.to_string()))
}

/// For commands that only read what is stored (`show`, `stats`, `export`,
/// `judge`, `run --resume`), before [`open`]: a SQLite file that does not
/// exist is [`StoreError::Missing`], so that nothing is created. (Opening a
/// Postgres database never creates it.)
pub fn must_exist(url: &str) -> Result<(), StoreError> {
    if !url.starts_with("sqlite:") {
        return Ok(());
    }
    match sqlite::database_file(url)? {
        Some(path) if !path.exists() => Err(StoreError::Missing {
            path: path.display().to_string(),
        }),
        _ => Ok(()),
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
