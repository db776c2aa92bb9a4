//! The NDJSON body of `/v1/rollouts`, read from the store by cursor: each
//! time the job's work says an item finished (or every second), the
//! conversations stored since the last one read, and the items that failed
//! since, become lines. What the reader has not read yet waits in the store,
//! not in memory, so a slow reader makes the server buffer nothing; the
//! conversations in flight are bounded by the job's concurrency. When the
//! body is dropped before the job ended (the client went away), the job's
//! run here is stopped: its conversations in flight are dropped unstored
//! and their items released, and the job is marked cancelled.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use futures_util::Stream;
use tokio::sync::Notify;

use crate::jobs::{Notice, ProgressSink, ProgressSnapshot};
use crate::store::{JobKind, JobStatus, Store, StoreError};

use super::super::Runs;
use super::groups::Groups;
use super::lines::{Failure, Line, Rollout, Summary};

/// Conversations read from the store at once.
const PAGE: u32 = 128;
/// Longest wait for a finished item before the store is read anyway.
const POLL: Duration = Duration::from_secs(1);
/// A `progress` line goes out after this long without another line, so a
/// trainer sees the job alive and a reader that went away is noticed (the
/// write fails) while nothing finishes.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// What the job's work tells the stream: an item finished, the failures so
/// far, the work ended.
#[derive(Default)]
pub struct Signal {
    wake: Notify,
    failed: AtomicU64,
    ended: AtomicBool,
}

impl Signal {
    /// The work ended (however: done, cancelled, an error).
    pub fn end(&self) {
        self.ended.store(true, Ordering::Release);
        self.wake.notify_one();
    }

    fn ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }
}

impl ProgressSink for Signal {
    fn update(&self, progress: &ProgressSnapshot) {
        // The job's own judges report their progress here too, after it.
        if progress.kind == JobKind::Generation {
            self.failed.store(progress.failed, Ordering::Release);
            self.wake.notify_one();
        }
    }

    fn finished(&self, progress: &ProgressSnapshot) {
        if progress.kind == JobKind::Generation {
            self.failed.store(progress.failed, Ordering::Release);
            self.end();
        }
    }

    fn notice(&self, notice: &Notice) {
        tracing::info!(%notice);
    }
}

/// Stops the job's run here when dropped before [`CancelOnDrop::disarm`].
struct CancelOnDrop {
    runs: Runs,
    job_id: i64,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.armed && self.runs.stop(self.job_id) {
            tracing::info!(
                job = self.job_id,
                "the rollouts request went away: its job is cancelled"
            );
        }
    }
}

struct Reader {
    store: Arc<dyn Store>,
    job_id: i64,
    signal: Arc<Signal>,
    cursor: i64,
    failures_seen: HashSet<i64>,
    groups: Groups,
    rollouts: u64,
    model_calls: i64,
    started: Instant,
    last_line: Instant,
    guard: CancelOnDrop,
    first: Option<String>,
    ended: bool,
}

/// The stream of job `job_id`'s lines, the `job` line first.
pub fn rollouts(
    store: Arc<dyn Store>,
    runs: Runs,
    (job_id, k): (i64, u32),
    first: String,
    signal: Arc<Signal>,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    let reader = Reader {
        store,
        job_id,
        signal,
        cursor: 0,
        failures_seen: HashSet::new(),
        groups: Groups::new(job_id, k),
        rollouts: 0,
        model_calls: 0,
        started: Instant::now(),
        last_line: Instant::now(),
        guard: CancelOnDrop {
            runs,
            job_id,
            armed: true,
        },
        first: Some(first),
        ended: false,
    };
    futures_util::stream::unfold(reader, |mut reader| async move {
        let chunk = reader.next_chunk().await?;
        Some((Ok(Bytes::from(chunk)), reader))
    })
}

impl Reader {
    /// The next lines to send; `None` once the summary was sent.
    async fn next_chunk(&mut self) -> Option<String> {
        if let Some(first) = self.first.take() {
            return Some(first);
        }
        if self.ended {
            return None;
        }
        loop {
            // Read before the store: once the work ended, what it stored is
            // all there, and one more read finds it.
            let ended = self.signal.ended();
            let mut out = String::new();
            if let Err(e) = self.read(&mut out).await {
                tracing::error!(
                    job = self.job_id,
                    "the rollouts stream cannot read the store: {e}"
                );
                self.ended = true;
                out.push_str(
                    &serde_json::json!({"type": "error", "job_id": self.job_id,
                        "error": "the stream cannot read the store; the server log has the detail"})
                    .to_string(),
                );
                out.push('\n');
                return Some(out);
            }
            if !out.is_empty() {
                self.last_line = Instant::now();
                return Some(out);
            }
            if ended {
                self.ended = true;
                return Some(self.summary().await);
            }
            let quiet = self.last_line.elapsed();
            if quiet >= PROGRESS_EVERY {
                self.last_line = Instant::now();
                return Some(
                    Line::Progress {
                        job_id: self.job_id,
                        rollouts: self.rollouts,
                        failed: self.failures_seen.len() as u64,
                        elapsed_secs: self.started.elapsed().as_secs_f64(),
                    }
                    .text(),
                );
            }
            let wait = POLL.min(PROGRESS_EVERY - quiet);
            let _ = tokio::time::timeout(wait, self.signal.wake.notified()).await;
        }
    }

    /// Lines for what was stored since the last read: a page of
    /// conversations, and the items that failed since.
    async fn read(&mut self, out: &mut String) -> Result<(), StoreError> {
        let page = self
            .store
            .conversations_page(self.job_id, self.cursor, PAGE)
            .await?;
        for stored in &page {
            let c = &stored.conversation;
            self.cursor = self.cursor.max(c.id);
            self.rollouts += 1;
            self.model_calls += stored.usage.iter().map(|u| u.calls).sum::<i64>();
            let tokens = self.store.message_tokens(c.id).await?;
            out.push_str(&Line::Rollout(Box::new(Rollout::of(stored, &tokens))).text());
            if let Some(group) = self
                .groups
                .rollout(&c.scenario_id, c.id, c.sample, c.reward)
            {
                out.push_str(&Line::Group(group).text());
            }
        }
        let failed = self.signal.failed.load(Ordering::Acquire);
        if failed > self.failures_seen.len() as u64 || (self.signal.ended() && failed > 0) {
            for item in self.store.failed_items(self.job_id).await? {
                if !self.failures_seen.insert(item.id) {
                    continue;
                }
                out.push_str(&Line::Error(Failure::of(&item)).text());
                if let Some(group) = self.groups.failure(&item.scenario_id) {
                    out.push_str(&Line::Group(group).text());
                }
            }
        }
        Ok(())
    }

    /// The job's status once its work set it: the work tells it ended just
    /// before it writes the status.
    async fn final_status(&self) -> String {
        let mut status = "unknown".to_string();
        for _ in 0..50 {
            match self.store.get_job(self.job_id).await {
                Ok(Some(job)) => {
                    status = job.status.as_str().to_string();
                    if !matches!(job.status, JobStatus::Pending | JobStatus::Running) {
                        break;
                    }
                }
                Ok(None) | Err(_) => break,
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        status
    }

    async fn summary(&mut self) -> String {
        self.guard.armed = false;
        let status = self.final_status().await;
        Line::Summary(Summary {
            job_id: self.job_id,
            status,
            rollouts: self.rollouts,
            failed: self.failures_seen.len() as u64,
            groups: self.groups.closed,
            flat_groups: self.groups.flat,
            open_groups: self.groups.open(),
            model_calls: self.model_calls,
            elapsed_secs: self.started.elapsed().as_secs_f64(),
        })
        .text()
    }
}
