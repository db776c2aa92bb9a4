//! The one retry policy: exponential backoff with full jitter for transient
//! failures, honouring `Retry-After`. It is installed as the HTTP service under
//! async-openai's client, replacing the crate's own retry layer, so every request
//! is retried by exactly this code and nothing else. Every attempt is admitted by
//! the endpoint's [`Limits`] first, and a 429 pauses the whole endpoint.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use rand::Rng;

use super::error::LlmError;
use super::limiter::Limits;
use super::telemetry::{self, EndpointTelemetry, RetryReason};

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

/// A tower service sending requests with `reqwest`, retrying by [`RetryPolicy`].
/// It reads each body whole, so a body cut off mid-transfer or a success body that
/// is not JSON is retried like any transient failure. The final failure is handed
/// to async-openai as `OpenAIError::Boxed(LlmError)`.
#[derive(Clone)]
pub struct RetryService {
    client: reqwest::Client,
    policy: RetryPolicy,
    timeout: Duration,
    label: Arc<str>,
    limits: Arc<Limits>,
    pause: Arc<Pause>,
    telemetry: Arc<EndpointTelemetry>,
}

impl RetryService {
    /// Every attempt is sent with `timeout` (the shared client has none of its
    /// own). `limits`, `pause` and `telemetry` are the endpoint's, shared by
    /// all its callers.
    pub fn new(
        client: reqwest::Client,
        policy: RetryPolicy,
        timeout: Duration,
        label: &str,
        limits: Arc<Limits>,
        pause: Arc<Pause>,
        telemetry: Arc<EndpointTelemetry>,
    ) -> Self {
        RetryService {
            client,
            policy,
            timeout,
            label: label.into(),
            limits,
            pause,
            telemetry,
        }
    }

    /// The request every attempt sends a copy of (its body is shared, not
    /// copied; `Endpoint` hands async-openai an exact-size body).
    async fn first_request(factory: HttpRequestFactory) -> Result<reqwest::Request, LlmError> {
        factory
            .build()
            .await
            .map_err(|e| LlmError::InvalidRequest(e.to_string()))
    }

    /// Send attempt number `retry` (0: the first try) of `template`.
    async fn attempt(
        &self,
        template: &reqwest::Request,
        retry: u32,
    ) -> Result<reqwest::Response, LlmError> {
        let mut request = template.try_clone().ok_or_else(|| {
            LlmError::InvalidRequest("a streamed request body cannot be sent again".into())
        })?;
        let body_bytes = match request.body().map(|body| body.as_bytes()) {
            None => 0,
            Some(Some(bytes)) => bytes.len(),
            Some(None) if self.limits.limits_tokens() => {
                return Err(LlmError::InvalidRequest(
                    "a streamed request body has no size to estimate its tokens by".into(),
                ))
            }
            Some(None) => 0,
        };
        *request.timeout_mut() = Some(self.timeout);
        let estimate = self.limits.estimate_tokens(body_bytes);
        // Held until the body is read: until then the request is in flight.
        let admission = self.limits.admit(estimate, &self.pause).await?;
        let _in_flight = self.telemetry.in_flight();
        self.telemetry
            .record_admission(admission.waited, admission.paused);
        telemetry::note_admission_wait(admission.waited + admission.paused);
        let timeout = Some(self.timeout);
        let response = self
            .client
            .execute(request)
            .await
            .map_err(|e| transport_error(e, timeout))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .bytes()
            .await
            .map_err(|e| transport_error(e, timeout))?;
        if !status.is_success() {
            let retry_after = headers
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| parse_retry_after(v, SystemTime::now()));
            let error = LlmError::from_status(status.as_u16(), &body, retry_after);
            if let LlmError::RateLimited { .. } = error {
                // The server refuses the endpoint as a whole, not this request:
                // pause every caller, this one included (its retry waits the
                // pause in admission), even if it gives up. Paused while this
                // request still holds its slot, so no caller queued for the
                // slot can slip in before the pause.
                self.pause.extend(self.policy.delay(retry, &error));
            }
            return Err(error);
        }
        if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&body) {
            return Err(LlmError::Malformed(format!(
                "body is not JSON ({e}); it starts with {:?}",
                String::from_utf8_lossy(&body[..body.len().min(120)])
            )));
        }
        let mut rebuilt = http::Response::new(body);
        *rebuilt.status_mut() = status;
        *rebuilt.headers_mut() = headers;
        Ok(reqwest::Response::from(rebuilt))
    }

    async fn run(self, factory: HttpRequestFactory) -> Result<reqwest::Response, OpenAIError> {
        let template = Self::first_request(factory)
            .await
            .map_err(|e| OpenAIError::Boxed(Box::new(e)))?;
        let mut retry = 0;
        loop {
            let error = match self.attempt(&template, retry).await {
                Ok(response) => return Ok(response),
                Err(error) => error,
            };
            if !(error.is_retryable() && retry < self.policy.max_retries) {
                return Err(OpenAIError::Boxed(Box::new(error)));
            }
            if let Some(reason) = RetryReason::of(&error) {
                self.telemetry.record_retry(reason);
            }
            telemetry::note_retries(retry + 1);
            // After a 429 the endpoint's pause is the wait (see `attempt`).
            let wait = match error {
                LlmError::RateLimited { .. } => self.pause.remaining().unwrap_or_default(),
                _ => self.policy.delay(retry, &error),
            };
            tracing::warn!(
                endpoint = %self.label,
                retry = retry + 1,
                wait_ms = wait.as_millis() as u64,
                class = error.class(),
                "model call failed, retrying: {error}"
            );
            if !matches!(error, LlmError::RateLimited { .. }) {
                tokio::time::sleep(wait).await;
            }
            retry += 1;
        }
    }
}

fn transport_error(e: reqwest::Error, timeout: Option<Duration>) -> LlmError {
    if e.is_timeout() {
        LlmError::Timeout(timeout.unwrap_or_default())
    } else if e.is_builder() {
        LlmError::InvalidRequest(e.to_string())
    } else {
        // Connection refused/reset, a body cut short, a protocol error: transient.
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            message.push_str(": ");
            message.push_str(&s.to_string());
            source = s.source();
        }
        LlmError::Connection(message)
    }
}

impl tower::Service<HttpRequestFactory> for RetryService {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, factory: HttpRequestFactory) -> Self::Future {
        Box::pin(self.clone().run(factory))
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
}
