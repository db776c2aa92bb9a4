//! The SQLite backend: one database file in WAL mode with one writer.
//!
//! Every write goes through a pool of exactly one connection, so writers of
//! this process queue there (in order) instead of fighting over SQLITE_BUSY,
//! and every multi-statement write begins IMMEDIATE, taking the write lock up
//! front so it can never deadlock with another process upgrading a read.
//! Reads use a small pool of read-only connections, which WAL lets run
//! alongside the writer.

mod connect;
mod items;
mod messages;
mod multi_row;

use sqlx::sqlite::{SqlitePool, SqliteRow};
use sqlx::{Sqlite, Transaction};

use super::sql::runs::{OnPool, Runs};
use super::sql::{Backend, SqlStore};
use crate::store::{ItemRow, NewItem, NewMessage, StoreError, UsageRow};

/// Starts every write transaction.
const BEGIN_WRITE: &str = "BEGIN IMMEDIATE";

/// A [`crate::store::Store`] in a SQLite database file (or in memory, for tests).
pub type SqliteStore = SqlStore<SqliteBackend>;

/// The writer and reader pools of one SQLite database.
#[derive(Debug, Clone)]
pub struct SqliteBackend {
    writer: SqlitePool,
    reader: SqlitePool,
}

impl SqliteStore {
    /// Open `sqlite://PATH` (relative or absolute; `sqlite::memory:` for a
    /// throwaway database), creating the file and its folder if missing, and
    /// bring its schema up to date.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let pools = connect::open(url).await?;
        Ok(SqlStore::new(SqliteBackend {
            writer: pools.writer,
            reader: pools.reader,
        }))
    }

    /// Wait for queued writes, then close every connection.
    pub async fn close(&self) {
        self.backend().writer.close().await;
        self.backend().reader.close().await;
    }
}

impl Backend for SqliteBackend {
    type Row = SqliteRow;
    type Tx = Transaction<'static, Sqlite>;

    fn reader(&self) -> impl Runs<Row = SqliteRow> + '_ {
        OnPool(&self.reader)
    }

    fn writer(&self) -> impl Runs<Row = SqliteRow> + '_ {
        OnPool(&self.writer)
    }

    async fn begin_read(&self) -> Result<Self::Tx, StoreError> {
        Ok(self.reader.begin().await?)
    }

    async fn begin_write(&self) -> Result<Self::Tx, StoreError> {
        Ok(self.writer.begin_with(BEGIN_WRITE).await?)
    }

    async fn add_items(&self, job_id: i64, items: &[NewItem]) -> Result<u64, StoreError> {
        items::add(&self.writer, job_id, items).await
    }

    async fn lease_items(
        &self,
        job_id: i64,
        owner: &str,
        limit: u32,
        lease_ms: i64,
    ) -> Result<Vec<ItemRow>, StoreError> {
        items::lease(&self.writer, job_id, owner, limit, lease_ms).await
    }

    async fn renew_leases(
        &self,
        owner: &str,
        item_ids: &[i64],
        lease_ms: i64,
    ) -> Result<u64, StoreError> {
        items::renew(&self.writer, owner, item_ids, lease_ms).await
    }

    async fn insert_messages(
        tx: &mut Self::Tx,
        conversation_id: i64,
        messages: &[NewMessage],
    ) -> Result<(), StoreError> {
        messages::insert_messages(tx, conversation_id, messages).await
    }

    async fn insert_usage(
        tx: &mut Self::Tx,
        conversation_id: i64,
        usage: &[UsageRow],
    ) -> Result<(), StoreError> {
        messages::insert_usage(tx, conversation_id, usage).await
    }
}
