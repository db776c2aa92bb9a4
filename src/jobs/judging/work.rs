//! Working a judging job's items here: connect the judges' models, run the
//! items, and report the judgments stored.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::store::{JobRow, JobStatus};

use super::super::context::Context;
use super::super::error::RunError;
use super::super::models::{connect_endpoints, Connected};
use super::super::options::RunOptions;
use super::super::report::JudgingReport;
use super::super::work::{owner_name, work, WorkOptions};
use super::item::Judging;
use super::load::Loaded;

/// The judge models, one `Endpoint` per endpoint name the judges use; mock
/// endpoints talk to a mock started by the context's starter.
async fn connect(ctx: &Context, loaded: &Loaded) -> Result<Connected, RunError> {
    Ok(connect_endpoints(
        loaded.used_endpoints(),
        &loaded.scenarios,
        &loaded.source.mock,
        ctx.mock(),
    )
    .await?)
}

pub(super) async fn work_judging(
    ctx: &Context,
    row: JobRow,
    resumed: bool,
    loaded: Loaded,
    options: &RunOptions,
    started: Instant,
) -> Result<JudgingReport, RunError> {
    let store = ctx.store.clone();
    store.set_job_status(row.id, JobStatus::Running).await?;
    let (models, mock) = connect(ctx, &loaded).await?;
    let endpoints = loaded
        .used_endpoints()
        .map(|e| (e.name.clone(), e.timeout))
        .collect();
    let settings = loaded.source.settings;
    let concurrency = options.concurrency.unwrap_or(loaded.source.concurrency);
    let source_job = loaded.source_id;
    let runner = Arc::new(Judging::new(
        store.clone(),
        row.id,
        source_job,
        loaded,
        models,
    ));
    let end = work(
        store.clone(),
        row.id,
        runner.clone(),
        settings,
        owner_name("judge"),
        WorkOptions {
            concurrency,
            wait_for_others: true,
            poll: Duration::from_millis(500).min(settings.lease / 2),
            progress: options.progress.clone(),
            endpoints,
            stop: options.stop.clone(),
        },
    )
    .await?;
    drop(mock);
    let counts = store.item_counts(row.id).await?;
    store
        .set_job_status(row.id, end.job_status(&counts))
        .await?;
    let outcomes = runner.outcomes(store.as_ref()).await?;
    Ok(JudgingReport {
        job: store.get_job(row.id).await?.unwrap_or(row),
        resumed,
        end,
        counts,
        outcomes,
        calls_made: runner.calls_made.load(std::sync::atomic::Ordering::Relaxed),
        elapsed: started.elapsed(),
    })
}
