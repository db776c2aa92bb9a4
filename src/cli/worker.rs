//! `sparring worker --database URL [--job ID]`

use crate::jobs::{self, RunError, RunOptions, WorkEnd};

use super::{report_problems, EXIT_INVALID};

pub async fn worker(
    database: &str,
    job: Option<i64>,
    concurrency: Option<usize>,
    quiet: bool,
) -> anyhow::Result<i32> {
    let ctx = super::context::context(database).await?;
    let options = RunOptions {
        concurrency,
        progress: Some(super::progress::CliProgress::new(quiet, "worker")),
        ..RunOptions::default()
    };
    let result = jobs::serve_worker(&ctx, job, &options).await;
    ctx.store.close().await;
    match result {
        Ok(WorkEnd::Interrupted { released }) => {
            let job_flag = job.map_or(String::new(), |id| format!(" --job {id}"));
            eprintln!(
                "worker stopped: {released} items in flight were returned to pending; \
                 start `sparring worker --database {database}{job_flag}` again to resume"
            );
            Ok(0)
        }
        Ok(WorkEnd::Finished | WorkEnd::Tripped { .. } | WorkEnd::Cancelled { .. }) => Ok(0),
        Err(RunError::Invalid(problems)) => {
            report_problems(&problems);
            Ok(EXIT_INVALID)
        }
        Err(e @ RunError::NoSuchJob(_)) => {
            eprintln!("error: {e}");
            Ok(super::EXIT_NOT_FOUND)
        }
        Err(e) => Err(e.into()),
    }
}
