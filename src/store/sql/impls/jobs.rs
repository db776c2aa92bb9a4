//! [`JobStore`] over the shared SQL.

use async_trait::async_trait;

use super::super::{dialect::Dialect, jobs, SqlStore};
use crate::store::{JobRow, JobStatus, JobStore, NewJob, StoreError};

#[async_trait]
impl<D: Dialect> JobStore for SqlStore<D> {
    #[tracing::instrument(name = "store.create_job", level = "debug", skip_all)]
    async fn create_job(&self, job: &NewJob) -> Result<JobRow, StoreError> {
        jobs::create(self, job).await
    }

    #[tracing::instrument(name = "store.get_job", level = "debug", skip_all, fields(id = id))]
    async fn get_job(&self, id: i64) -> Result<Option<JobRow>, StoreError> {
        jobs::get(self, id).await
    }

    #[tracing::instrument(name = "store.find_job_by_config_hash", level = "debug", skip_all)]
    async fn find_job_by_config_hash(&self, hash: &str) -> Result<Option<JobRow>, StoreError> {
        jobs::find_by_config_hash(self, hash).await
    }

    #[tracing::instrument(name = "store.find_job_by_name", level = "debug", skip_all)]
    async fn find_job_by_name(&self, name: &str) -> Result<Option<JobRow>, StoreError> {
        jobs::find_by_name(self, name).await
    }

    #[tracing::instrument(name = "store.all_jobs", level = "debug", skip_all)]
    async fn all_jobs(&self) -> Result<Vec<JobRow>, StoreError> {
        jobs::all(self).await
    }

    #[tracing::instrument(name = "store.open_jobs", level = "debug", skip_all)]
    async fn open_jobs(&self) -> Result<Vec<JobRow>, StoreError> {
        jobs::open(self).await
    }

    #[tracing::instrument(name = "store.set_job_status", level = "debug", skip_all, fields(id = id))]
    async fn set_job_status(&self, id: i64, status: JobStatus) -> Result<(), StoreError> {
        jobs::set_status(self, id, status).await
    }
}
