//! `usersim worker --database URL [--job ID]`

use crate::jobs::{self, RunError};

use super::{report_problems, EXIT_INVALID};

pub async fn worker(
    database: &str,
    job: Option<i64>,
    concurrency: Option<usize>,
    quiet: bool,
) -> anyhow::Result<i32> {
    match jobs::serve_worker(database, job, concurrency, quiet).await {
        Ok(()) => Ok(0),
        Err(RunError::Invalid(problems)) => {
            report_problems(&problems);
            Ok(EXIT_INVALID)
        }
        Err(e @ RunError::NoSuchJob(_)) => {
            eprintln!("error: {e}");
            Ok(EXIT_INVALID)
        }
        Err(e) => Err(e.into()),
    }
}
