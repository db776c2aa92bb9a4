//! Batch API batches and their requests.

use async_trait::async_trait;

use crate::store::{
    BatchAnswer, BatchRequestRow, BatchRow, BatchUpdate, NewBatchRequest, StoreError,
};

/// Batch API batches and their requests.
#[async_trait]
pub trait BatchStore: Send + Sync {
    /// In one transaction: store a batch (status `preparing`) with those of
    /// `requests` whose custom id the job has not stored yet. Returns the
    /// batch's id and the custom ids stored, or `None` (and no batch) when
    /// every one was already stored (another process planned them).
    async fn create_batch(
        &self,
        job_id: i64,
        endpoint: &str,
        requests: &[NewBatchRequest],
    ) -> Result<Option<(i64, Vec<String>)>, StoreError>;

    /// Store what the provider said of a batch (its ids, its status).
    async fn update_batch(&self, id: i64, update: &BatchUpdate) -> Result<(), StoreError>;

    /// Remove a batch nothing of which was sent, with its requests.
    async fn delete_batch(&self, id: i64) -> Result<(), StoreError>;

    /// A job's batches, by id.
    async fn job_batches(&self, job_id: i64) -> Result<Vec<BatchRow>, StoreError>;

    /// A job's batch requests, by id.
    async fn batch_requests_of_job(&self, job_id: i64) -> Result<Vec<BatchRequestRow>, StoreError>;

    /// In one transaction: record what became of a batch's requests (only
    /// those still `submitted` change), store their judge calls, and set the
    /// batch's status to `ingested`.
    async fn ingest_batch(&self, id: i64, answers: &[BatchAnswer]) -> Result<(), StoreError>;
}
