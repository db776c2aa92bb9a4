//! Jobs: create, find, list, status.

use async_trait::async_trait;

use crate::store::{JobRow, JobStatus, NewJob, StoreError};

/// Jobs: create, find, list, status.
#[async_trait]
pub trait JobStore: Send + Sync {
    async fn create_job(&self, job: &NewJob) -> Result<JobRow, StoreError>;

    async fn get_job(&self, id: i64) -> Result<Option<JobRow>, StoreError>;

    /// The newest job with this config hash, if any.
    async fn find_job_by_config_hash(&self, hash: &str) -> Result<Option<JobRow>, StoreError>;

    /// The newest job with this name, if any.
    async fn find_job_by_name(&self, name: &str) -> Result<Option<JobRow>, StoreError>;

    /// Every job, newest first (the service's job list).
    async fn all_jobs(&self) -> Result<Vec<JobRow>, StoreError>;

    /// Jobs that may still have work (pending or running), oldest first.
    async fn open_jobs(&self) -> Result<Vec<JobRow>, StoreError>;

    async fn set_job_status(&self, id: i64, status: JobStatus) -> Result<(), StoreError>;
}
