//! Items and their leases: add, lease, renew, complete, fail, release, count.

use async_trait::async_trait;

use crate::store::{ItemCounts, ItemRow, NewConversation, NewItem, ScenarioAttempts, StoreError};

/// Items and their leases: add, lease, renew, complete, fail, release, count.
#[async_trait]
pub trait ItemStore: Send + Sync {
    /// Add items to a job; keys that already exist are left as they are.
    /// Returns how many were new.
    async fn add_items(&self, job_id: i64, items: &[NewItem]) -> Result<u64, StoreError>;

    /// Lease up to `limit` items that are pending, or leased with an expired
    /// lease, for `lease_ms` milliseconds. Increments their attempts.
    async fn lease_items(
        &self,
        job_id: i64,
        owner: &str,
        limit: u32,
        lease_ms: i64,
    ) -> Result<Vec<ItemRow>, StoreError>;

    /// A worker's heartbeat: move the expiry of those of `item_ids` that
    /// `owner` still holds to now + `lease_ms`, so nobody takes them over while
    /// their conversations run. Items leased by someone else, or no longer
    /// leased (done, failed, released), are left as they are. A lease that
    /// expired but was not taken over is still `owner`'s and is renewed.
    /// Returns how many were renewed: fewer than asked means some were lost.
    async fn renew_leases(
        &self,
        owner: &str,
        item_ids: &[i64],
        lease_ms: i64,
    ) -> Result<u64, StoreError>;

    /// In one transaction: check `owner` still holds the lease, store the
    /// conversation with its messages and usage, mark the item done.
    /// Returns the conversation id.
    async fn complete_item(
        &self,
        item_id: i64,
        owner: &str,
        conversation: &NewConversation,
    ) -> Result<i64, StoreError> {
        let mut results = self
            .complete_items(owner, &[(item_id, conversation)])
            .await?;
        results.pop().unwrap_or_else(|| {
            Err(StoreError::Corrupt(
                "complete_items returned no result for one item".into(),
            ))
        })
    }

    /// [`ItemStore::complete_item`] for many items in one transaction (a group
    /// commit): each `(leased item id, conversation)` is stored with its
    /// messages and its item marked done, or is `Err(LeaseLost)` on its own
    /// when `owner` no longer holds that item. Any other error rolls the
    /// whole batch back and is returned as the outer error.
    async fn complete_items(
        &self,
        owner: &str,
        batch: &[(i64, &NewConversation)],
    ) -> Result<Vec<Result<i64, StoreError>>, StoreError>;

    /// Mark a leased item done without storing a conversation: a judging
    /// item, whose judgments are stored on their own. `LeaseLost` when
    /// `owner` no longer holds it.
    async fn finish_item(&self, item_id: i64, owner: &str) -> Result<(), StoreError>;

    /// Mark a leased item failed with an error class and message.
    async fn fail_item(
        &self,
        item_id: i64,
        owner: &str,
        class: &str,
        message: &str,
    ) -> Result<(), StoreError>;

    /// Put failed items of a job back to pending (for `--retry-failed`).
    async fn reset_failed_items(&self, job_id: i64) -> Result<u64, StoreError>;

    /// Put the items `owner` holds back to pending, e.g. when a run is cancelled,
    /// so they are redone at once instead of after their lease expires.
    async fn release_items(&self, job_id: i64, owner: &str) -> Result<u64, StoreError>;

    async fn item_counts(&self, job_id: i64) -> Result<ItemCounts, StoreError>;

    /// The commonest `class: message` errors of a job's failed items, with
    /// how many items failed with each, commonest first, at most `limit`.
    async fn item_errors(&self, job_id: i64, limit: u32) -> Result<Vec<(String, i64)>, StoreError>;

    /// Keys of a job's items that are pending or leased, by id.
    async fn unfinished_item_keys(&self, job_id: i64) -> Result<Vec<String>, StoreError>;

    /// A job's failed items, by id, each with its last error.
    async fn failed_items(&self, job_id: i64) -> Result<Vec<ItemRow>, StoreError>;

    /// Per scenario of a job, sorted by id: its items by how far they got,
    /// a pass being a conversation with reward ≥ `success_reward`.
    async fn scenario_attempts(
        &self,
        job_id: i64,
        success_reward: f64,
    ) -> Result<Vec<ScenarioAttempts>, StoreError>;
}
