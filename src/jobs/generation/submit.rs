//! Submitting a generation job: storing it with its items, or finding the
//! one with the same config (to resume); `sparring submit` and the service's
//! `POST /v1/jobs` check its inputs first. And reading a stored one again.

use std::collections::HashSet;

use crate::config::Job;
use crate::persona::Persona;
use crate::store::{JobKind, JobPersona, JobRow, NewItem, NewJob, Store};

use super::super::error::RunError;
use super::super::options::RunOptions;
use super::super::progress::Notice;
use super::super::stored::{find_or_create, stored_job, ByName};
use super::plan::plan_items;
use super::setup::{prepare, Prepared};

/// The job row for `job`: the existing one with the same config hash (resume),
/// or a new one. A different config under an existing job's name is refused
/// unless `new_job`. Items are added idempotently either way.
pub async fn submit(
    store: &dyn Store,
    job: &Job,
    prepared: &Prepared,
    new_job: bool,
) -> Result<(JobRow, bool), RunError> {
    let (row, resumed) = find_or_create(
        store,
        &prepared.config_hash,
        ByName::Refused(&job.name),
        new_job,
        || {
            Ok(NewJob {
                name: job.name.clone(),
                kind: JobKind::Generation,
                config_snapshot: job.snapshot.clone(),
                config_hash: prepared.config_hash.clone(),
            })
        },
    )
    .await?;
    let items = plan_items(
        job.seed,
        &prepared.scenarios,
        &prepared.personas,
        job.dataset.samples_per_scenario,
        job.dataset.personas_per_scenario(),
        job.concurrency.saturating_mul(2),
    );
    store.add_items(row.id, &items).await?;
    store
        .put_job_personas(row.id, &used_personas(&prepared.personas, &items))
        .await?;
    Ok((row, resumed))
}

/// Those of `personas` that `items` use, each once, with its attributes:
/// what the job stores of its personas (conversations keep only the id).
pub fn used_personas(personas: &[Persona], items: &[NewItem]) -> Vec<JobPersona> {
    let used: HashSet<&str> = items.iter().map(|i| i.persona_id.as_str()).collect();
    personas
        .iter()
        .filter(|p| used.contains(p.id.as_str()))
        .map(job_persona)
        .collect()
}

/// A persona as a job stores it.
pub fn job_persona(persona: &Persona) -> JobPersona {
    JobPersona {
        persona_id: persona.id.clone(),
        attributes: persona.attributes.clone(),
    }
}

/// Check a loaded job's inputs and [`submit`] it to `store`: `sparring submit`
/// and the service's `POST /v1/jobs`.
pub async fn check_and_submit(
    store: &dyn Store,
    job: &Job,
    new_job: bool,
) -> Result<(JobRow, bool), RunError> {
    let prepared = prepare(job).await.map_err(RunError::Invalid)?;
    submit(store, job, &prepared, new_job).await
}

/// A stored generation job's config and its inputs, read and checked again
/// to resume it (telling when its inputs changed since it was stored).
pub(in crate::jobs) async fn prepare_stored(
    row: &JobRow,
    options: &RunOptions,
) -> Result<(Job, Prepared), RunError> {
    let job = stored_job(row)?;
    let prepared = prepare(&job).await.map_err(RunError::Invalid)?;
    if prepared.config_hash != row.config_hash {
        options.notice(Notice::InputsChanged { job_id: row.id });
    }
    Ok((job, prepared))
}
