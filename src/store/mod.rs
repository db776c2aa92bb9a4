//! Storage of jobs, items and conversations behind one [`Store`] trait made
//! of one trait per concern (`traits/`),
//! implemented once over SQL both dialects read (`sql/`), on a backend chosen
//! by the database URL (`sqlite/`, `postgres/`: leasing and bulk inserts).

pub mod batches;
pub mod browse;
pub(crate) mod decode;
pub mod evaluations;
pub mod job_personas;
pub mod judgments;
mod migrations;
pub mod pages;
pub mod postgres;
pub mod proposals;
pub mod rows;
pub mod scenario_attempts;
pub mod sql;
pub mod sqlite;
pub mod tokens;
mod traits;

use std::sync::Arc;

use async_trait::async_trait;

pub use batches::*;
pub use evaluations::{EvaluationPolicy, EvaluationRow};
pub use job_personas::JobPersona;
pub use judgments::*;
pub use proposals::*;
pub use rows::*;
pub use scenario_attempts::ScenarioAttempts;
pub use traits::*;

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

/// Every concern's store at once: what a command opens at the edge. Callers
/// take the narrowest of the traits it is made of ([`JobStore`],
/// [`ItemStore`], …) that they need.
#[async_trait]
pub trait Store:
    EvaluationStore
    + JobStore
    + ItemStore
    + ConversationStore
    + ImportStore
    + PersonaStore
    + TokenStore
    + JudgmentStore
    + BatchStore
    + ProposalStore
{
    /// Waits for queued writes, then closes every connection (a SQLite file's
    /// `-wal` and `-shm` companions go when its last connection does).
    async fn close(&self);
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
