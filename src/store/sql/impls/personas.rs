//! [`PersonaStore`] over the shared SQL.

use async_trait::async_trait;

use super::super::{dialect::Dialect, job_personas, SqlStore};
use crate::store::{JobPersona, PersonaStore, StoreError};

#[async_trait]
impl<D: Dialect> PersonaStore for SqlStore<D> {
    #[tracing::instrument(name = "store.put_job_personas", level = "debug", skip_all, fields(job_id = job_id))]
    async fn put_job_personas(
        &self,
        job_id: i64,
        personas: &[JobPersona],
    ) -> Result<u64, StoreError> {
        job_personas::put(self, job_id, personas).await
    }

    #[tracing::instrument(name = "store.job_personas", level = "debug", skip_all, fields(job_id = job_id))]
    async fn job_personas(&self, job_id: i64) -> Result<Vec<JobPersona>, StoreError> {
        job_personas::of_job(self, job_id).await
    }
}
