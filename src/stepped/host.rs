//! A job config opened for stepped sessions: its inputs checked as `sparring
//! run` checks them, its models connected (the simulated user's, the
//! judges'), and its job in the store, found again by its config hash (marked
//! as a stepped host's) when the server restarts. Every session of the
//! config is a conversation of that job.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::config::Job;
use crate::env::ToolSpec;
use crate::jobs::generation::item::Generation;
use crate::jobs::generation::setup::with_tools_model;
use crate::jobs::generation::{job_persona, prepare};
use crate::jobs::models::{connect_models, Models};
use crate::jobs::Context;
use crate::persona::Scenario;
use crate::store::{JobKind, JobRow, JobStatus, NewJob, Store};

use super::error::SessionError;

/// A job config serving stepped sessions.
pub struct Host {
    pub(super) store: Arc<dyn Store>,
    pub(super) job_row: JobRow,
    pub(super) generation: Generation,
    /// Kept alive as long as the host: the mock they may talk to.
    _models: Models,
}

/// The stepped host's job's config hash: the job's, marked, so that
/// `sparring run` and `sparring agent` of the same config make jobs of their own.
pub fn stepped_job_hash(config_hash: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"sparring stepped sessions\n");
    hasher.update(config_hash.as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Host {
    /// Check `job`'s inputs, connect its models and find or make its job,
    /// named `NAME (sessions)`.
    pub async fn open(ctx: &Context, job: Job) -> Result<Host, SessionError> {
        let prepared = prepare(&job).await.map_err(SessionError::Config)?;
        let models = connect_models(&job, &prepared.scenarios, ctx.mock())
            .await
            .map_err(|e| {
                SessionError::Config(vec![crate::config::Problem::in_file(
                    &job.source,
                    e.to_string(),
                )])
            })?;
        let prepared = with_tools_model(&job, prepared, &models)
            .await
            .map_err(|p| SessionError::Config(vec![p]))?;
        let hash = stepped_job_hash(&prepared.config_hash);
        let store = ctx.store.clone();
        let job_row = match store.find_job_by_config_hash(&hash).await? {
            Some(row) => row,
            None => {
                store
                    .create_job(&NewJob {
                        name: format!("{} (sessions)", job.name),
                        kind: JobKind::Generation,
                        config_snapshot: job.snapshot.clone(),
                        config_hash: hash,
                    })
                    .await?
            }
        };
        // Any of them may play a session's user.
        let personas: Vec<_> = prepared.personas.iter().map(job_persona).collect();
        store.put_job_personas(job_row.id, &personas).await?;
        store.set_job_status(job_row.id, JobStatus::Running).await?;
        let generation = Generation::new(&job, prepared, &models);
        Ok(Host {
            store,
            job_row,
            generation,
            _models: models,
        })
    }

    /// The host's job in the store.
    pub fn job(&self) -> &JobRow {
        &self.job_row
    }

    /// The job config's name.
    pub fn name(&self) -> &str {
        &self.generation.job().name
    }

    /// The job config as loaded.
    pub fn config(&self) -> &Job {
        self.generation.job()
    }

    /// The tools the policy may call in `scenario`: its own, else the job's.
    pub fn tools_of(&self, scenario: &Scenario) -> Arc<[ToolSpec]> {
        scenario
            .tools
            .clone()
            .unwrap_or_else(|| self.generation.prepared().tools.clone())
    }

    /// Mark the job done (the server stops); a restart makes it running again.
    pub async fn close(&self) -> Result<(), SessionError> {
        self.store
            .set_job_status(self.job_row.id, JobStatus::Done)
            .await?;
        Ok(())
    }
}
