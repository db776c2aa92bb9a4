//! The one retry policy: exponential backoff with full jitter for transient
//! failures, honouring `Retry-After`. `Endpoint` runs every model call's
//! attempts through [`RetryPolicy::run`], and nothing else retries (the
//! transports do not), so every request is retried by exactly this code.
//! Every attempt is admitted by the endpoint's limits first, and a 429 pauses
//! the whole endpoint.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use rand::Rng;

use super::error::LlmError;
use super::telemetry::{EndpointTelemetry, RetryReason};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts after the first one.
    pub max_retries: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// Upper bound on a server's `Retry-After`.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based): the server's `Retry-After`
    /// when it gave one (capped), else a uniform draw from `[0, min(max, base·2^retry)]`.
    pub fn delay(&self, retry: u32, error: &LlmError) -> Duration {
        if let LlmError::RateLimited {
            retry_after: Some(after),
            ..
        } = error
        {
            return (*after).min(self.max_retry_after);
        }
        let ceiling = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry))
            .min(self.max_delay);
        let millis = ceiling.as_millis() as u64;
        Duration::from_millis(rand::rng().random_range(0..=millis))
    }
}

/// Parse `Retry-After`: delta-seconds (possibly fractional) or an HTTP date.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// An endpoint-wide pause: after a 429 nothing is sent to the endpoint until
/// the pause ends (the server's `Retry-After`, or the backoff delay). Callers
/// that did not get the 429 wait it out before sending, which costs them no
/// retry: a burst of 429s pauses the endpoint instead of burning every
/// caller's retries on requests the server would refuse.
#[derive(Debug)]
pub struct Pause {
    origin: Instant,
    /// Nanoseconds after `origin` when the pause ends; 0: never paused.
    until_nanos: AtomicU64,
}

impl Default for Pause {
    fn default() -> Self {
        Pause {
            origin: Instant::now(),
            until_nanos: AtomicU64::new(0),
        }
    }
}

impl Pause {
    /// Pause for `wait` from now, unless a pause already lasts longer.
    pub fn extend(&self, wait: Duration) {
        let now = Instant::now();
        let until = now.checked_add(wait).unwrap_or(now);
        let until = until.saturating_duration_since(self.origin);
        let until = u64::try_from(until.as_nanos()).unwrap_or(u64::MAX);
        self.until_nanos.fetch_max(until, Ordering::AcqRel);
    }

    /// How long the pause still lasts, if the endpoint is paused.
    pub fn remaining(&self) -> Option<Duration> {
        let until = Duration::from_nanos(self.until_nanos.load(Ordering::Acquire));
        let left = self
            .origin
            .checked_add(until)?
            .saturating_duration_since(Instant::now());
        Some(left).filter(|left| !left.is_zero())
    }

    /// Wait until the endpoint is not paused (a pause may be extended meanwhile);
    /// returns how long that took.
    pub async fn wait(&self) -> Duration {
        let Some(mut left) = self.remaining() else {
            return Duration::ZERO;
        };
        let started = Instant::now();
        loop {
            tokio::time::sleep(left).await;
            match self.remaining() {
                Some(more) => left = more,
                None => return started.elapsed(),
            }
        }
    }
}

/// What an attempt is asked to do: which retry it is (0 for the first try)
/// and whether it must open a new connection rather than reuse a kept one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Attempt {
    pub retry: u32,
    pub new_connection: bool,
}

impl RetryPolicy {
    /// Run `attempt` until it succeeds, fails for good, or the retries run
    /// out; returns the result and the retries made. A 429 waits out the
    /// endpoint's `pause` (which the attempt that got it extended); other
    /// transient failures wait a jittered backoff. `label` names the
    /// endpoint in logs.
    ///
    /// A request whose connection closed before a byte of an answer
    /// ([`LlmError::Unanswered`]) is sent once more at once, on a new
    /// connection, spending no retry: a kept-alive connection that the server
    /// closed while idle, just as the request went out, is an ordinary race
    /// of HTTP/1.1 (RFC 9112 §9.3.1), not a failure of the server. It is
    /// counted as a `resend`. A second one is a connection failure.
    pub async fn run<T, F, Fut>(
        &self,
        pause: &Pause,
        label: &str,
        telemetry: &EndpointTelemetry,
        mut attempt: F,
    ) -> (Result<T, LlmError>, u32)
    where
        F: FnMut(Attempt) -> Fut,
        Fut: Future<Output = Result<T, LlmError>>,
    {
        let mut next = Attempt::default();
        let mut resent = false;
        loop {
            let error = match attempt(next).await {
                Ok(value) => return (Ok(value), next.retry),
                Err(error) => error,
            };
            let retry = next.retry;
            if let LlmError::Unanswered(why) = &error {
                if !resent {
                    resent = true;
                    telemetry.record_retry(RetryReason::Resend);
                    tracing::debug!(endpoint = %label, "no answer on the connection, sending again on a new one: {why}");
                    next.new_connection = true;
                    continue;
                }
            }
            next.new_connection = false;
            if !(error.is_retryable() && retry < self.max_retries) {
                return (Err(error), retry);
            }
            if let Some(reason) = RetryReason::of(&error) {
                telemetry.record_retry(reason);
            }
            // After a 429 the endpoint's pause is the wait; the next attempt
            // waits it out in admission.
            let wait = match error {
                LlmError::RateLimited { .. } => pause.remaining().unwrap_or_default(),
                _ => self.delay(retry, &error),
            };
            tracing::warn!(
                endpoint = %label,
                retry = retry + 1,
                wait_ms = wait.as_millis() as u64,
                class = error.class(),
                "model call failed, retrying: {error}"
            );
            if !matches!(error, LlmError::RateLimited { .. }) {
                tokio::time::sleep(wait).await;
            }
            next.retry += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_accepts_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after("0.5", now),
            Some(Duration::from_millis(500))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(7));
        assert_eq!(parse_retry_after(&later, now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
    }

    #[test]
    fn retry_after_is_honoured_but_capped() {
        let policy = RetryPolicy::default();
        let e = LlmError::RateLimited {
            message: String::new(),
            retry_after: Some(Duration::from_secs(3)),
        };
        assert_eq!(policy.delay(0, &e), Duration::from_secs(3));
        let e = LlmError::RateLimited {
            message: String::new(),
            retry_after: Some(Duration::from_secs(100_000)),
        };
        assert_eq!(policy.delay(0, &e), policy.max_retry_after);
    }

    #[tokio::test]
    async fn a_pause_only_grows_and_waiting_it_out_ends_it() {
        let pause = Pause::default();
        assert_eq!(pause.remaining(), None);
        assert_eq!(pause.wait().await, Duration::ZERO, "not paused: no wait");
        pause.extend(Duration::from_millis(300));
        pause.extend(Duration::from_millis(100));
        let left = pause.remaining().unwrap();
        assert!(
            left > Duration::from_millis(200),
            "a shorter pause never cuts a longer one"
        );
        let waited = pause.wait().await;
        assert!(waited >= left - Duration::from_millis(5), "{waited:?}");
        assert_eq!(pause.remaining(), None);
    }

    #[test]
    fn backoff_without_retry_after_is_jittered_under_an_exponential_ceiling() {
        let policy = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            ..RetryPolicy::default()
        };
        let e = LlmError::Server {
            status: 503,
            message: String::new(),
        };
        for retry in 0..8 {
            let ceiling = Duration::from_millis((100u64 << retry).min(1000));
            for _ in 0..50 {
                assert!(policy.delay(retry, &e) <= ceiling);
            }
        }
        let draws: std::collections::HashSet<_> = (0..50).map(|_| policy.delay(3, &e)).collect();
        assert!(draws.len() > 1, "full jitter must spread the waits");
    }

    fn unanswered() -> LlmError {
        LlmError::Unanswered("closed".into())
    }

    /// Runs `outcomes` in turn through the policy with `max_retries`; the
    /// attempts asked for, the result, the retries and the resends counted.
    async fn run_through(
        max_retries: u32,
        outcomes: Vec<Result<(), LlmError>>,
    ) -> (Vec<Attempt>, Result<(), LlmError>, u32, u64) {
        let policy = RetryPolicy {
            max_retries,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
            ..RetryPolicy::default()
        };
        static RUNS: AtomicU64 = AtomicU64::new(0);
        let name = format!("retry-test-{}", RUNS.fetch_add(1, Ordering::Relaxed));
        let telemetry = crate::llm::telemetry::endpoint(&name);
        let asked = std::sync::Mutex::new(Vec::new());
        let outcomes = std::sync::Mutex::new(outcomes.into_iter());
        let (result, retries) = policy
            .run(&Pause::default(), "test", &telemetry, |attempt| {
                asked.lock().unwrap().push(attempt);
                let outcome = outcomes.lock().unwrap().next().unwrap_or(Ok(()));
                async move { outcome }
            })
            .await;
        let resends = telemetry
            .snapshot()
            .retries
            .iter()
            .find(|(reason, _)| *reason == "resend")
            .map_or(0, |&(_, n)| n);
        (asked.into_inner().unwrap(), result, retries, resends)
    }

    #[tokio::test]
    async fn an_unanswered_request_is_resent_once_on_a_new_connection_spending_no_retry() {
        let (asked, result, retries, resends) = run_through(0, vec![Err(unanswered())]).await;
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(retries, 0);
        assert_eq!(resends, 1);
        assert_eq!(
            asked,
            [
                Attempt::default(),
                Attempt {
                    retry: 0,
                    new_connection: true
                }
            ]
        );
    }

    #[tokio::test]
    async fn a_second_unanswered_request_is_a_connection_failure_like_any_other() {
        let (asked, result, _, resends) =
            run_through(0, vec![Err(unanswered()), Err(unanswered())]).await;
        let error = result.unwrap_err();
        assert_eq!(error.class(), "connection");
        assert_eq!((asked.len(), resends), (2, 1));

        let (asked, result, retries, resends) =
            run_through(1, vec![Err(unanswered()), Err(unanswered())]).await;
        assert!(result.is_ok(), "{result:?}");
        assert_eq!((asked.len(), retries, resends), (3, 1, 1));
        assert!(
            !asked[2].new_connection,
            "a retry may reuse a kept connection"
        );
    }
}
