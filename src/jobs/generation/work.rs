//! Working a generation job here: connect its models, work its items with
//! the item runner of `item`, set its status; then its report, once the
//! caller has judged it (or not).

use std::time::{Duration, Instant};

use crate::config::Job;
use crate::store::{ItemCounts, JobRow, JobStatus, Store};

use super::super::context::Context;
use super::super::error::RunError;
use super::super::models::connect_models;
use super::super::options::{Mode, RunOptions};
use super::super::report::{JudgingReport, RunReport};
use super::super::work::{owner_name, WorkEnd, WorkOptions};
use super::item::work_generation;
use super::setup::{with_tools_model, Prepared};

/// A generation job worked here, before its report.
pub(in crate::jobs) struct Worked {
    row: JobRow,
    resumed: bool,
    started: Instant,
    pub(in crate::jobs) end: WorkEnd,
    counts: ItemCounts,
}

/// Work a generation job here: `run` is its row, whether it existed before
/// this command, and when the command started.
pub(in crate::jobs) async fn work_here(
    ctx: &Context,
    (row, resumed, started): (JobRow, bool, Instant),
    job: &Job,
    prepared: Prepared,
    options: &RunOptions,
    mode: Mode,
) -> Result<Worked, RunError> {
    let store = &ctx.store;
    if options.retry_failed {
        store.reset_failed_items(row.id).await?;
    }
    store.set_job_status(row.id, JobStatus::Running).await?;
    let models = connect_models(job, &prepared.scenarios, ctx.mock()).await?;
    let prepared = with_tools_model(job, prepared, &models)
        .await
        .map_err(|p| RunError::Invalid(vec![p]))?;
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
    Ok(Worked {
        row,
        resumed,
        started,
        end,
        counts,
    })
}

impl Worked {
    pub(in crate::jobs) fn job_id(&self) -> i64 {
        self.row.id
    }

    /// The report of the work, with the judging of the job's conversations
    /// by its own `[[judges]]` when they were judged after it.
    pub(in crate::jobs) async fn report(
        self,
        store: &dyn Store,
        judging: Option<JudgingReport>,
    ) -> Result<RunReport, RunError> {
        let Worked {
            row,
            resumed,
            started,
            end,
            counts,
        } = self;
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
}

/// The endpoints (name, timeout) the roles of `job` talk to.
fn role_endpoints(job: &Job) -> Vec<(String, Duration)> {
    [&job.policy_endpoint, &job.user_endpoint]
        .into_iter()
        .chain(job.tools_endpoint.as_ref())
        .filter_map(|name| job.endpoints.get(name))
        .map(|e| (e.name.clone(), e.timeout()))
        .collect()
}
