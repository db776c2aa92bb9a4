//! The `items` table: adding work, leasing it, renewing leases, failing it,
//! counting it. (Completing an item stores a conversation: see `conversations.rs`.)

use sqlx::sqlite::SqlitePool;
use sqlx::{AssertSqlSafe, Row};

use super::decode::{self, item_columns};
use super::{multi_row_sql, rows_per_statement, BEGIN_WRITE};
use crate::store::{now_ms, ItemCounts, ItemRow, ItemStatus, NewItem, StoreError};

/// Bound parameters per row of [`add`]'s INSERT.
const ITEM_PARAMETERS: usize = 7;

pub(super) async fn add(
    writer: &SqlitePool,
    job_id: i64,
    items: &[NewItem],
) -> Result<u64, StoreError> {
    if items.is_empty() {
        return Ok(0);
    }
    let now = now_ms();
    let mut added = 0;
    let mut tx = writer.begin_with(BEGIN_WRITE).await?;
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

pub(super) async fn lease(
    writer: &SqlitePool,
    job_id: i64,
    owner: &str,
    limit: u32,
    lease_ms: i64,
) -> Result<Vec<ItemRow>, StoreError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let now = now_ms();
    let mut tx = writer.begin_with(BEGIN_WRITE).await?;
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
pub(super) async fn renew(
    writer: &SqlitePool,
    owner: &str,
    item_ids: &[i64],
    lease_ms: i64,
) -> Result<u64, StoreError> {
    if item_ids.is_empty() {
        return Ok(0);
    }
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
    .execute(writer)
    .await?;
    Ok(renewed.rows_affected())
}

pub(super) async fn fail(
    writer: &SqlitePool,
    item_id: i64,
    owner: &str,
    class: &str,
    message: &str,
) -> Result<(), StoreError> {
    let failed = sqlx::query(
        "UPDATE items SET status = 'failed', last_error = ?, lease_expires_at = NULL, \
         updated_at = ? WHERE id = ? AND status = 'leased' AND lease_owner = ?",
    )
    .bind(format!("{class}: {message}"))
    .bind(now_ms())
    .bind(item_id)
    .bind(owner)
    .execute(writer)
    .await?;
    if failed.rows_affected() == 0 {
        return Err(StoreError::LeaseLost {
            item_id,
            owner: owner.to_string(),
        });
    }
    Ok(())
}

/// Mark a leased item done without a conversation (a judging item, whose
/// results are judgments stored on their own).
pub(super) async fn finish(
    writer: &SqlitePool,
    item_id: i64,
    owner: &str,
) -> Result<(), StoreError> {
    let done = sqlx::query(
        "UPDATE items SET status = 'done', lease_expires_at = NULL, updated_at = ? \
         WHERE id = ? AND status = 'leased' AND lease_owner = ?",
    )
    .bind(now_ms())
    .bind(item_id)
    .bind(owner)
    .execute(writer)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::LeaseLost {
            item_id,
            owner: owner.to_string(),
        });
    }
    Ok(())
}

pub(super) async fn reset_failed(writer: &SqlitePool, job_id: i64) -> Result<u64, StoreError> {
    let reset = sqlx::query(
        "UPDATE items SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, \
         updated_at = ? WHERE job_id = ? AND status = 'failed'",
    )
    .bind(now_ms())
    .bind(job_id)
    .execute(writer)
    .await?;
    Ok(reset.rows_affected())
}

pub(super) async fn release(
    writer: &SqlitePool,
    job_id: i64,
    owner: &str,
) -> Result<u64, StoreError> {
    let released = sqlx::query(
        "UPDATE items SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, \
         updated_at = ? WHERE job_id = ? AND status = 'leased' AND lease_owner = ?",
    )
    .bind(now_ms())
    .bind(job_id)
    .bind(owner)
    .execute(writer)
    .await?;
    Ok(released.rows_affected())
}

pub(super) async fn counts(reader: &SqlitePool, job_id: i64) -> Result<ItemCounts, StoreError> {
    let rows = sqlx::query(
        "SELECT status, COUNT(*) AS n, MIN(id) AS example FROM items \
         WHERE job_id = ? GROUP BY status",
    )
    .bind(job_id)
    .fetch_all(reader)
    .await?;
    let mut counts = ItemCounts::default();
    for row in &rows {
        let status: String = row.try_get("status")?;
        let n: i64 = row.try_get("n")?;
        let example: i64 = row.try_get("example")?;
        let slot = match decode::item_status(example, &status)? {
            ItemStatus::Pending => &mut counts.pending,
            ItemStatus::Leased => &mut counts.leased,
            ItemStatus::Done => &mut counts.done,
            ItemStatus::Failed => &mut counts.failed,
        };
        *slot += n;
    }
    Ok(counts)
}
