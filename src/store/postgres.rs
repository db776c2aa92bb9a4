//! The Postgres backend: many workers, on many machines, sharing one database.
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
mod items;
mod messages;

use sqlx::postgres::{PgPool, PgRow};
use sqlx::{Postgres, Transaction};

pub use connect::is_postgres_url;

use super::sql::runs::{OnPool, Runs};
use super::sql::{Backend, SqlStore};
use crate::store::{ItemRow, NewItem, NewMessage, StoreError, UsageRow};

/// Starts the transactions that read a conversation and its rows: one
/// snapshot for all their queries, as SQLite's read transactions give.
const BEGIN_READ: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";

/// A [`crate::store::Store`] in a Postgres database.
pub type PostgresStore = SqlStore<PostgresBackend>;

/// The connection pool of one Postgres database.
#[derive(Debug, Clone)]
pub struct PostgresBackend {
    pool: PgPool,
}

impl PostgresStore {
    /// Open `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (or
    /// `postgresql://…`) and bring its schema up to date. Workers starting at
    /// once take turns migrating: the first applies the schema, the others
    /// find it applied.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Ok(SqlStore::new(PostgresBackend {
            pool: connect::open(url).await?,
        }))
    }

    /// Wait for running statements, then close every connection.
    pub async fn close(&self) {
        self.backend().pool.close().await;
    }
}

impl Backend for PostgresBackend {
    type Row = PgRow;
    type Tx = Transaction<'static, Postgres>;

    fn reader(&self) -> impl Runs<Row = PgRow> + '_ {
        OnPool(&self.pool)
    }

    fn writer(&self) -> impl Runs<Row = PgRow> + '_ {
        OnPool(&self.pool)
    }

    async fn begin_read(&self) -> Result<Self::Tx, StoreError> {
        Ok(self.pool.begin_with(BEGIN_READ).await?)
    }

    async fn begin_write(&self) -> Result<Self::Tx, StoreError> {
        Ok(self.pool.begin().await?)
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
