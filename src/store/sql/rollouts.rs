//! A rollout an agent server made for a trainer: its item, done at once,
//! with its conversation (messages, usage, user checks), in one transaction.

use super::conversations::insert_whole;
use super::dialect::Dialect;
use super::imports::insert_done_item;
use super::runs::Commit;
use super::SqlStore;
use crate::store::{NewConversation, NewItem, StoreError};

/// See [`crate::store::ImportStore::store_rollout`].
pub(super) async fn store_rollout<D: Dialect>(
    store: &SqlStore<D>,
    job_id: i64,
    item: &NewItem,
    conversation: &NewConversation,
) -> Result<Option<i64>, StoreError> {
    let mut tx = store.begin_write().await?;
    let Some(item_id) = insert_done_item::<D>(&mut tx, job_id, item).await? else {
        // The key is taken; nothing was written.
        return Ok(None);
    };
    let id = insert_whole::<D>(&mut tx, job_id, item_id, conversation).await?;
    tx.commit().await?;
    Ok(Some(id))
}
