//! [`BatchStore`] over the shared SQL.

use async_trait::async_trait;

use super::super::{batches, dialect::Dialect, SqlStore};
use crate::store::{
    BatchAnswer, BatchRequestRow, BatchRow, BatchStore, BatchUpdate, NewBatchRequest, StoreError,
};

#[async_trait]
impl<D: Dialect> BatchStore for SqlStore<D> {
    #[tracing::instrument(name = "store.create_batch", level = "debug", skip_all, fields(job_id = job_id))]
    async fn create_batch(
        &self,
        job_id: i64,
        endpoint: &str,
        requests: &[NewBatchRequest],
    ) -> Result<Option<(i64, Vec<String>)>, StoreError> {
        batches::create(self, job_id, endpoint, requests).await
    }

    #[tracing::instrument(name = "store.update_batch", level = "debug", skip_all, fields(id = id))]
    async fn update_batch(&self, id: i64, update: &BatchUpdate) -> Result<(), StoreError> {
        batches::update(self, id, update).await
    }

    #[tracing::instrument(name = "store.delete_batch", level = "debug", skip_all, fields(id = id))]
    async fn delete_batch(&self, id: i64) -> Result<(), StoreError> {
        batches::delete(self, id).await
    }

    #[tracing::instrument(name = "store.job_batches", level = "debug", skip_all, fields(job_id = job_id))]
    async fn job_batches(&self, job_id: i64) -> Result<Vec<BatchRow>, StoreError> {
        batches::of_job(self, job_id).await
    }

    #[tracing::instrument(name = "store.batch_requests_of_job", level = "debug", skip_all, fields(job_id = job_id))]
    async fn batch_requests_of_job(&self, job_id: i64) -> Result<Vec<BatchRequestRow>, StoreError> {
        batches::requests_of_job(self, job_id).await
    }

    #[tracing::instrument(name = "store.ingest_batch", level = "debug", skip_all, fields(id = id))]
    async fn ingest_batch(&self, id: i64, answers: &[BatchAnswer]) -> Result<(), StoreError> {
        batches::ingest(self, id, answers).await
    }
}
