//! Submitting a judging job (storing it with its items, or finding the one
//! with the same judges and target) and resuming a stored one.

use std::time::Instant;

use crate::store::{self, JobKind, JobRow, NewJob, Store};

use super::super::context::Context;
use super::super::error::RunError;
use super::super::options::RunOptions;
use super::super::report::JudgingReport;
use super::super::stored::{find_or_create, ByName};
use super::load::{load, problem, spec_hash, Loaded};
use super::plan::plan;
use super::spec::{JudgesSource, JudgingSpec, JudgingTarget};
use super::work::work_judging;

/// Submit (or find) the judging job for `spec` and work it here until done.
pub async fn judge(
    ctx: &Context,
    spec: JudgingSpec,
    name: &str,
    options: &RunOptions,
) -> Result<JudgingReport, RunError> {
    let started = Instant::now();
    let store = &ctx.store;
    let (row, resumed, loaded) =
        submit_loaded(store.as_ref(), &spec, name, options.new_job).await?;
    if options.retry_failed {
        store.reset_failed_items(row.id).await?;
    }
    work_judging(ctx, row, resumed, loaded, options, started).await
}

/// Check `spec` (its judges, their endpoints, the jobs it names), then store
/// the judging job with its items, or find the one with the same judges and
/// target (adding items for conversations stored since). Returns the job and
/// whether it existed; nothing is judged yet.
pub async fn submit_judging(
    store: &dyn Store,
    spec: &JudgingSpec,
    name: &str,
    new_job: bool,
) -> Result<(JobRow, bool), RunError> {
    let (row, existed, _) = submit_loaded(store, spec, name, new_job).await?;
    Ok((row, existed))
}

async fn submit_loaded(
    store: &dyn Store,
    spec: &JudgingSpec,
    name: &str,
    new_job: bool,
) -> Result<(JobRow, bool, Loaded), RunError> {
    let loaded = load(store, spec).await?;
    let hash = spec_hash(&loaded, spec);
    let (row, resumed) = find_or_create(store, &hash, ByName::Ignored, new_job, || {
        Ok(NewJob {
            name: format!("{name}-{}", &hash[..8]),
            kind: JobKind::Judging,
            config_snapshot: serde_json::to_string_pretty(spec)
                .map_err(|e| store::StoreError::Corrupt(e.to_string()))?,
            config_hash: hash.clone(),
        })
    })
    .await?;
    let items = plan(store, &loaded, spec).await?;
    store.add_items(row.id, &items).await?;
    Ok((row, resumed, loaded))
}

/// A name for a judging job of `target` (the job's hash is appended).
pub fn job_name(target: &JudgingTarget) -> String {
    match target {
        JudgingTarget::Job { job_id } => format!("judge-job-{job_id}"),
        JudgingTarget::Pairwise { a, b, .. } => format!("judge-{a}-vs-{b}"),
    }
}

/// `sparring run`: judge a generation job with its own `[[judges]]`.
pub async fn judge_generation_job(
    ctx: &Context,
    job_id: i64,
    options: &RunOptions,
) -> Result<JudgingReport, RunError> {
    let spec = JudgingSpec {
        judges: JudgesSource::Job { job_id },
        target: JudgingTarget::Job { job_id },
        min_reward: None,
    };
    let name = job_name(&spec.target);
    judge(ctx, spec, &name, options).await
}

/// Rebuild a stored judging job and work it here (resume, workers, the
/// service): see `jobs::work_stored`.
pub(in crate::jobs) async fn resume_judging(
    ctx: &Context,
    row: JobRow,
    options: &RunOptions,
) -> Result<JudgingReport, RunError> {
    let started = Instant::now();
    let spec: JudgingSpec = serde_json::from_str(&row.config_snapshot).map_err(|e| {
        problem(
            &format!("job {}", row.id),
            format!("the stored judging job cannot be read: {e}"),
        )
    })?;
    let loaded = load(ctx.store.as_ref(), &spec).await?;
    if options.retry_failed {
        ctx.store.reset_failed_items(row.id).await?;
    }
    work_judging(ctx, row, true, loaded, options, started).await
}
