//! Working a judging job's items here: connect the judges' models, run the
//! items, and report the judgments stored.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::store::{JobRow, JobStatus};

use super::super::context::Context;
use super::super::error::RunError;
use super::super::models::{connect_endpoints, Connected};
use super::super::models::{ModelsError, RunningMock};
use super::super::options::RunOptions;
use super::super::report::JudgingReport;
use super::super::work::{owner_name, work, WorkEnd, WorkOptions};
use super::batch::{AnsweredByBatch, BatchEndpoint, BatchPhase, PhaseEnd};
use super::item::Judging;
use super::load::Loaded;
use crate::config::Target;
use crate::llm::batch::BatchClient;

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
    let (mut models, mock) = connect(ctx, &loaded).await?;
    let batch_endpoints = batch_endpoints(&loaded, mock.as_deref())?;
    for (name, endpoint) in &batch_endpoints {
        models.insert(
            name.clone(),
            Arc::new(AnsweredByBatch {
                model: endpoint.config.settings.model.clone(),
            }),
        );
    }
    let endpoints = loaded
        .used_endpoints()
        .map(|e| (e.name.clone(), e.timeout()))
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
    let mut batch_requests = 0;
    if !batch_endpoints.is_empty() {
        let phase = BatchPhase {
            store: store.as_ref(),
            job_id: row.id,
            runner: runner.as_ref(),
            endpoints: batch_endpoints,
            retry_from: match options.retry_failed {
                true => Some(BatchPhase::attempts_so_far(store.as_ref(), row.id).await?),
                false => None,
            },
            adoptable: Default::default(),
            sent: Default::default(),
        };
        match phase.run(options).await? {
            PhaseEnd::Done { sent } => batch_requests = sent,
            PhaseEnd::Stopped { sent } => {
                let end = WorkEnd::Interrupted { released: 0 };
                return report(ctx, row, resumed, &runner, (end, sent), started).await;
            }
        }
    }
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
    report(ctx, row, resumed, &runner, (end, batch_requests), started).await
}

async fn report(
    ctx: &Context,
    row: JobRow,
    resumed: bool,
    runner: &Judging,
    (end, batch_requests): (WorkEnd, u64),
    started: Instant,
) -> Result<JudgingReport, RunError> {
    let store = &ctx.store;
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
        batch_requests,
        elapsed: started.elapsed(),
    })
}

/// The judges' `batch = true` endpoints with their Batch API clients.
fn batch_endpoints(
    loaded: &Loaded,
    mock: Option<&dyn RunningMock>,
) -> Result<HashMap<String, BatchEndpoint>, RunError> {
    let mut out = HashMap::new();
    for config in loaded.used_endpoints() {
        let Some(settings) = config.batch() else {
            continue;
        };
        let base_url = match (&config.target, mock) {
            (Target::Url(url), _) => url.clone(),
            (Target::Mock, Some(mock)) => mock.base_url(),
            (Target::Mock, None) => {
                return Err(ModelsError::NoMock(config.name.clone()).into());
            }
        };
        let client = BatchClient::new(config, &base_url)?;
        out.insert(
            config.name.clone(),
            BatchEndpoint {
                config: config.clone(),
                settings,
                client,
            },
        );
    }
    Ok(out)
}
