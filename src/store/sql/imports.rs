//! Conversations imported from a file (an `import` job): each is stored with
//! an item that is done from the start, keyed by the conversation's content
//! hash, so a conversation already in the job is left as it is.

use super::conversations::insert_whole;
use super::dialect::Dialect;
use super::runs::{Commit, Runs};
use super::statement::{sql, Param, Sql};
use super::SqlStore;
use crate::store::decode::StoredRow;
use crate::store::{NewConversation, NewItem, StoreError};

// An item that exists already returns no row: its conversation was stored
// with it, in the same transaction.
const INSERT_DONE_ITEM: Sql = sql!(
    "INSERT INTO items (job_id, key, scenario_id, persona_id, sample, seed, updated_at, \
     status, attempts) VALUES ($1, $2, $3, $4, $5, $6, ",
    NOW,
    ", 'done', 1) ON CONFLICT (job_id, key) DO NOTHING RETURNING id"
);

/// In one transaction, each `(item, conversation)` whose item key job
/// `job_id` does not hold yet: the item, done, and its conversation, in the
/// dialect's bulk statements. Returns how many were new.
pub(super) async fn store_imported<D: Dialect>(
    store: &SqlStore<D>,
    job_id: i64,
    batch: &[(NewItem, NewConversation)],
) -> Result<u64, StoreError> {
    let mut tx = store.begin_write().await?;
    let stored = D::insert_imported(&mut tx, job_id, batch).await?;
    tx.commit().await?;
    Ok(stored)
}

/// [`store_imported`] a statement at a time: the item, then its
/// conversation with its rows, for each in turn.
pub(crate) async fn each_row<D: Dialect>(
    tx: &mut D::Tx,
    job_id: i64,
    batch: &[(NewItem, NewConversation)],
) -> Result<u64, StoreError> {
    let mut stored = 0;
    for (item, conversation) in batch {
        if let Some(item_id) = insert_done_item::<D>(tx, job_id, item).await? {
            insert_whole::<D>(tx, job_id, item_id, conversation).await?;
            stored += 1;
        }
    }
    Ok(stored)
}

/// A new item of job `job_id`, done; its id, or `None` when the job holds
/// its key already.
pub(super) async fn insert_done_item<D: Dialect>(
    tx: &mut D::Tx,
    job_id: i64,
    item: &NewItem,
) -> Result<Option<i64>, StoreError> {
    let added = tx
        .fetch_optional(
            &INSERT_DONE_ITEM,
            &[
                Param::Int(job_id),
                Param::Text(&item.key),
                Param::Text(&item.scenario_id),
                Param::Text(&item.persona_id),
                Param::Int(item.sample),
                Param::Int(item.seed),
            ],
        )
        .await?;
    Ok(added.map(|row| row.int("id")).transpose()?)
}
