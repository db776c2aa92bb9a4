//! [`ImportStore`] over the shared SQL.

use async_trait::async_trait;

use super::super::{dialect::Dialect, imports, rollouts, SqlStore};
use crate::store::{ImportStore, NewConversation, NewItem, StoreError};

#[async_trait]
impl<D: Dialect> ImportStore for SqlStore<D> {
    #[tracing::instrument(name = "store.store_rollout", level = "debug", skip_all, fields(job_id = job_id))]
    async fn store_rollout(
        &self,
        job_id: i64,
        item: &NewItem,
        conversation: &NewConversation,
    ) -> Result<Option<i64>, StoreError> {
        rollouts::store_rollout(self, job_id, item, conversation).await
    }

    #[tracing::instrument(name = "store.store_imported", level = "debug", skip_all, fields(job_id = job_id))]
    async fn store_imported(
        &self,
        job_id: i64,
        batch: &[(NewItem, NewConversation)],
    ) -> Result<u64, StoreError> {
        if batch.is_empty() {
            return Ok(0);
        }
        imports::store_imported(self, job_id, batch).await
    }
}
