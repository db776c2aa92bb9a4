//! `sparring submit JOB.toml`: create the job and its items for workers.

use std::path::Path;

use crate::config;
use crate::jobs::{self, RunError};
use crate::store;

use super::{report_problems, EXIT_INVALID};

pub async fn submit(path: &Path, new_job: bool) -> anyhow::Result<i32> {
    let job = match config::load(path) {
        Ok(job) => job,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    // Checked before the store is opened: invalid input creates no database.
    let prepared = match jobs::generation::prepare(&job).await {
        Ok(prepared) => prepared,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let store = store::open(&job.database).await?;
    let (row, existed) = match jobs::submit(store.as_ref(), &job, &prepared, new_job).await {
        Ok(r) => r,
        Err(RunError::Invalid(problems)) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
        Err(e @ RunError::ConfigChanged { .. }) => {
            eprintln!("error: {e}");
            return Ok(EXIT_INVALID);
        }
        Err(e) => return Err(e.into()),
    };
    let counts = store.item_counts(row.id).await?;
    // SQLite folds its write-ahead log back into the file only when closed.
    store.close().await;
    println!(
        "job {} '{}' ({}): {} items, {} done",
        row.id,
        row.name,
        if existed { "existing" } else { "new" },
        counts.total(),
        counts.done
    );
    println!(
        "work it with: sparring worker --database {} --job {}",
        job.database, row.id
    );
    Ok(0)
}
