//! Running jobs: submit a config as a job (or find it again), work its items in
//! this process, and report. The same pieces serve `usersim run`, `run --resume`,
//! `usersim submit` and `usersim worker`.

use std::time::{Duration, Instant};

use crate::config::{Job, Problem};
use crate::store::{JobKind, JobRow, JobStatus, NewJob, Store};

use super::context::Context;
use super::error::RunError;
use super::generate::work_generation;
use super::models::connect_models;
use super::options::{Mode, RunOptions};
use super::plan::plan_items;
use super::progress::Notice;
use super::report::{JobReport, RunReport};
use super::setup::{prepare, Prepared};
use super::stored::{find_or_create, stored_job, ByName};
use super::work::{owner_name, WorkEnd, WorkOptions};

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
        job.dataset.personas_per_scenario,
        job.concurrency.saturating_mul(2),
    );
    store.add_items(row.id, &items).await?;
    Ok((row, resumed))
}

/// Check a loaded job's inputs and [`submit`] it to `store`: `usersim submit`
/// and the service's `POST /v1/jobs`.
pub async fn check_and_submit(
    store: &dyn Store,
    job: &Job,
    new_job: bool,
) -> Result<(JobRow, bool), RunError> {
    let prepared = prepare(job).await.map_err(RunError::Invalid)?;
    submit(store, job, &prepared, new_job).await
}

/// `usersim run JOB.toml`: submit (or resume) and work the job here until done.
pub async fn run(ctx: &Context, job: &Job, options: &RunOptions) -> Result<RunReport, RunError> {
    let prepared = prepare(job).await.map_err(RunError::Invalid)?;
    run_prepared(ctx, job, prepared, options).await
}

/// [`run`] with the job's inputs already read and checked by [`prepare`]:
/// the CLI checks them before it opens the store, so that invalid input
/// creates no database and changes no existing one.
pub async fn run_prepared(
    ctx: &Context,
    job: &Job,
    prepared: Prepared,
    options: &RunOptions,
) -> Result<RunReport, RunError> {
    let started = Instant::now();
    let (row, resumed) = submit(ctx.store.as_ref(), job, &prepared, options.new_job).await?;
    let run = (row, resumed, started);
    work_generation_here(ctx, run, job, prepared, options, Mode::Run).await
}

/// Work stored job `job_id` here until done, with the runner of its kind,
/// from its stored config: `usersim run --resume`, `usersim worker`, and jobs
/// submitted to the service. The one place a job's kind picks its runner.
pub async fn work_stored(
    ctx: &Context,
    job_id: i64,
    options: &RunOptions,
) -> Result<JobReport, RunError> {
    work_stored_as(ctx, job_id, options, Mode::Run).await
}

/// [`work_stored`] by `usersim run` and the service, or by a worker.
pub(super) async fn work_stored_as(
    ctx: &Context,
    job_id: i64,
    options: &RunOptions,
    mode: Mode,
) -> Result<JobReport, RunError> {
    let row = ctx
        .store
        .get_job(job_id)
        .await?
        .ok_or(RunError::NoSuchJob(job_id))?;
    match row.kind {
        JobKind::Generation => {
            let started = Instant::now();
            let job = stored_job(&row)?;
            let prepared = prepare(&job).await.map_err(RunError::Invalid)?;
            if prepared.config_hash != row.config_hash {
                options.notice(Notice::InputsChanged { job_id: row.id });
            }
            let run = (row, true, started);
            let report = work_generation_here(ctx, run, &job, prepared, options, mode).await?;
            Ok(JobReport::Generation(Box::new(report)))
        }
        JobKind::Judging => Ok(JobReport::Judging(Box::new(
            super::judging::resume_judging(ctx, row, options).await?,
        ))),
        JobKind::Synthesis => Ok(JobReport::Synthesis(Box::new(
            super::synthesis::resume_synthesis(ctx, row, options, mode).await?,
        ))),
    }
}

/// The deterministic user checks a stored generation job's config lists in
/// `[user_simulator] drop_flagged`: exports leave out what they flag unless
/// told to keep it (none when its stored config cannot be read).
pub fn drop_flagged_user_checks(row: &JobRow) -> Vec<crate::fidelity::UserFlag> {
    stored_job(row)
        .map(|job| {
            job.user_simulator
                .drop_flagged
                .iter()
                .filter_map(|name| crate::fidelity::UserFlag::parse(name))
                .collect()
        })
        .unwrap_or_default()
}

/// The endpoints (name, timeout) the roles of `job` talk to.
pub(super) fn role_endpoints(job: &Job) -> Vec<(String, Duration)> {
    [&job.policy_endpoint, &job.user_endpoint]
        .into_iter()
        .chain(job.tools_endpoint.as_ref())
        .filter_map(|name| job.endpoints.get(name))
        .map(|e| (e.name.clone(), e.timeout))
        .collect()
}

/// Work a generation job here: `run` is its row, whether it existed before
/// this command, and when the command started.
async fn work_generation_here(
    ctx: &Context,
    (row, resumed, started): (JobRow, bool, Instant),
    job: &Job,
    prepared: Prepared,
    options: &RunOptions,
    mode: Mode,
) -> Result<RunReport, RunError> {
    let store = &ctx.store;
    if options.retry_failed {
        store.reset_failed_items(row.id).await?;
    }
    store.set_job_status(row.id, JobStatus::Running).await?;
    let models = connect_models(job, &prepared.scenarios, ctx.mock()).await?;
    let mut prepared = prepared;
    if let Some(model) = &models.tools {
        // The environment as validated had no model to play its tools.
        prepared.environment = crate::env::open_environment_with(&job.environment, Some(model))
            .await
            .map_err(|e| {
                RunError::Invalid(vec![Problem::at_field(
                    &job.source,
                    job.environment.field(),
                    e.to_string(),
                )])
            })?;
    }
    let (owner, wait_for_others) = match mode {
        Mode::Run => ("run", true),
        Mode::Worker { wait_for_others } => ("worker", wait_for_others),
    };
    let end = work_generation(
        store.clone(),
        row.id,
        job,
        prepared,
        &models,
        owner_name(owner),
        WorkOptions {
            concurrency: options.concurrency.unwrap_or(job.concurrency),
            wait_for_others,
            poll: Duration::from_millis(500).min(job.lease / 2),
            progress: options.progress.clone(),
            endpoints: role_endpoints(job),
            stop: options.stop.clone(),
        },
    )
    .await?;
    drop(models);
    let counts = store.item_counts(row.id).await?;
    store
        .set_job_status(row.id, end.job_status(&counts))
        .await?;
    let judges_here = mode == Mode::Run && !job.judges.is_empty();
    let judging = if judges_here && end == WorkEnd::Finished {
        let options = RunOptions {
            new_job: false,
            ..options.clone()
        };
        Some(super::judging::judge_generation_job(ctx, row.id, &options).await?)
    } else {
        None
    };
    let job_row = store.get_job(row.id).await?.unwrap_or(row);
    Ok(RunReport {
        judging,
        summary: store.job_summary(job_row.id).await?,
        job: job_row,
        resumed,
        end,
        counts,
        elapsed: started.elapsed(),
    })
}
