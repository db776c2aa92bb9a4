//! Model-call telemetry for this process: calls by role, endpoint and outcome,
//! tokens, latency, retries, time waited on limits and pauses, requests in
//! flight. Recorded by `Endpoint::complete` and its attempts, the one
//! path every model call takes, and read by the service's `/metrics`.
//!
//! Hand-written on atomics rather than the `metrics` crates: their Prometheus
//! exporter, even without its HTTP listener, brings a dozen crates (a second,
//! TSC-based clock, epoch-based reclamation, a sketch library), and its handles
//! go through a keyed registry. Here each `Endpoint` resolves its handle once,
//! at construction (the registry's only lock), and a role is an array index,
//! so a call costs a handful of relaxed atomic adds.

mod call;
mod histogram;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub use call::CallMeasure;
pub use histogram::{HistogramSnapshot, LatencyHistogram, LATENCY_BUCKETS};

use super::chat::{Role, Usage};
use super::error::LlmError;

/// Why an attempt was retried, as `/metrics` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryReason {
    RateLimited,
    ServerError,
    Timeout,
    Connection,
    Malformed,
    /// Not a retry: the one resend of a request whose connection closed
    /// before answering (see `LlmError::Unanswered`), which spends none.
    Resend,
}

impl RetryReason {
    pub const ALL: [RetryReason; 6] = [
        RetryReason::RateLimited,
        RetryReason::ServerError,
        RetryReason::Timeout,
        RetryReason::Connection,
        RetryReason::Malformed,
        RetryReason::Resend,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RetryReason::RateLimited => "429",
            RetryReason::ServerError => "5xx",
            RetryReason::Timeout => "timeout",
            RetryReason::Connection => "connection",
            RetryReason::Malformed => "malformed",
            RetryReason::Resend => "resend",
        }
    }

    /// The reason `error` is retried, `None` for errors that are not.
    pub fn of(error: &LlmError) -> Option<RetryReason> {
        match error {
            LlmError::RateLimited { .. } => Some(RetryReason::RateLimited),
            LlmError::Server { .. } => Some(RetryReason::ServerError),
            LlmError::Timeout(_) => Some(RetryReason::Timeout),
            LlmError::Connection(_) | LlmError::Unanswered(_) => Some(RetryReason::Connection),
            LlmError::Malformed(_) => Some(RetryReason::Malformed),
            LlmError::Rejected { .. }
            | LlmError::QuotaExhausted(_)
            | LlmError::InvalidRequest(_)
            | LlmError::ExceedsTokenLimit { .. }
            | LlmError::AgentFailed(_)
            | LlmError::EmptyReply(_) => None,
        }
    }
}

/// The outcome label of a call: `ok` or its error's class.
pub const OK: &str = "ok";

/// One role's calls on one endpoint.
#[derive(Debug, Default)]
struct RoleTelemetry {
    /// Index 0: ok; then one per `LlmError::CLASSES`.
    outcomes: [AtomicU64; 1 + LlmError::CLASSES.len()],
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
    latency: LatencyHistogram,
}

/// Everything recorded about one endpoint (by name) in this process. Jobs
/// that each build an endpoint of the same name add up in one.
#[derive(Debug)]
pub struct EndpointTelemetry {
    name: String,
    roles: [RoleTelemetry; Role::ALL.len()],
    retries: [AtomicU64; RetryReason::ALL.len()],
    rate_wait_nanos: AtomicU64,
    pause_wait_nanos: AtomicU64,
    in_flight: AtomicI64,
}

/// An HTTP request counted in flight until this is dropped.
#[must_use]
pub struct InFlight<'a>(&'a AtomicI64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl EndpointTelemetry {
    fn new(name: &str) -> EndpointTelemetry {
        EndpointTelemetry {
            name: name.to_string(),
            roles: Default::default(),
            retries: Default::default(),
            rate_wait_nanos: AtomicU64::new(0),
            pause_wait_nanos: AtomicU64::new(0),
            in_flight: AtomicI64::new(0),
        }
    }

    /// A finished model call: its outcome, latency (without waits for limits)
    /// and, when it succeeded, its tokens.
    pub fn record_call(&self, role: Role, latency: Duration, result: Result<Usage, &LlmError>) {
        let r = &self.roles[role.index()];
        let outcome = match result {
            Ok(usage) => {
                r.prompt_tokens
                    .fetch_add(usage.prompt_tokens, Ordering::Relaxed);
                r.completion_tokens
                    .fetch_add(usage.completion_tokens, Ordering::Relaxed);
                0
            }
            Err(e) => 1 + e.class_index(),
        };
        r.outcomes[outcome].fetch_add(1, Ordering::Relaxed);
        r.latency.record(latency);
    }

    pub fn record_retry(&self, reason: RetryReason) {
        let i = RetryReason::ALL
            .iter()
            .position(|&r| r == reason)
            .unwrap_or_default();
        self.retries[i].fetch_add(1, Ordering::Relaxed);
    }

    /// Time an attempt waited for admission: on the rpm/tpm limits or a free
    /// in-flight slot (`rate`), and on the endpoint's pause after a 429.
    pub fn record_admission(&self, rate: Duration, pause: Duration) {
        if !rate.is_zero() {
            self.rate_wait_nanos
                .fetch_add(nanos(rate), Ordering::Relaxed);
        }
        if !pause.is_zero() {
            self.pause_wait_nanos
                .fetch_add(nanos(pause), Ordering::Relaxed);
        }
    }

    pub fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(&self.in_flight)
    }

    pub fn snapshot(&self) -> EndpointSnapshot {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let roles = Role::ALL
            .iter()
            .zip(&self.roles)
            .filter_map(|(&role, r)| {
                let outcomes = std::iter::once(OK)
                    .chain(LlmError::CLASSES)
                    .zip(&r.outcomes)
                    .map(|(outcome, n)| (outcome, load(n)))
                    .collect::<Vec<_>>();
                // A role never used on this endpoint is left out entirely.
                outcomes.iter().any(|&(_, n)| n > 0).then(|| RoleSnapshot {
                    role: role.as_str(),
                    outcomes,
                    prompt_tokens: load(&r.prompt_tokens),
                    completion_tokens: load(&r.completion_tokens),
                    latency: r.latency.snapshot(),
                })
            })
            .collect();
        EndpointSnapshot {
            endpoint: self.name.clone(),
            roles,
            retries: RetryReason::ALL
                .iter()
                .zip(&self.retries)
                .map(|(reason, n)| (reason.as_str(), load(n)))
                .collect(),
            rate_wait: Duration::from_nanos(load(&self.rate_wait_nanos)),
            pause_wait: Duration::from_nanos(load(&self.pause_wait_nanos)),
            in_flight: self.in_flight.load(Ordering::Relaxed),
        }
    }
}

/// One endpoint's telemetry at one moment.
#[derive(Debug, Clone)]
pub struct EndpointSnapshot {
    pub endpoint: String,
    /// Roles that made at least one call here.
    pub roles: Vec<RoleSnapshot>,
    /// `(reason, retries)` for every [`RetryReason`].
    pub retries: Vec<(&'static str, u64)>,
    pub rate_wait: Duration,
    pub pause_wait: Duration,
    pub in_flight: i64,
}

#[derive(Debug, Clone)]
pub struct RoleSnapshot {
    pub role: &'static str,
    /// `(outcome, calls)`: `ok`, then every error class.
    pub outcomes: Vec<(&'static str, u64)>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub latency: HistogramSnapshot,
}

fn registry() -> &'static Mutex<BTreeMap<String, Arc<EndpointTelemetry>>> {
    static REGISTRY: OnceLock<Mutex<BTreeMap<String, Arc<EndpointTelemetry>>>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// The process-wide telemetry of the endpoint named `name`, made on first use.
/// Called once per `Endpoint`, never per call.
pub fn endpoint(name: &str) -> Arc<EndpointTelemetry> {
    // A panic while holding this lock cannot leave the map half-changed
    // (one insert), so a poisoned lock is still good to use.
    let mut map = registry().lock().unwrap_or_else(|e| e.into_inner());
    map.entry(name.to_string())
        .or_insert_with(|| Arc::new(EndpointTelemetry::new(name)))
        .clone()
}

/// Every endpoint used in this process so far, by name.
pub fn snapshot() -> Vec<EndpointSnapshot> {
    let endpoints: Vec<Arc<EndpointTelemetry>> = registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .cloned()
        .collect();
    endpoints.iter().map(|e| e.snapshot()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_by_role_and_outcome_and_tokens_only_on_success() {
        let t = EndpointTelemetry::new("e");
        let usage = Usage {
            prompt_tokens: 10,
            completion_tokens: 3,
        };
        t.record_call(Role::Policy, Duration::from_millis(5), Ok(usage));
        t.record_call(Role::Policy, Duration::from_millis(5), Ok(usage));
        let timeout = LlmError::Timeout(Duration::from_secs(1));
        t.record_call(Role::Judge, Duration::from_secs(1), Err(&timeout));
        let s = t.snapshot();
        let roles: Vec<&str> = s.roles.iter().map(|r| r.role).collect();
        assert_eq!(
            roles,
            ["policy", "judge"],
            "the unused user role is left out"
        );
        let policy = &s.roles[0];
        assert!(policy.outcomes.contains(&("ok", 2)));
        assert_eq!((policy.prompt_tokens, policy.completion_tokens), (20, 6));
        let judge = &s.roles[1];
        assert!(judge.outcomes.contains(&("timeout", 1)));
        assert!(judge.outcomes.contains(&("ok", 0)));
        assert_eq!(judge.prompt_tokens, 0);
        assert_eq!(judge.latency.count, 1);
    }

    #[test]
    fn in_flight_goes_back_down_when_the_guard_drops() {
        let t = EndpointTelemetry::new("e");
        let a = t.in_flight();
        let b = t.in_flight();
        assert_eq!(t.snapshot().in_flight, 2);
        drop(a);
        drop(b);
        assert_eq!(t.snapshot().in_flight, 0);
    }

    #[test]
    fn every_retried_error_has_a_reason_and_no_permanent_one_does() {
        let errors = [
            LlmError::from_status(429, b"", None),
            LlmError::from_status(503, b"", None),
            LlmError::Timeout(Duration::ZERO),
            LlmError::Connection(String::new()),
            LlmError::Unanswered(String::new()),
            LlmError::Malformed(String::new()),
            LlmError::from_status(401, b"", None),
            LlmError::InvalidRequest(String::new()),
        ];
        for e in &errors {
            assert_eq!(RetryReason::of(e).is_some(), e.is_retryable(), "{e}");
        }
    }

    #[test]
    fn endpoints_of_the_same_name_share_one_handle() {
        let a = endpoint("telemetry-test-shared");
        let b = endpoint("telemetry-test-shared");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(snapshot()
            .iter()
            .any(|s| s.endpoint == "telemetry-test-shared"));
    }
}
