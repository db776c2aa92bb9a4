//! The personas a job ran with.

use async_trait::async_trait;

use crate::store::{JobPersona, StoreError};

/// The personas a job ran with.
#[async_trait]
pub trait PersonaStore: Send + Sync {
    /// In one transaction, those of `personas` that job `job_id` does not
    /// hold yet (each persona's row is stored once per job: writing them
    /// again, for a resumed job or an agent server's, changes nothing).
    /// Returns how many were new.
    async fn put_job_personas(
        &self,
        job_id: i64,
        personas: &[JobPersona],
    ) -> Result<u64, StoreError>;

    /// Job `job_id`'s personas with their attributes, by persona id; empty
    /// for a job that stored none (an import job, or one stored before them).
    async fn job_personas(&self, job_id: i64) -> Result<Vec<JobPersona>, StoreError>;
}
