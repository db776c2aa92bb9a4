//! The SQLite backend: one database file in WAL mode with one writer.
//!
//! Every write goes through a pool of exactly one connection, so writers of
//! this process queue there (in order) instead of fighting over SQLITE_BUSY,
//! and every multi-statement write begins IMMEDIATE, taking the write lock up
//! front so it can never deadlock with another process upgrading a read.
//! Reads use a small pool of read-only connections, which WAL lets run
//! alongside the writer.

mod connect;
mod imports;
mod items;
mod messages;
mod multi_row;

use sqlx::Sqlite;

use super::sql::dialect::{BulkInsert, Dialect};
use super::sql::SqlStore;
use crate::store::{NewConversation, NewItem, StoreError};
use messages::{insert_messages, insert_usage, Tx};

/// A [`crate::store::Store`] in a SQLite database file (or in memory, for tests).
pub type SqliteStore = SqlStore<Sqlite>;

/// The file a `sqlite:` URL names, or `None` for an in-memory database.
pub fn database_file(url: &str) -> Result<Option<std::path::PathBuf>, StoreError> {
    connect::database_file(url)
}

impl SqliteStore {
    /// Open `sqlite://PATH` (relative or absolute; `sqlite::memory:` for a
    /// throwaway database), creating the file and its folder if missing, and
    /// bring its schema up to date.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let pools = connect::open(url).await?;
        Ok(SqlStore::new(pools.reader, pools.writer))
    }
}

impl Dialect for Sqlite {
    /// Deferred: a read takes no lock from the writer.
    const BEGIN_READ: &'static str = "BEGIN";
    const BEGIN_WRITE: &'static str = "BEGIN IMMEDIATE";
}

/// A conversation's rows and imported conversations, many rows per
/// multi-row INSERT (`messages`, `imports`).
impl BulkInsert for Sqlite {
    async fn insert_rows(tx: &mut Tx, id: i64, c: &NewConversation) -> Result<(), StoreError> {
        let rows: Vec<_> = (0..)
            .zip(&c.messages)
            .map(|(idx, m)| (id, idx, m))
            .collect();
        insert_messages(tx, &rows).await?;
        insert_usage(tx, id, &c.usage).await
    }

    async fn insert_imported(
        tx: &mut Tx,
        job_id: i64,
        batch: &[(NewItem, NewConversation)],
    ) -> Result<u64, StoreError> {
        imports::insert_imported(tx, job_id, batch).await
    }
}
