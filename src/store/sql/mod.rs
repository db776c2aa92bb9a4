//! The one [`Store`] over both backends: each query is written once here,
//! in SQL both dialects read, and runs on the store's pools. A backend's
//! [`Dialect`] brings how its transactions begin and the statements it writes
//! its own way: leasing and bulk inserts. Every call is a `store.*` span at
//! debug level, with the ids it is about.

mod batches;
mod conversations;
pub(crate) mod dialect;
mod evaluations;
mod failed_items;
mod impls;
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

use dialect::Dialect;
use runs::Runs;

use crate::store::{Store, StoreError};

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
}
