//! The jobs this service is working right now, each a background task running
//! `jobs::work_stored` (the runner of `sparring run --resume`, for any kind of
//! job), with a signal to stop it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tracing::Instrument;

use crate::jobs::{self, RunError, RunOptions};
use crate::store::{ItemCounts, JobStatus, Store};

#[derive(Clone, Default)]
pub struct Runs {
    running: Arc<Mutex<HashMap<i64, Run>>>,
}

struct Run {
    stop: watch::Sender<bool>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Runs {
    /// Start working `job_id` in the background, unless it already runs here.
    /// Returns whether it was started.
    pub fn start(&self, ctx: jobs::Context, job_id: i64, retry_failed: bool) -> bool {
        let store = ctx.store.clone();
        self.start_with(job_id, store, move |stopped| async move {
            work(&ctx, job_id, retry_failed, stopped).await
        })
    }

    /// Start `work` (given the signal to stop) as the run of `job_id` here,
    /// unless one runs already: stopped, cancelled and waited for like any
    /// run of this service. Returns whether it was started.
    pub fn start_with<F, Fut>(&self, job_id: i64, store: Arc<dyn Store>, work: F) -> bool
    where
        F: FnOnce(watch::Receiver<bool>) -> Fut,
        Fut: std::future::Future<Output = Result<(JobStatus, ItemCounts), RunError>>
            + Send
            + 'static,
    {
        let Ok(mut running) = self.running.lock() else {
            return false;
        };
        if running.contains_key(&job_id) {
            return false;
        }
        let (stop, stopped) = watch::channel(false);
        running.insert(job_id, Run { stop, task: None });
        let runs = self.clone();
        let work = work(stopped);
        let task = tokio::spawn(
            async move {
                match work.await {
                    Ok((status, counts)) => tracing::info!(
                        status = status.as_str(),
                        done = counts.done,
                        failed = counts.failed,
                        "job run ended"
                    ),
                    Err(e) => {
                        tracing::error!("job run failed: {}", super::error::error_chain(&e));
                        if let Err(e) = store.set_job_status(job_id, JobStatus::Failed).await {
                            tracing::error!("cannot mark the job failed: {e}");
                        }
                    }
                }
                if let Ok(mut running) = runs.running.lock() {
                    running.remove(&job_id);
                }
            }
            // `work` opens the job's span (id, name, kind) itself.
            .in_current_span(),
        );
        if let Some(run) = running.get_mut(&job_id) {
            run.task = Some(task);
        }
        true
    }

    pub fn is_running(&self, job_id: i64) -> bool {
        self.running
            .lock()
            .is_ok_and(|running| running.contains_key(&job_id))
    }

    /// Ask a job running here to stop; its run then releases its items and
    /// marks the job cancelled. Returns whether it was running here.
    pub fn stop(&self, job_id: i64) -> bool {
        let Ok(running) = self.running.lock() else {
            return false;
        };
        match running.get(&job_id) {
            Some(run) => {
                run.stop.send_replace(true);
                true
            }
            None => false,
        }
    }

    /// Stop every run and wait until each has released its items.
    pub async fn stop_all_and_wait(&self) {
        let tasks: Vec<_> = match self.running.lock() {
            Ok(mut running) => running
                .values_mut()
                .filter_map(|run| {
                    run.stop.send_replace(true);
                    run.task.take()
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        for task in tasks {
            let _ = task.await;
        }
    }
}

/// Work a stored job with the runner of its kind; its status and item
/// counts after. No progress output: the service reports progress as events.
async fn work(
    ctx: &jobs::Context,
    job_id: i64,
    retry_failed: bool,
    stop: watch::Receiver<bool>,
) -> Result<(JobStatus, ItemCounts), RunError> {
    let options = RunOptions {
        retry_failed,
        stop: Some(stop),
        ..RunOptions::default()
    };
    let report = jobs::work_stored(ctx, job_id, &options).await?;
    let (job, counts) = report.job();
    Ok((job.status, *counts))
}
