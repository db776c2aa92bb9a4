//! Conversations that arrive made: imports and agent servers' rollouts.

use async_trait::async_trait;

use crate::store::{NewConversation, NewItem, StoreError};

/// Conversations that arrive made: imports and agent servers' rollouts.
#[async_trait]
pub trait ImportStore: Send + Sync {
    /// In one transaction, each `(item, conversation)` of an import job
    /// whose item key the job does not hold yet: the item, done at once,
    /// and its conversation with its messages and user checks. A key the
    /// job holds is left as it is, so importing the same conversations again
    /// (or after a kill) stores each once. Returns how many were new.
    async fn store_imported(
        &self,
        job_id: i64,
        batch: &[(NewItem, NewConversation)],
    ) -> Result<u64, StoreError>;

    /// In one transaction: a new item of job `job_id`, done at once, and
    /// its conversation with messages, usage and user checks (a rollout an
    /// agent server made). `None`, and nothing written, when the job holds
    /// the item's key already; else the conversation id.
    async fn store_rollout(
        &self,
        job_id: i64,
        item: &NewItem,
        conversation: &NewConversation,
    ) -> Result<Option<i64>, StoreError>;
}
