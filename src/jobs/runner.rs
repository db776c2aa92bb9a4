//! Running jobs: submit a config as a job (or find it again), work its items in
//! this process, and report. The same pieces serve `usersim run`, `run --resume`,
//! `usersim submit` and `usersim worker`.
// Still prints to stderr until these lines go through the CLI's progress sink
// (issue 13 §1); the lint that forbids it in the library is waived here only.
#![allow(clippy::print_stderr)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::{self, Job, Problem};
use crate::store::{self, ItemCounts, JobRow, JobStatus, JobSummary, NewJob, Store, StoreError};

use super::generate::work_generation;
use super::plan::plan_items;
use super::setup::{connect_models, prepare, ModelsError, Prepared};
use super::work::{owner_name, WorkEnd, WorkOptions};

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Overrides the config's concurrency.
    pub concurrency: Option<usize>,
    /// Put failed items back to pending first.
    pub retry_failed: bool,
    /// Start a new job even if one with this name (or this config) exists.
    pub new_job: bool,
    /// No progress output.
    pub quiet: bool,
    /// Stop the run (as Ctrl-C does) once this turns true.
    pub stop: Option<tokio::sync::watch::Receiver<bool>>,
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
    pub judging: Option<super::judging::JudgingReport>,
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
                    kind: "generation".into(),
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
pub async fn run(job: &Job, options: &RunOptions) -> Result<RunReport, RunError> {
    let started = Instant::now();
    let prepared = prepare(job).await.map_err(RunError::Invalid)?;
    let store = store::open(&job.database).await?;
    let (row, resumed) = submit(store.as_ref(), job, &prepared, options.new_job).await?;
    work_here(store, row, resumed, job, prepared, options, started).await
}

/// `usersim run --resume ID`: rebuild the job from its stored config and finish it.
pub async fn resume(
    database: &str,
    job_id: i64,
    options: &RunOptions,
) -> Result<RunReport, RunError> {
    let store = store::open(database).await?;
    work_stored(store, database, job_id, options).await
}

/// Work a job already in `store` (found at `database`) here until done, from
/// its stored config: `usersim run --resume`, and jobs submitted to the service.
pub async fn work_stored(
    store: Arc<dyn Store>,
    database: &str,
    job_id: i64,
    options: &RunOptions,
) -> Result<RunReport, RunError> {
    let started = Instant::now();
    let row = store
        .get_job(job_id)
        .await?
        .ok_or(RunError::NoSuchJob(job_id))?;
    let job = stored_job(&row, database)?;
    let prepared = prepare(&job).await.map_err(RunError::Invalid)?;
    if prepared.config_hash != row.config_hash {
        eprintln!(
            "warning: the files job {} was made from have changed since; items whose scenario or persona is gone will fail",
            row.id
        );
    }
    work_here(store, row, true, &job, prepared, options, started).await
}

/// The job a stored row describes, using `database` (the one it was found in).
pub fn stored_job(row: &JobRow, database: &str) -> Result<Job, RunError> {
    let mut job = config::load::from_snapshot(
        &format!("job {} (stored config)", row.id),
        &row.config_snapshot,
    )
    .map_err(RunError::Invalid)?;
    job.database = database.to_string();
    Ok(job)
}

async fn work_here(
    store: Arc<dyn Store>,
    row: JobRow,
    resumed: bool,
    job: &Job,
    prepared: Prepared,
    options: &RunOptions,
    started: Instant,
) -> Result<RunReport, RunError> {
    if options.retry_failed {
        store.reset_failed_items(row.id).await?;
    }
    store.set_job_status(row.id, JobStatus::Running).await?;
    let models = connect_models(job, &prepared.scenarios).await?;
    let end = work_generation(
        store.clone(),
        row.id,
        job,
        prepared,
        &models,
        owner_name("run"),
        WorkOptions {
            concurrency: options.concurrency.unwrap_or(job.concurrency),
            wait_for_others: true,
            poll: Duration::from_millis(500).min(job.lease / 2),
            quiet: options.quiet,
            stop: options.stop.clone(),
        },
    )
    .await?;
    drop(models);
    let counts = store.item_counts(row.id).await?;
    store
        .set_job_status(row.id, end.job_status(&counts))
        .await?;
    let judging = if !job.judges.is_empty() && end == WorkEnd::Finished {
        let options = super::judging::JudgeOptions {
            concurrency: options.concurrency,
            retry_failed: options.retry_failed,
            new_job: false,
            quiet: options.quiet,
            stop: options.stop.clone(),
        };
        Some(super::judging::judge_generation_job(&job.database, row.id, &options).await?)
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

/// `usersim worker`: work open jobs in the database, or just `only_job`, until
/// nothing is left (with `only_job`) or forever, polling for new jobs, until
/// Ctrl-C or SIGTERM (then `WorkEnd::Interrupted`).
pub async fn serve_worker(
    database: &str,
    only_job: Option<i64>,
    concurrency: Option<usize>,
    quiet: bool,
) -> Result<WorkEnd, RunError> {
    let store = store::open(database).await?;
    let owner = owner_name("worker");
    loop {
        let jobs = match only_job {
            Some(id) => vec![store.get_job(id).await?.ok_or(RunError::NoSuchJob(id))?],
            None => store.open_jobs().await?,
        };
        let mut worked = false;
        for row in jobs {
            if row.status == JobStatus::Cancelled {
                if only_job.is_some() && !quiet {
                    eprintln!(
                        "worker {owner}: job {} is cancelled; resume it first (`usersim run --resume {}` or POST /v1/jobs/{}/resume)",
                        row.id, row.id, row.id
                    );
                }
                continue;
            }
            let counts = store.item_counts(row.id).await?;
            if counts.pending + counts.leased == 0 {
                continue;
            }
            if row.kind == "judging" {
                if !quiet {
                    eprintln!("worker {owner}: judging job {} '{}'", row.id, row.name);
                }
                let options = super::judging::JudgeOptions {
                    concurrency,
                    retry_failed: false,
                    new_job: false,
                    quiet,
                    stop: None,
                };
                let job_id = row.id;
                let report = super::judging::resume_judging(database, row, &options).await?;
                worked = true;
                match report.end {
                    WorkEnd::Interrupted { .. } => return Ok(report.end),
                    WorkEnd::Cancelled { released } if !quiet => eprintln!(
                        "worker {owner}: job {job_id} was cancelled; {released} items in flight were returned to pending"
                    ),
                    _ => {}
                }
                continue;
            }
            let job = stored_job(&row, database)?;
            let prepared = prepare(&job).await.map_err(RunError::Invalid)?;
            if !quiet {
                eprintln!("worker {owner}: working job {} '{}'", row.id, row.name);
            }
            let models = connect_models(&job, &prepared.scenarios).await?;
            let end = work_generation(
                store.clone(),
                row.id,
                &job,
                prepared,
                &models,
                owner.clone(),
                WorkOptions {
                    concurrency: concurrency.unwrap_or(job.concurrency),
                    wait_for_others: only_job.is_some(),
                    poll: Duration::from_millis(500).min(job.lease / 2),
                    quiet,
                    stop: None,
                },
            )
            .await?;
            worked = true;
            match end {
                end @ WorkEnd::Interrupted { .. } => return Ok(end),
                WorkEnd::Cancelled { released } => {
                    if !quiet {
                        eprintln!(
                            "worker {owner}: job {} was cancelled; {released} items in flight were returned to pending",
                            row.id
                        );
                    }
                }
                WorkEnd::Tripped { .. } => {
                    store.set_job_status(row.id, JobStatus::Failed).await?;
                    // The reason is logged once, where the breaker tripped.
                    eprintln!(
                        "worker {owner}: job {} stopped by its circuit breaker",
                        row.id
                    );
                }
                WorkEnd::Finished => {
                    let counts = store.item_counts(row.id).await?;
                    if counts.pending + counts.leased == 0 {
                        store.set_job_status(row.id, JobStatus::Done).await?;
                    }
                }
            }
        }
        if only_job.is_some() {
            return Ok(WorkEnd::Finished);
        }
        if !worked {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(2)) => {}
                _ = super::shutdown_signal() => return Ok(WorkEnd::Interrupted { released: 0 }),
            }
        }
    }
}
