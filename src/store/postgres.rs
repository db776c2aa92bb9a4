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

use sqlx::Postgres;

pub use connect::is_postgres_url;

use super::sql::dialect::Dialect;
use super::sql::SqlStore;
use crate::store::StoreError;

/// A [`crate::store::Store`] in a Postgres database.
pub type PostgresStore = SqlStore<Postgres>;

impl PostgresStore {
    /// Open `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (or
    /// `postgresql://…`) and bring its schema up to date. Workers starting at
    /// once take turns migrating: the first applies the schema, the others
    /// find it applied.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let pool = connect::open(url).await?;
        Ok(SqlStore::new(pool.clone(), pool))
    }
}

impl Dialect for Postgres {
    /// One snapshot for all the reads of a conversation and its rows, as
    /// SQLite's read transactions give.
    const BEGIN_READ: &'static str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";
    const BEGIN_WRITE: &'static str = "BEGIN";
}
