//! Judging through the Batch API: before a judging job's items run, every
//! call their judges still need on a `batch = true` endpoint is sent in
//! batches, and each answer is stored in the judge-call cache; the items then
//! find their calls there and make none themselves.
//!
//! Resumable: a batch and its requests are stored before anything is sent,
//! and the provider's file and batch ids as soon as they exist (`send`), so a
//! restarted job polls the batches it made (`poll`) and never sends a request
//! twice (`plan` skips calls in flight; a failed request goes again under a
//! new `custom_id`, at most `batch_max_attempts` times, then its judgment
//! fails: never a score). `ingest` reads the output and error files.

mod custom_id;
mod ingest;
mod plan;
mod poll;
mod send;

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;

use crate::config::{BatchSettings, EndpointConfig};
use crate::llm::batch::BatchClient;
use crate::llm::{ChatModel, ChatRequest, ChatResponse, LlmError};
use crate::store::{BatchStore, Store};

use super::super::error::RunError;
use super::super::options::RunOptions;
use super::super::progress::{BatchCounts, Notice};
use super::super::shutdown::shutdown_signal;
use super::item::Judging;

/// A `batch = true` endpoint the judges use.
pub(super) struct BatchEndpoint {
    pub config: EndpointConfig,
    pub settings: BatchSettings,
    pub client: BatchClient,
}

/// Polls that may fail in a row (the server unreachable, a 5xx) before the
/// run gives up; the batches stay stored, and the next run picks them up.
const MAX_FAILED_POLLS: u32 = 10;

/// The batch phase of one judging job in this process.
pub(super) struct BatchPhase<'a> {
    pub store: &'a dyn Store,
    pub job_id: i64,
    pub runner: &'a Judging,
    pub endpoints: HashMap<String, BatchEndpoint>,
    /// `--retry-failed`: the last attempt of each call (by custom_id base)
    /// before this run; what those attempts failed or answered unreadably is
    /// sent again. `None`: what earlier batches did stands.
    pub retry_from: Option<HashMap<String, i64>>,
    /// Batches this phase may upload or create: those stored before it
    /// started (a stopped run's) and those it stored itself; not those
    /// another process is sending right now.
    pub adoptable: std::sync::Mutex<std::collections::HashSet<i64>>,
    /// Requests this phase uploaded.
    pub sent: std::sync::atomic::AtomicU64,
}

/// How the batch phase ended, and how many requests it sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PhaseEnd {
    /// Nothing left to send or wait for.
    Done { sent: u64 },
    /// Ctrl-C, SIGTERM or a stop from the service: batches in flight stay
    /// stored and are polled by the next run.
    Stopped { sent: u64 },
}

impl BatchPhase<'_> {
    /// The last attempt of each call so far, for `--retry-failed`.
    pub async fn attempts_so_far(
        store: &dyn BatchStore,
        job_id: i64,
    ) -> Result<HashMap<String, i64>, RunError> {
        let mut out: HashMap<String, i64> = HashMap::new();
        for r in store.batch_requests_of_job(job_id).await? {
            let last = out
                .entry(custom_id::base_of(&r.request.custom_id).to_string())
                .or_default();
            *last = (*last).max(r.request.attempt);
        }
        Ok(out)
    }

    /// Send, poll and ingest until every call the job's unfinished items
    /// need on a batch endpoint is answered or has used up its attempts.
    pub async fn run(&self, options: &RunOptions) -> Result<PhaseEnd, RunError> {
        let poll = self
            .endpoints
            .values()
            .map(|e| e.settings.poll)
            .min()
            .unwrap_or(Duration::from_secs(30));
        let mut failed_polls = 0;
        let mut last_counts = None;
        let stop = options.stop.clone();
        let stopping = async move {
            tokio::select! {
                _ = shutdown_signal() => {},
                () = super::super::work::stop_requested(stop) => {},
            }
        };
        tokio::pin!(stopping);
        let before: std::collections::HashSet<i64> = self
            .store
            .job_batches(self.job_id)
            .await?
            .into_iter()
            .map(|b| b.id)
            .collect();
        self.adopt(before);
        // Planning renders every unfinished item: done first, then only when
        // an ingested batch may have changed what is needed.
        let mut plan_again = true;
        loop {
            let polled = self.poll_all().await?;
            let soft_errors = polled.errors;
            let mut sent = 0;
            if plan_again || polled.ingested > 0 {
                let planned = self.plan().await?;
                sent = self.send_planned(planned).await?;
                plan_again = false;
            }
            let counts = self.counts().await?;
            if last_counts != Some(counts) && counts != BatchCounts::default() {
                options.notice(Notice::Batches {
                    job_id: self.job_id,
                    counts,
                });
                last_counts = Some(counts);
            }
            let had_errors = !soft_errors.is_empty();
            if had_errors {
                failed_polls += 1;
                for e in &soft_errors {
                    tracing::warn!(
                        job_id = self.job_id,
                        "batch: {e}; trying again at the next poll"
                    );
                }
                if failed_polls >= MAX_FAILED_POLLS {
                    if let Some(e) = soft_errors.into_iter().next() {
                        return Err(RunError::Batch(e));
                    }
                }
            } else {
                failed_polls = 0;
            }
            if counts.in_flight() == 0 && sent == 0 && !had_errors {
                return Ok(PhaseEnd::Done {
                    sent: self.sent_so_far(),
                });
            }
            tokio::select! {
                () = tokio::time::sleep(poll) => {},
                () = &mut stopping => return Ok(PhaseEnd::Stopped { sent: self.sent_so_far() }),
            }
        }
    }

    fn sent_so_far(&self) -> u64 {
        self.sent.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn adopt(&self, ids: impl IntoIterator<Item = i64>) {
        if let Ok(mut adoptable) = self.adoptable.lock() {
            adoptable.extend(ids);
        }
    }

    fn may_send(&self, id: i64) -> bool {
        self.adoptable.lock().is_ok_and(|a| a.contains(&id))
    }

    async fn counts(&self) -> Result<BatchCounts, RunError> {
        let batches = self.store.job_batches(self.job_id).await?;
        let requests = self.store.batch_requests_of_job(self.job_id).await?;
        Ok(BatchCounts {
            submitted: batches.len() as u64,
            // A batch of an endpoint the judges no longer send batches to
            // is not waited for.
            done: batches
                .iter()
                .filter(|b| b.status == "ingested" || !self.endpoints.contains_key(&b.endpoint))
                .count() as u64,
            requests: requests.len() as u64,
            answered: requests.iter().filter(|r| r.status == "answered").count() as u64,
            failed: requests.iter().filter(|r| r.status == "failed").count() as u64,
        })
    }
}

/// The model a batch endpoint's judge calls see while the items run: every
/// call was answered through a batch, so one that reaches it was not (the
/// batch phase was cut short); it fails, and the next run sends it.
pub(super) struct AnsweredByBatch {
    pub model: String,
}

#[async_trait]
impl ChatModel for AnsweredByBatch {
    fn model(&self) -> &str {
        &self.model
    }
    async fn complete(&self, _: ChatRequest) -> Result<ChatResponse, LlmError> {
        Err(LlmError::InvalidRequest(
            "this call has no answer from the Batch API yet; run the judging job again to send it"
                .into(),
        ))
    }
}
