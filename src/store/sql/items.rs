//! The `items` table, where both dialects agree: failing, finishing,
//! resetting and releasing items, and counting them. (Adding and leasing them
//! are the backends' own; completing one stores a conversation: see
//! `conversations.rs`.)

use super::dialect::Dialect;
use super::runs::Runs;
use super::statement::{sql, Param, Sql};
use super::SqlStore;
use crate::store::decode::{self, StoredRow};
use crate::store::{ItemCounts, ItemStatus, StoreError};

const FAIL: Sql = sql!(
    "UPDATE items SET status = 'failed', last_error = $1, lease_expires_at = NULL, updated_at = ",
    NOW,
    " WHERE id = $2 AND status = 'leased' AND lease_owner = $3"
);
const FINISH: Sql = sql!(
    "UPDATE items SET status = 'done', lease_expires_at = NULL, updated_at = ",
    NOW,
    " WHERE id = $1 AND status = 'leased' AND lease_owner = $2"
);
const RESET_FAILED: Sql = sql!(
    "UPDATE items SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, \
     updated_at = ",
    NOW,
    " WHERE job_id = $1 AND status = 'failed'"
);
const RELEASE: Sql = sql!(
    "UPDATE items SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, \
     updated_at = ",
    NOW,
    " WHERE job_id = $1 AND status = 'leased' AND lease_owner = $2"
);
const ERRORS: Sql = sql!(
    "SELECT last_error, COUNT(*) AS n FROM items WHERE job_id = $1 AND status = 'failed' \
     GROUP BY last_error ORDER BY n DESC, last_error",
    BYTEWISE,
    " LIMIT $2"
);
const COUNTS: Sql = sql!(
    "SELECT status, COUNT(*) AS n, MIN(id) AS example FROM items \
     WHERE job_id = $1 GROUP BY status"
);

pub(super) async fn fail(
    store: &SqlStore<impl Dialect>,
    item_id: i64,
    owner: &str,
    class: &str,
    message: &str,
) -> Result<(), StoreError> {
    let error = format!("{class}: {message}");
    let failed = store
        .writer()
        .execute(
            &FAIL,
            &[Param::Text(&error), Param::Int(item_id), Param::Text(owner)],
        )
        .await?;
    held(failed, item_id, owner)
}

/// Mark a leased item done without a conversation (a judging item, whose
/// results are judgments stored on their own).
pub(super) async fn finish(
    store: &SqlStore<impl Dialect>,
    item_id: i64,
    owner: &str,
) -> Result<(), StoreError> {
    let done = store
        .writer()
        .execute(&FINISH, &[Param::Int(item_id), Param::Text(owner)])
        .await?;
    held(done, item_id, owner)
}

pub(super) async fn reset_failed(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<u64, StoreError> {
    store
        .writer()
        .execute(&RESET_FAILED, &[Param::Int(job_id)])
        .await
}

pub(super) async fn release(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
    owner: &str,
) -> Result<u64, StoreError> {
    store
        .writer()
        .execute(&RELEASE, &[Param::Int(job_id), Param::Text(owner)])
        .await
}

pub(super) async fn counts(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<ItemCounts, StoreError> {
    let rows = store
        .reader()
        .fetch_all(&COUNTS, &[Param::Int(job_id)])
        .await?;
    let mut counts = ItemCounts::default();
    for row in &rows {
        let status = row.text("status")?;
        let n = row.int("n")?;
        let example = row.int("example")?;
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

/// The commonest errors of a job's failed items, commonest first.
pub(super) async fn errors(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
    limit: u32,
) -> Result<Vec<(String, i64)>, StoreError> {
    store
        .reader()
        .fetch_all(&ERRORS, &[Param::Int(job_id), Param::Int(i64::from(limit))])
        .await?
        .iter()
        .map(|row| {
            Ok((
                row.opt_text("last_error")?.unwrap_or_default(),
                row.int("n")?,
            ))
        })
        .collect()
}

/// `LeaseLost` unless the statement changed the one item `owner` held.
fn held(changed: u64, item_id: i64, owner: &str) -> Result<(), StoreError> {
    if changed == 0 {
        return Err(StoreError::LeaseLost {
            item_id,
            owner: owner.to_string(),
        });
    }
    Ok(())
}

const UNFINISHED_KEYS: Sql =
    sql!("SELECT key FROM items WHERE job_id = $1 AND status IN ('pending', 'leased') ORDER BY id");

pub(super) async fn unfinished_keys(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<Vec<String>, StoreError> {
    let rows = store
        .reader()
        .fetch_all(&UNFINISHED_KEYS, &[Param::Int(job_id)])
        .await?;
    rows.iter().map(|row| Ok(row.text("key")?)).collect()
}
