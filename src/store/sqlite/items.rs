//! Items in SQLite's own words: adding many in multi-row INSERTs, leasing
//! them on the one writer, and renewing leases named in a JSON array.

use sqlx::{AssertSqlSafe, Pool, Sqlite};

use super::multi_row::{multi_row_sql, rows_per_statement};
use crate::store::decode::{self, item_columns};
use crate::store::sql::dialect::{Dialect, Lease, Leasing, Renewal};
use crate::store::{now_ms, ItemRow, NewItem, StoreError};

/// Bound parameters per row of `add_items`'s INSERT.
const ITEM_PARAMETERS: usize = 7;

impl Leasing for Sqlite {
    async fn add_items(
        pool: &Pool<Self>,
        job_id: i64,
        items: &[NewItem],
    ) -> Result<u64, StoreError> {
        let now = now_ms();
        let mut added = 0;
        let mut tx = pool.begin_with(Self::BEGIN_WRITE).await?;
        for chunk in items.chunks(rows_per_statement(ITEM_PARAMETERS)) {
            let sql = multi_row_sql(
                "INSERT INTO items \
                 (job_id, key, scenario_id, persona_id, sample, seed, updated_at, status, attempts) \
                 VALUES ",
                "(?, ?, ?, ?, ?, ?, ?, 'pending', 0)",
                chunk.len(),
                " ON CONFLICT (job_id, key) DO NOTHING",
            );
            // Not kept in the connection's statement cache: a job's items are
            // added once, and a prepared INSERT of thousands of rows is
            // megabytes that the writer would hold for the rest of the run.
            let mut insert = sqlx::query(AssertSqlSafe(sql)).persistent(false);
            for item in chunk {
                insert = insert
                    .bind(job_id)
                    .bind(item.key.as_str())
                    .bind(item.scenario_id.as_str())
                    .bind(item.persona_id.as_str())
                    .bind(item.sample)
                    .bind(item.seed)
                    .bind(now);
            }
            added += insert.execute(&mut *tx).await?.rows_affected();
        }
        tx.commit().await?;
        Ok(added)
    }

    async fn lease_items(pool: &Pool<Self>, lease: &Lease<'_>) -> Result<Vec<ItemRow>, StoreError> {
        let &Lease {
            job_id,
            owner,
            limit,
            lease_ms,
        } = lease;
        let now = now_ms();
        let mut tx = pool.begin_with(Self::BEGIN_WRITE).await?;
        // Each branch walks the (job_id, status) index in id order and stops at
        // `limit`, so a lease never sorts a whole 100k-item job.
        let rows = sqlx::query(concat!(
            "UPDATE items SET status = 'leased', lease_owner = ?, lease_expires_at = ?, \
             attempts = attempts + 1, updated_at = ? \
             WHERE id IN ( \
               SELECT id FROM ( \
                 SELECT id FROM (SELECT id FROM items WHERE job_id = ? AND status = 'pending' \
                                 ORDER BY id LIMIT ?) AS pending \
                 UNION ALL \
                 SELECT id FROM (SELECT id FROM items WHERE job_id = ? AND status = 'leased' \
                                 AND lease_expires_at < ? ORDER BY id LIMIT ?) AS expired \
               ) AS candidates ORDER BY id LIMIT ? \
             ) RETURNING ",
            item_columns!()
        ))
        .bind(owner)
        .bind(now.saturating_add(lease_ms))
        .bind(now)
        .bind(job_id)
        .bind(i64::from(limit))
        .bind(job_id)
        .bind(now)
        .bind(i64::from(limit))
        .bind(i64::from(limit))
        .fetch_all(&mut *tx)
        .await?;
        let mut leased = rows
            .iter()
            .map(decode::item)
            .collect::<Result<Vec<_>, _>>()?;
        tx.commit().await?;
        leased.sort_by_key(|item| item.id);
        Ok(leased)
    }

    /// An expired lease that nobody took over is still `owner`'s and is renewed,
    /// just as `complete_item` still honours it. The ids travel as one JSON array,
    /// so the statement is the same however many there are.
    async fn renew_leases(pool: &Pool<Self>, renewal: &Renewal<'_>) -> Result<u64, StoreError> {
        let &Renewal {
            owner,
            item_ids,
            lease_ms,
        } = renewal;
        let ids: Vec<String> = item_ids.iter().map(i64::to_string).collect();
        let ids = format!("[{}]", ids.join(","));
        let now = now_ms();
        let renewed = sqlx::query(
            "UPDATE items SET lease_expires_at = ?, updated_at = ? \
             WHERE id IN (SELECT value FROM json_each(?)) AND status = 'leased' AND lease_owner = ?",
        )
        .bind(now.saturating_add(lease_ms))
        .bind(now)
        .bind(ids)
        .bind(owner)
        .execute(pool)
        .await?;
        Ok(renewed.rows_affected())
    }
}
