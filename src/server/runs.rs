//! The jobs this service is working right now, each a background task running
//! the runner of `usersim run --resume` for its kind (`jobs::work_stored` for a
//! generation job, `jobs::judging::resume_judging_in` for a judging job), with
//! a signal to stop it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tracing::Instrument;

use crate::jobs::judging::{resume_judging_in, JudgeOptions};
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
    pub fn start(
        &self,
        store: Arc<dyn Store>,
        database: String,
        job_id: i64,
        retry_failed: bool,
    ) -> bool {
        let Ok(mut running) = self.running.lock() else {
            return false;
        };
        if running.contains_key(&job_id) {
            return false;
        }
        let (stop, stopped) = watch::channel(false);
        running.insert(job_id, Run { stop, task: None });
        let runs = self.clone();
        let task = tokio::spawn(
            async move {
                match work(store.clone(), &database, job_id, retry_failed, stopped).await {
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

/// Work a stored job with the runner of its kind (`usersim run --resume`'s):
/// a generation job, or a judging job; its status and item counts after.
async fn work(
    store: Arc<dyn Store>,
    database: &str,
    job_id: i64,
    retry_failed: bool,
    stop: watch::Receiver<bool>,
) -> Result<(JobStatus, ItemCounts), RunError> {
    let row = store
        .get_job(job_id)
        .await?
        .ok_or(RunError::NoSuchJob(job_id))?;
    if row.kind == "judging" {
        let options = JudgeOptions {
            retry_failed,
            quiet: true,
            stop: Some(stop),
            ..JudgeOptions::default()
        };
        let report = resume_judging_in(store, database, row, &options).await?;
        return Ok((report.job.status, report.counts));
    }
    let options = RunOptions {
        retry_failed,
        quiet: true,
        stop: Some(stop),
        ..RunOptions::default()
    };
    let report = jobs::work_stored(store, database, job_id, &options).await?;
    Ok((report.job.status, report.counts))
}
