//! Progress of a job's work in this process, for whoever shows it: items done
//! and failed, the rate, model calls in flight and retries so far. It is
//! pushed to a [`ProgressSink`] on every finished item and once a second in
//! between, so that a clock shown from it runs even while nothing finishes
//! (a slow local model). The library draws nothing: the CLI renders a sink.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::llm::telemetry::{self, EndpointTelemetry};
use crate::store::JobKind;

/// Where a job's progress goes. Called from the worker's tasks: keep it quick.
pub trait ProgressSink: Send + Sync {
    /// The counts now: on every finished item and at least once a second.
    fn update(&self, progress: &ProgressSnapshot);
    /// The work on the job ended here; `progress` is the last state.
    fn finished(&self, progress: &ProgressSnapshot);
    /// Something the person running the job should know that is not an error.
    fn notice(&self, notice: &Notice);
}

/// How often the counts are pushed while nothing finishes.
pub const TICK: Duration = Duration::from_secs(1);

/// A job's progress at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressSnapshot {
    pub job_id: i64,
    pub kind: JobKind,
    /// Items of the job.
    pub total: u64,
    /// Items finished before this run.
    pub already_done: u64,
    /// Items this run stored (a conversation, or a judgment).
    pub done: u64,
    pub failed: u64,
    /// Since the run started.
    pub elapsed: Duration,
    /// Requests to the job's model endpoints on the wire right now.
    pub calls_in_flight: u64,
    /// Model calls retried by this run so far.
    pub retries: u64,
}

impl ProgressSnapshot {
    /// Items finished, before this run and by it.
    pub fn position(&self) -> u64 {
        self.already_done + self.done + self.failed
    }

    /// Items stored per minute by this run.
    pub fn per_minute(&self) -> f64 {
        self.done as f64 / self.elapsed.as_secs_f64().max(1e-3) * 60.0
    }

    /// What the rate counts: conversations or judgments.
    pub fn unit(&self) -> &'static str {
        match self.kind {
            JobKind::Generation => "conv/min",
            JobKind::Judging => "judgments/min",
            JobKind::Synthesis => "proposals/min",
            JobKind::Import => "conv/min",
        }
    }

    /// Time left at this run's pace; `None` before anything finished.
    pub fn eta(&self) -> Option<Duration> {
        let finished = self.done + self.failed;
        if finished == 0 {
            return None;
        }
        let remaining = self.total.saturating_sub(self.position());
        Some(self.elapsed.mul_f64(remaining as f64 / finished as f64))
    }

    /// `done 3 failed 0 | 2 calls in flight, 1 retry | 4.5 conv/min | ETA 40s`
    pub fn summary(&self) -> String {
        let eta = self
            .eta()
            .map_or_else(|| "?".to_string(), |d| format!("{:.0}s", d.as_secs_f64()));
        format!(
            "done {} failed {} | {} call{} in flight, {} retr{} | {:.1} {} | ETA {eta}",
            self.done,
            self.failed,
            self.calls_in_flight,
            if self.calls_in_flight == 1 { "" } else { "s" },
            self.retries,
            if self.retries == 1 { "y" } else { "ies" },
            self.per_minute(),
            self.unit()
        )
    }
}

/// The first retried call of a run: which endpoint, and why (logged).
#[derive(Debug, Clone, PartialEq)]
pub struct FirstRetry {
    pub job_id: i64,
    pub endpoint: String,
    /// As `/metrics` names it: `429`, `5xx`, `timeout`, `connection`, `malformed`.
    pub reason: &'static str,
    /// The endpoint's timeout per request.
    pub timeout: Duration,
}

impl std::fmt::Display for FirstRetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match self.reason {
            "timeout" => format!(
                "a request got no answer within its timeout ({} s); a server with fewer \
                 slots than the job's concurrency queues requests until they time out",
                self.timeout.as_secs_f64()
            ),
            "429" => "the server is rate-limiting (429)".to_string(),
            "5xx" => "the server answered with an error (5xx)".to_string(),
            "connection" => "the connection to the server failed".to_string(),
            _ => "the server's answer could not be read".to_string(),
        };
        write!(
            f,
            "job {}: first retry of a model call on endpoint '{}': {why}; retrying \
             (the progress shows retries so far; SPARRING_LOG=sparring=warn logs each one)",
            self.job_id, self.endpoint
        )
    }
}

/// What the person running a job should know that is not an error.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// This process starts working a job.
    Working { job_id: i64, name: String },
    /// A stored job's files changed since it was submitted.
    InputsChanged { job_id: i64 },
    /// A cancelled job was asked for by id; it is not worked.
    CancelledNotWorked { job_id: i64 },
    /// The job was cancelled while this process worked it.
    Cancelled { job_id: i64, released: u64 },
    /// The circuit breaker stopped the job (its reason is logged once, where it tripped).
    Tripped { job_id: i64 },
    /// Where a judging job's batches are (the Batch API); said when it changes.
    Batches { job_id: i64, counts: BatchCounts },
    /// An import's first pass has read `read` conversations (and invalid
    /// lines) of `source`, checking every one before anything is stored.
    Checking { source: String, read: u64 },
    /// An import reads `source` as `format`, told from its first line when
    /// `detected`.
    Reading {
        source: String,
        format: &'static str,
        detected: bool,
    },
}

/// A judging job's batches and their requests, for the long wait.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchCounts {
    /// Batches made (ever, by any run of the job).
    pub submitted: u64,
    /// Of those, whose answers are stored.
    pub done: u64,
    /// Requests sent, counting each attempt.
    pub requests: u64,
    pub answered: u64,
    /// Failed attempts (sent again while attempts remain).
    pub failed: u64,
}

impl BatchCounts {
    /// Batches sent and not yet answered.
    pub fn in_flight(&self) -> u64 {
        self.submitted - self.done.min(self.submitted)
    }
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::Working { job_id, name } => write!(f, "working job {job_id} '{name}'"),
            Notice::InputsChanged { job_id } => write!(
                f,
                "warning: the files job {job_id} was made from have changed since; items whose \
                 scenario or persona is gone will fail"
            ),
            Notice::CancelledNotWorked { job_id } => write!(
                f,
                "job {job_id} is cancelled; resume it first (`sparring run --resume {job_id}` or \
                 POST /v1/jobs/{job_id}/resume)"
            ),
            Notice::Cancelled { job_id, released } => write!(
                f,
                "job {job_id} was cancelled; {released} items in flight were returned to pending"
            ),
            Notice::Tripped { job_id } => write!(f, "job {job_id} stopped by its circuit breaker"),
            Notice::Batches { job_id, counts } => write!(
                f,
                "job {job_id} batches: {} submitted, {} in progress, {} done | requests: {} \
                 answered, {} failed, {} sent",
                counts.submitted,
                counts.in_flight(),
                counts.done,
                counts.answered,
                counts.failed,
                counts.requests
            ),
            Notice::Checking { source, read } => write!(
                f,
                "{source}: {read} conversations read and checked so far; nothing is stored \
                 until every line is"
            ),
            Notice::Reading {
                source,
                format,
                detected: true,
            } => write!(
                f,
                "{source}: reading it as {format} (told from its first line)"
            ),
            Notice::Reading { source, format, .. } => write!(f, "{source}: reading it as {format}"),
        }
    }
}

/// A run's counts, shared by its tasks and its ticker.
#[derive(Clone)]
pub(super) struct Progress {
    inner: Arc<Inner>,
}

struct Inner {
    job_id: i64,
    kind: JobKind,
    total: u64,
    already_done: u64,
    done: AtomicU64,
    failed: AtomicU64,
    started: Instant,
    /// The job's endpoints (each name once) with their timeouts, and each
    /// one's retries before this run.
    endpoints: Vec<(Arc<EndpointTelemetry>, Duration, u64)>,
    calls_in_flight: AtomicI64,
    retries: AtomicU64,
    retry_reported: AtomicBool,
    sink: Option<Arc<dyn ProgressSink>>,
}

fn retries_of(endpoint: &EndpointTelemetry) -> Vec<(&'static str, u64)> {
    endpoint.snapshot().retries
}

impl Progress {
    /// `total` items of job `job_id`, `already_done` before this run; the
    /// job's model endpoints by name, with their timeouts.
    pub(super) fn new(
        job_id: i64,
        kind: JobKind,
        (total, already_done): (u64, u64),
        endpoints: &[(String, Duration)],
        sink: Option<Arc<dyn ProgressSink>>,
    ) -> Progress {
        let mut seen = std::collections::HashSet::new();
        let endpoints = endpoints
            .iter()
            .filter(|(name, _)| seen.insert(name.clone()))
            .map(|(name, timeout)| {
                let handle = telemetry::endpoint(name);
                let before = retries_of(&handle).iter().map(|(_, n)| n).sum();
                (handle, *timeout, before)
            })
            .collect();
        Progress {
            inner: Arc::new(Inner {
                job_id,
                kind,
                total,
                already_done,
                done: AtomicU64::new(0),
                failed: AtomicU64::new(0),
                started: Instant::now(),
                endpoints,
                calls_in_flight: AtomicI64::new(0),
                retries: AtomicU64::new(0),
                retry_reported: AtomicBool::new(false),
                sink,
            }),
        }
    }

    pub(super) fn item_done(&self) {
        self.inner.done.fetch_add(1, Ordering::Relaxed);
        self.push();
    }

    pub(super) fn item_failed(&self) {
        self.inner.failed.fetch_add(1, Ordering::Relaxed);
        self.push();
    }

    pub(super) fn snapshot(&self) -> ProgressSnapshot {
        let i = &self.inner;
        ProgressSnapshot {
            job_id: i.job_id,
            kind: i.kind,
            total: i.total,
            already_done: i.already_done,
            done: i.done.load(Ordering::Relaxed),
            failed: i.failed.load(Ordering::Relaxed),
            elapsed: i.started.elapsed(),
            calls_in_flight: u64::try_from(i.calls_in_flight.load(Ordering::Relaxed)).unwrap_or(0),
            retries: i.retries.load(Ordering::Relaxed),
        }
    }

    fn push(&self) {
        if let Some(sink) = &self.inner.sink {
            sink.update(&self.snapshot());
        }
    }

    /// Read the endpoints' calls in flight and retries, report the run's
    /// first retry (a log line at the default level, and the sink), push.
    pub(super) fn tick(&self) {
        let i = &self.inner;
        let mut in_flight = 0;
        let mut retries = 0;
        let mut first = None;
        for (endpoint, timeout, before) in &i.endpoints {
            let snapshot = endpoint.snapshot();
            in_flight += snapshot.in_flight.max(0);
            let by_reason = snapshot.retries;
            let now: u64 = by_reason.iter().map(|(_, n)| n).sum();
            let these = now.saturating_sub(*before);
            retries += these;
            if these > 0 && first.is_none() {
                let reason = by_reason
                    .iter()
                    .find(|(_, n)| *n > 0)
                    .map_or("timeout", |(reason, _)| *reason);
                first = Some(FirstRetry {
                    job_id: i.job_id,
                    endpoint: snapshot.endpoint.clone(),
                    reason,
                    timeout: *timeout,
                });
            }
        }
        i.calls_in_flight.store(in_flight, Ordering::Relaxed);
        i.retries.store(retries, Ordering::Relaxed);
        if let Some(first) = first {
            if !i.retry_reported.swap(true, Ordering::AcqRel) {
                // Logged under this module's target, which the default log
                // filter shows at WARN: a job whose calls are retried does not
                // look frozen. Each retry is logged at WARN by `llm::retry`.
                tracing::warn!(
                    job = i.job_id,
                    endpoint = %first.endpoint,
                    reason = first.reason,
                    "{first}"
                );
            }
        }
        self.push();
    }

    /// Tick every [`TICK`] until dropped (abort the task).
    pub(super) async fn ticking(self) {
        loop {
            self.tick();
            tokio::time::sleep(TICK).await;
        }
    }

    pub(super) fn finish(&self) {
        self.tick();
        if let Some(sink) = &self.inner.sink {
            sink.finished(&self.snapshot());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(kind: JobKind, done: u64, failed: u64, secs: u64) -> ProgressSnapshot {
        ProgressSnapshot {
            job_id: 1,
            kind,
            total: 10,
            already_done: 2,
            done,
            failed,
            elapsed: Duration::from_secs(secs),
            calls_in_flight: 3,
            retries: 1,
        }
    }

    #[test]
    fn judging_progress_counts_judgments_per_minute_not_conversations() {
        let s = snapshot(JobKind::Judging, 4, 0, 60);
        assert_eq!(s.per_minute(), 4.0);
        assert!(s.summary().contains("4.0 judgments/min"), "{}", s.summary());
        let s = snapshot(JobKind::Generation, 4, 0, 60);
        assert!(s.summary().contains("4.0 conv/min"), "{}", s.summary());
    }

    #[test]
    fn the_summary_shows_calls_in_flight_and_retries_and_no_eta_before_anything_finished() {
        let s = snapshot(JobKind::Generation, 0, 0, 30);
        assert_eq!(s.eta(), None);
        let text = s.summary();
        assert!(text.contains("3 calls in flight, 1 retry"), "{text}");
        assert!(text.ends_with("ETA ?"), "{text}");
        // 2 finished in 30 s, 6 left: 90 s.
        let s = snapshot(JobKind::Generation, 1, 1, 30);
        assert_eq!(s.position(), 4);
        assert_eq!(s.eta(), Some(Duration::from_secs(90)));
    }
}
