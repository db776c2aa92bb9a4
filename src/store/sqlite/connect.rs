//! Opening a SQLite database: URL, pragmas, the writer and reader pools, and
//! the embedded migrations.

use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::store::{migrations, StoreError};

/// How long a statement waits for a lock held by another process on the same
/// file (within this process, writers queue for the one writer connection).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a write waits for its turn on the writer connection. Each write
/// takes milliseconds, so this is only reached when something is stuck.
const WRITER_QUEUE_TIMEOUT: Duration = Duration::from_secs(120);
/// Read connections. WAL lets them read while the writer writes.
const READERS: u32 = 4;

/// The two pools of an opened database.
pub(super) struct Pools {
    /// Exactly one connection: every write queues here.
    pub writer: SqlitePool,
    /// Read-only connections; for an in-memory database, the writer itself.
    pub reader: SqlitePool,
}

pub(super) async fn open(url: &str) -> Result<Pools, StoreError> {
    let Some(location) = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
    else {
        return Err(StoreError::UnsupportedUrl(url.to_string()));
    };
    let open_error = |source| StoreError::Open {
        url: url.to_string(),
        source,
    };
    let in_memory = location.starts_with(":memory:") || location.contains("mode=memory");

    let options = SqliteConnectOptions::from_str(url)
        .map_err(open_error)?
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT)
        .synchronous(SqliteSynchronous::Normal);

    if !in_memory {
        if let Some(parent) = options.get_filename().parent() {
            if !parent.as_os_str().is_empty() {
                tokio::fs::create_dir_all(parent)
                    .await
                    .map_err(|e| open_error(sqlx::Error::Io(e)))?;
            }
        }
    }

    // An in-memory database lives as long as its last connection, so the
    // writer keeps its one connection for the life of the pool.
    let writer_options = if in_memory {
        options.clone()
    } else {
        options
            .clone()
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
    };
    let writer = SqlitePoolOptions::new()
        .max_connections(1)
        .min_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .acquire_timeout(WRITER_QUEUE_TIMEOUT)
        .connect_with(writer_options)
        .await
        .map_err(open_error)?;

    migrator().run(&writer).await?;

    let reader = if in_memory {
        writer.clone()
    } else {
        SqlitePoolOptions::new()
            .max_connections(READERS)
            .connect_with(options.read_only(true))
            .await
            .map_err(open_error)?
    };
    Ok(Pools { writer, reader })
}

/// The file `url` names, or `None` for an in-memory database.
pub(super) fn database_file(url: &str) -> Result<Option<std::path::PathBuf>, StoreError> {
    let location = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .ok_or_else(|| StoreError::UnsupportedUrl(url.to_string()))?;
    if location.starts_with(":memory:") || location.contains("mode=memory") {
        return Ok(None);
    }
    let options = SqliteConnectOptions::from_str(url).map_err(|source| StoreError::Open {
        url: url.to_string(),
        source,
    })?;
    Ok(Some(options.get_filename().to_path_buf()))
}

/// The migrations of `migrations/sqlite/`, embedded in the binary.
fn migrator() -> Migrator {
    migrations::embedded!(
        "sqlite": "0001_init", "0002_judgments", "0003_judgment_per_judge_name",
        "0004_user_flags", "0005_proposals", "0006_batches", "0007_message_tokens",
        "0008_job_personas",
        "0009_evaluations"
    )
}
