//! Where statements run: a pool, or a transaction begun on one, of either
//! backend. Shared queries are written against [`Runs`], so one text and one
//! list of values serve SQLite and Postgres alike.

use std::future::Future;

use sqlx::encode::Encode;
use sqlx::query::Query;
use sqlx::{Database, Pool, Postgres, Sqlite, Transaction, Type};

use super::statement::{Param, Sql};
use crate::store::decode::StoredRow;
use crate::store::StoreError;

/// Runs a statement with its values, in one dialect.
pub(crate) trait Runs: Send {
    type Row: StoredRow + Send + Sync;
    /// How many rows it changed.
    fn execute(
        &mut self,
        sql: &Sql,
        params: &[Param<'_>],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
    fn fetch_all(
        &mut self,
        sql: &Sql,
        params: &[Param<'_>],
    ) -> impl Future<Output = Result<Vec<Self::Row>, StoreError>> + Send;
    fn fetch_optional(
        &mut self,
        sql: &Sql,
        params: &[Param<'_>],
    ) -> impl Future<Output = Result<Option<Self::Row>, StoreError>> + Send;
    fn fetch_one(
        &mut self,
        sql: &Sql,
        params: &[Param<'_>],
    ) -> impl Future<Output = Result<Self::Row, StoreError>> + Send;
}

/// A transaction that [`Runs`] statements until it is committed (dropped, it
/// rolls back).
pub(crate) trait Commit: Runs {
    fn commit(self) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// A database whose pools and transactions [`Runs`] statements.
pub(crate) trait Runner: Database<Row: StoredRow + Send + Sync> {
    /// A transaction on one of its pools.
    type Tx: Commit<Row = Self::Row>;
    fn on_pool(pool: &Pool<Self>) -> impl Runs<Row = Self::Row> + '_;
    /// A transaction begun with `statement` (`BEGIN …`).
    fn begin(
        pool: &Pool<Self>,
        statement: &'static str,
    ) -> impl Future<Output = Result<Self::Tx, StoreError>> + Send;
}

/// Statements on a pool, each on whichever connection is free.
#[derive(Debug)]
struct OnPool<'p, DB: Database>(&'p Pool<DB>);

/// `text` with `params` bound to `$1`, `$2`, … in order.
fn bound<'q, DB>(text: &'static str, params: &[Param<'_>]) -> Query<'q, DB, DB::Arguments>
where
    DB: Database,
    i64: for<'t> Encode<'t, DB> + Type<DB>,
    Option<i64>: for<'t> Encode<'t, DB> + Type<DB>,
    Option<f64>: for<'t> Encode<'t, DB> + Type<DB>,
    Option<bool>: for<'t> Encode<'t, DB> + Type<DB>,
    for<'t> &'t str: Encode<'t, DB> + Type<DB>,
    for<'t> Option<&'t str>: Encode<'t, DB> + Type<DB>,
    for<'t> &'t [u8]: Encode<'t, DB> + Type<DB>,
{
    let mut query = sqlx::query(text);
    for param in params {
        query = match *param {
            Param::Int(value) => query.bind(value),
            Param::OptInt(value) => query.bind(value),
            Param::OptReal(value) => query.bind(value),
            Param::OptBool(value) => query.bind(value),
            Param::Text(value) => query.bind(value),
            Param::OptText(value) => query.bind(value),
            Param::Bytes(value) => query.bind(value),
        };
    }
    query
}

/// [`Runner`] for `$db`, whose text is `Sql::$dialect`.
macro_rules! runs_on {
    ($db:ty, $dialect:ident) => {
        impl Runner for $db {
            type Tx = Transaction<'static, $db>;
            fn on_pool(pool: &Pool<Self>) -> impl Runs<Row = Self::Row> + '_ {
                OnPool(pool)
            }
            async fn begin(
                pool: &Pool<Self>,
                statement: &'static str,
            ) -> Result<Self::Tx, StoreError> {
                Ok(pool.begin_with(statement).await?)
            }
        }

        impl Runs for OnPool<'_, $db> {
            type Row = <$db as Database>::Row;
            async fn execute(
                &mut self,
                sql: &Sql,
                params: &[Param<'_>],
            ) -> Result<u64, StoreError> {
                let done = bound(sql.$dialect, params).execute(self.0).await?;
                Ok(done.rows_affected())
            }
            async fn fetch_all(
                &mut self,
                sql: &Sql,
                params: &[Param<'_>],
            ) -> Result<Vec<Self::Row>, StoreError> {
                Ok(bound(sql.$dialect, params).fetch_all(self.0).await?)
            }
            async fn fetch_optional(
                &mut self,
                sql: &Sql,
                params: &[Param<'_>],
            ) -> Result<Option<Self::Row>, StoreError> {
                Ok(bound(sql.$dialect, params).fetch_optional(self.0).await?)
            }
            async fn fetch_one(
                &mut self,
                sql: &Sql,
                params: &[Param<'_>],
            ) -> Result<Self::Row, StoreError> {
                Ok(bound(sql.$dialect, params).fetch_one(self.0).await?)
            }
        }

        impl Runs for Transaction<'static, $db> {
            type Row = <$db as Database>::Row;
            async fn execute(
                &mut self,
                sql: &Sql,
                params: &[Param<'_>],
            ) -> Result<u64, StoreError> {
                let done = bound(sql.$dialect, params).execute(&mut **self).await?;
                Ok(done.rows_affected())
            }
            async fn fetch_all(
                &mut self,
                sql: &Sql,
                params: &[Param<'_>],
            ) -> Result<Vec<Self::Row>, StoreError> {
                Ok(bound(sql.$dialect, params).fetch_all(&mut **self).await?)
            }
            async fn fetch_optional(
                &mut self,
                sql: &Sql,
                params: &[Param<'_>],
            ) -> Result<Option<Self::Row>, StoreError> {
                Ok(bound(sql.$dialect, params)
                    .fetch_optional(&mut **self)
                    .await?)
            }
            async fn fetch_one(
                &mut self,
                sql: &Sql,
                params: &[Param<'_>],
            ) -> Result<Self::Row, StoreError> {
                Ok(bound(sql.$dialect, params).fetch_one(&mut **self).await?)
            }
        }

        impl Commit for Transaction<'static, $db> {
            async fn commit(self) -> Result<(), StoreError> {
                Ok(Transaction::commit(self).await?)
            }
        }
    };
}

runs_on!(Sqlite, sqlite);
runs_on!(Postgres, postgres);

#[cfg(test)]
mod tests {
    use sqlx::sqlite::SqlitePoolOptions;

    use super::*;
    use crate::store::sql::statement::sql;

    #[tokio::test]
    async fn sqlite_binds_dollar_placeholders_by_number_repeated_and_out_of_order() {
        let pool = SqlitePoolOptions::new()
            .connect("sqlite::memory:")
            .await
            .unwrap();
        const PICK: Sql = sql!("SELECT $2 AS second, $1 AS first, $1 + 1 AS first_again");
        let row = Sqlite::on_pool(&pool)
            .fetch_one(&PICK, &[Param::Int(41), Param::Text("b")])
            .await
            .unwrap();
        assert_eq!(row.text("second").unwrap(), "b");
        assert_eq!(row.int("first").unwrap(), 41);
        assert_eq!(row.int("first_again").unwrap(), 42);
    }
}
