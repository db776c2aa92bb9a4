//! Jobs: planning items, preparing inputs and models, working items with leases
//! and heartbeats, the circuit breaker, and progress. The store and the way
//! to start the mock come from the edge in a [`Context`]; progress goes to a
//! [`ProgressSink`] the edge renders.
//!
//! One folder per kind of job (`generation/`, `judging/`, `synthesis/`,
//! `import/`) over
//! the shared machinery at this level (the work loop, leases, group commit,
//! the circuit breaker, progress, and the types every kind uses). The shared
//! modules import no kind and no kind imports another: the kinds meet only
//! here, where [`work_stored`] picks a stored job's folder by its kind and
//! [`run`] judges a generation job with its own judges once it is done.

pub mod breaker;
pub mod commit;
pub mod context;
pub mod error;
pub mod generation;
pub mod hash;
pub mod import;
pub mod judge_calls;
pub mod judging;
pub mod models;
pub mod options;
pub mod progress;
pub mod recheck;
pub mod report;
pub mod seed;
pub mod shutdown;
pub mod stored;
pub mod synthesis;
pub mod totals;
pub mod work;
pub mod worker;

use std::time::Instant;

use crate::config::Job;
use crate::store::{JobKind, JobRow};

pub use context::Context;
pub use error::RunError;
pub use generation::{check_and_submit, submit};
pub use generation::{prepare, Prepared};
pub use models::{MockStarter, RunningMock};
use options::Mode;
pub use options::RunOptions;
pub use progress::{Notice, ProgressSink, ProgressSnapshot};
pub use report::{JobReport, RunReport};
pub use shutdown::{shutdown_signal, Shutdown};
pub use stored::stored_job;
pub use work::WorkEnd;
pub use worker::serve_worker;

/// `sparring run JOB.toml`: submit (or resume) and work the job here until done.
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
    generate_then_judge(ctx, run, job, prepared, options, Mode::Run).await
}

/// Work a generation job [`submit`]ted just now here, from `job` as it is
/// in memory (not from its stored config): the service's `/v1/rollouts`,
/// whose policy endpoint may carry a key the stored config never holds.
/// Judged with its own judges once done, as [`run`] judges.
pub async fn work_submitted(
    ctx: &Context,
    row: JobRow,
    job: &Job,
    prepared: Prepared,
    options: &RunOptions,
) -> Result<RunReport, RunError> {
    let run = (row, false, Instant::now());
    generate_then_judge(ctx, run, job, prepared, options, Mode::Run).await
}

/// Work stored job `job_id` here until done, with the runner of its kind,
/// from its stored config: `sparring run --resume`, `sparring worker`, and jobs
/// submitted to the service. The one place a job's kind picks its runner.
pub async fn work_stored(
    ctx: &Context,
    job_id: i64,
    options: &RunOptions,
) -> Result<JobReport, RunError> {
    work_stored_as(ctx, job_id, options, Mode::Run).await
}

/// [`work_stored`] by `sparring run` and the service, or by a worker.
async fn work_stored_as(
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
            let (job, prepared) = generation::prepare_stored(&row, options).await?;
            let run = (row, true, started);
            let report = generate_then_judge(ctx, run, &job, prepared, options, mode).await?;
            Ok(JobReport::Generation(Box::new(report)))
        }
        JobKind::Judging => Ok(JobReport::Judging(Box::new(
            judging::resume_judging(ctx, row, options).await?,
        ))),
        JobKind::Synthesis => Ok(JobReport::Synthesis(Box::new(
            synthesis::resume_synthesis(ctx, row, options, mode).await?,
        ))),
        JobKind::Import => Err(RunError::NothingToWork {
            id: row.id,
            name: row.name,
        }),
    }
}

/// Work a generation job here (`run` is its row, whether it existed before
/// this command, and when the command started); then, by `sparring run` and
/// the service, once every item is done, judge its conversations with its
/// own `[[judges]]`.
async fn generate_then_judge(
    ctx: &Context,
    run: (JobRow, bool, Instant),
    job: &Job,
    prepared: Prepared,
    options: &RunOptions,
    mode: Mode,
) -> Result<RunReport, RunError> {
    let worked = generation::work_here(ctx, run, job, prepared, options, mode).await?;
    let judges_here = mode == Mode::Run && !job.judges.is_empty();
    let judging = if judges_here && worked.end == WorkEnd::Finished {
        let options = RunOptions {
            new_job: false,
            ..options.clone()
        };
        Some(judging::judge_generation_job(ctx, worked.job_id(), &options).await?)
    } else {
        None
    };
    worked.report(ctx.store.as_ref(), judging).await
}
