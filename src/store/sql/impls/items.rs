//! [`ItemStore`] over the shared SQL.

use async_trait::async_trait;

use super::super::{
    conversations,
    dialect::{Dialect, Lease, Renewal},
    failed_items, items, scenario_attempts, SqlStore,
};
use crate::store::{
    ItemCounts, ItemRow, ItemStore, NewConversation, NewItem, ScenarioAttempts, StoreError,
};

#[async_trait]
impl<D: Dialect> ItemStore for SqlStore<D> {
    #[tracing::instrument(name = "store.add_items", level = "debug", skip_all, fields(job_id = job_id))]
    async fn add_items(&self, job_id: i64, items: &[NewItem]) -> Result<u64, StoreError> {
        if items.is_empty() {
            return Ok(0);
        }
        D::add_items(&self.writer, job_id, items).await
    }

    #[tracing::instrument(name = "store.lease_items", level = "debug", skip_all, fields(job_id = job_id))]
    async fn lease_items(
        &self,
        job_id: i64,
        owner: &str,
        limit: u32,
        lease_ms: i64,
    ) -> Result<Vec<ItemRow>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let lease = Lease {
            job_id,
            owner,
            limit,
            lease_ms,
        };
        D::lease_items(&self.writer, &lease).await
    }

    #[tracing::instrument(name = "store.renew_leases", level = "debug", skip_all)]
    async fn renew_leases(
        &self,
        owner: &str,
        item_ids: &[i64],
        lease_ms: i64,
    ) -> Result<u64, StoreError> {
        if item_ids.is_empty() {
            return Ok(0);
        }
        let renewal = Renewal {
            owner,
            item_ids,
            lease_ms,
        };
        D::renew_leases(&self.writer, &renewal).await
    }

    #[tracing::instrument(name = "store.complete_items", level = "debug", skip_all)]
    async fn complete_items(
        &self,
        owner: &str,
        batch: &[(i64, &NewConversation)],
    ) -> Result<Vec<Result<i64, StoreError>>, StoreError> {
        conversations::complete_items(self, owner, batch).await
    }

    #[tracing::instrument(name = "store.finish_item", level = "debug", skip_all, fields(item_id = item_id))]
    async fn finish_item(&self, item_id: i64, owner: &str) -> Result<(), StoreError> {
        items::finish(self, item_id, owner).await
    }

    #[tracing::instrument(name = "store.fail_item", level = "debug", skip_all, fields(item_id = item_id))]
    async fn fail_item(
        &self,
        item_id: i64,
        owner: &str,
        class: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        items::fail(self, item_id, owner, class, message).await
    }

    #[tracing::instrument(name = "store.reset_failed_items", level = "debug", skip_all, fields(job_id = job_id))]
    async fn reset_failed_items(&self, job_id: i64) -> Result<u64, StoreError> {
        items::reset_failed(self, job_id).await
    }

    #[tracing::instrument(name = "store.release_items", level = "debug", skip_all, fields(job_id = job_id))]
    async fn release_items(&self, job_id: i64, owner: &str) -> Result<u64, StoreError> {
        items::release(self, job_id, owner).await
    }

    #[tracing::instrument(name = "store.item_errors", level = "debug", skip_all, fields(job_id = job_id))]
    async fn item_errors(&self, job_id: i64, limit: u32) -> Result<Vec<(String, i64)>, StoreError> {
        items::errors(self, job_id, limit).await
    }

    #[tracing::instrument(name = "store.item_counts", level = "debug", skip_all, fields(job_id = job_id))]
    async fn item_counts(&self, job_id: i64) -> Result<ItemCounts, StoreError> {
        items::counts(self, job_id).await
    }

    #[tracing::instrument(name = "store.unfinished_item_keys", level = "debug", skip_all, fields(job_id = job_id))]
    async fn unfinished_item_keys(&self, job_id: i64) -> Result<Vec<String>, StoreError> {
        items::unfinished_keys(self, job_id).await
    }

    #[tracing::instrument(name = "store.failed_items", level = "debug", skip_all, fields(job_id = job_id))]
    async fn failed_items(&self, job_id: i64) -> Result<Vec<ItemRow>, StoreError> {
        failed_items::of_job(self, job_id).await
    }

    #[tracing::instrument(name = "store.scenario_attempts", level = "debug", skip_all, fields(job_id = job_id))]
    async fn scenario_attempts(
        &self,
        job_id: i64,
        success_reward: f64,
    ) -> Result<Vec<ScenarioAttempts>, StoreError> {
        scenario_attempts::of_job(self, job_id, success_reward).await
    }
}
