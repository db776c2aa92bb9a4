//! Running jobs: submit a config as a job (or find it again), work its items in
//! this process, and report. The same pieces serve `usersim run`, `run --resume`,
//! `usersim submit` and `usersim worker`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::{self, Job, Problem};
use crate::store::{ItemCounts, JobKind, JobRow, JobStatus, JobSummary, NewJob, Store, StoreError};

use super::context::Context;
use super::generate::work_generation;
use super::judging::JudgingReport;
use super::models::{connect_models, ModelsError};
use super::plan::plan_items;
use super::progress::{Notice, ProgressSink};
use super::setup::{prepare, Prepared};
use super::synthesis::SynthesisReport;
use super::work::{owner_name, WorkEnd, WorkOptions};

#[derive(Clone, Default)]
pub struct RunOptions {
    /// Overrides the config's concurrency.
    pub concurrency: Option<usize>,
    /// Put failed items back to pending first.
    pub retry_failed: bool,
    /// Start a new job even if one with this name (or this config) exists.
    pub new_job: bool,
    /// Where progress and notices go; none for no progress.
    pub progress: Option<Arc<dyn ProgressSink>>,
    /// Stop the run (as Ctrl-C does) once this turns true.
    pub stop: Option<tokio::sync::watch::Receiver<bool>>,
}

/// Who works the job: `usersim run` (or the service), or `usersim worker`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Mode {
    /// Wait for items others hold until the job is done, then run the
    /// job's own judges.
    #[default]
    Run,
    /// One of many workers: leave the job's judges to `usersim run` or
    /// `usersim judge`, and wait for items others hold only when told to.
    Worker { wait_for_others: bool },
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("concurrency", &self.concurrency)
            .field("retry_failed", &self.retry_failed)
            .field("new_job", &self.new_job)
            .field("progress", &self.progress.is_some())
            .field("stop", &self.stop.is_some())
            .finish()
    }
}

impl RunOptions {
    /// Tell the sink, or the log when there is none (the service).
    pub(super) fn notice(&self, notice: Notice) {
        match &self.progress {
            Some(sink) => sink.notice(&notice),
            None => tracing::info!(%notice),
        }
    }
}

#[derive(Debug)]
pub struct RunReport {
    pub job: JobRow,
    /// Whether the job existed before this run.
    pub resumed: bool,
    pub end: WorkEnd,
    pub counts: ItemCounts,
    pub summary: JobSummary,
    pub elapsed: Duration,
    /// The job's own `[[judges]]`, run over its conversations once the
    /// generation finished; `None` when it has no judges or did not finish.
    pub judging: Option<JudgingReport>,
}

/// How working a stored job went, by its kind.
#[derive(Debug)]
pub enum JobReport {
    Generation(Box<RunReport>),
    Judging(Box<JudgingReport>),
    Synthesis(Box<SynthesisReport>),
}

impl JobReport {
    pub fn end(&self) -> &WorkEnd {
        match self {
            JobReport::Generation(r) => &r.end,
            JobReport::Judging(r) => &r.end,
            JobReport::Synthesis(r) => &r.end,
        }
    }

    /// The job row after the work, and its item counts.
    pub fn job(&self) -> (&JobRow, &ItemCounts) {
        match self {
            JobReport::Generation(r) => (&r.job, &r.counts),
            JobReport::Judging(r) => (&r.job, &r.counts),
            JobReport::Synthesis(r) => (&r.job, &r.counts),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the job's inputs have problems")]
    Invalid(Vec<Problem>),
    #[error(
        "job '{name}' (id {id}) already exists with a different config or dataset (stored hash {stored}…, now {now}…). \
         Run with --new-job to start a new job from this config, or `usersim run --resume {id}` to finish the old one as it was"
    )]
    ConfigChanged {
        name: String,
        id: i64,
        stored: String,
        now: String,
    },
    #[error("job {0} is not in the database")]
    NoSuchJob(i64),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Models(#[from] ModelsError),
}

/// The job row for `job`: the existing one with the same config hash (resume),
/// or a new one. A different config under an existing job's name is refused
/// unless `new_job`. Items are added idempotently either way.
pub async fn submit(
    store: &dyn Store,
    job: &Job,
    prepared: &Prepared,
    new_job: bool,
) -> Result<(JobRow, bool), RunError> {
    let existing = if new_job {
        None
    } else {
        match store.find_job_by_config_hash(&prepared.config_hash).await? {
            Some(row) => Some(row),
            None => {
                if let Some(other) = store.find_job_by_name(&job.name).await? {
                    return Err(RunError::ConfigChanged {
                        name: job.name.clone(),
                        id: other.id,
                        stored: other.config_hash.chars().take(12).collect(),
                        now: prepared.config_hash.chars().take(12).collect(),
                    });
                }
                None
            }
        }
    };
    let (row, resumed) = match existing {
        Some(row) => (row, true),
        None => {
            let row = store
                .create_job(&NewJob {
                    name: job.name.clone(),
                    kind: JobKind::Generation,
                    config_snapshot: job.snapshot.clone(),
                    config_hash: prepared.config_hash.clone(),
                })
                .await?;
            (row, false)
        }
    };
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

/// The job a stored generation job's row describes.
pub fn stored_job(row: &JobRow) -> Result<Job, RunError> {
    config::load::from_snapshot(
        &format!("job {} (stored config)", row.id),
        &row.config_snapshot,
    )
    .map_err(RunError::Invalid)
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
