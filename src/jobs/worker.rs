//! `sparring worker`: work the open jobs of a store, of any kind, polling for
//! new ones; or one job until it is finished.

use std::time::Duration;

use crate::store::JobStatus;

use super::context::Context;
use super::error::RunError;
use super::options::{Mode, RunOptions};
use super::progress::Notice;
use super::work::WorkEnd;
use super::work_stored_as;

/// Work open jobs in the store, or just `only_job`, until nothing is left
/// (with `only_job`) or forever, polling for new jobs, until Ctrl-C or
/// SIGTERM (then `WorkEnd::Interrupted`).
pub async fn serve_worker(
    ctx: &Context,
    only_job: Option<i64>,
    options: &RunOptions,
) -> Result<WorkEnd, RunError> {
    let store = &ctx.store;
    let mode = Mode::Worker {
        wait_for_others: only_job.is_some(),
    };
    loop {
        let jobs = match only_job {
            Some(id) => vec![store.get_job(id).await?.ok_or(RunError::NoSuchJob(id))?],
            None => store.open_jobs().await?,
        };
        let mut worked = false;
        for row in jobs {
            if row.status == JobStatus::Cancelled {
                if only_job.is_some() {
                    options.notice(Notice::CancelledNotWorked { job_id: row.id });
                }
                continue;
            }
            let counts = store.item_counts(row.id).await?;
            if counts.pending + counts.leased == 0 {
                continue;
            }
            options.notice(Notice::Working {
                job_id: row.id,
                name: row.name.clone(),
            });
            let report = work_stored_as(ctx, row.id, options, mode).await?;
            worked = true;
            match report.end().clone() {
                end @ WorkEnd::Interrupted { .. } => return Ok(end),
                WorkEnd::Cancelled { released } => options.notice(Notice::Cancelled {
                    job_id: row.id,
                    released,
                }),
                WorkEnd::Tripped { .. } => options.notice(Notice::Tripped { job_id: row.id }),
                WorkEnd::Finished => {}
            }
        }
        if only_job.is_some() {
            return Ok(WorkEnd::Finished);
        }
        if !worked {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(2)) => {}
                _ = super::shutdown::shutdown_signal() => return Ok(WorkEnd::Interrupted { released: 0 }),
            }
        }
    }
}
