//! The one retry policy: exponential backoff with full jitter for transient
//! failures, honouring `Retry-After`. It is installed as the HTTP service under
//! async-openai's client, replacing the crate's own retry layer, so every request
//! is retried by exactly this code and nothing else.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use rand::Rng;

use super::error::LlmError;

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

/// A tower service sending requests with `reqwest`, retrying by [`RetryPolicy`].
/// It reads each body whole, so a body cut off mid-transfer or a success body that
/// is not JSON is retried like any transient failure. The final failure is handed
/// to async-openai as `OpenAIError::Boxed(LlmError)`.
#[derive(Clone)]
pub struct RetryService {
    client: reqwest::Client,
    policy: RetryPolicy,
    timeout: Duration,
    label: std::sync::Arc<str>,
}

impl RetryService {
    /// `client` must carry the per-request `timeout` (it is only named here in errors).
    pub fn new(
        client: reqwest::Client,
        policy: RetryPolicy,
        timeout: Duration,
        label: &str,
    ) -> Self {
        RetryService {
            client,
            policy,
            timeout,
            label: label.into(),
        }
    }

    async fn attempt(&self, factory: &HttpRequestFactory) -> Result<reqwest::Response, LlmError> {
        let request = factory
            .build()
            .await
            .map_err(|e| LlmError::InvalidRequest(e.to_string()))?;
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
            return Err(LlmError::from_status(status.as_u16(), &body, retry_after));
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
        let mut retry = 0;
        loop {
            match self.attempt(&factory).await {
                Ok(response) => return Ok(response),
                Err(error) if error.is_retryable() && retry < self.policy.max_retries => {
                    let wait = self.policy.delay(retry, &error);
                    tracing::warn!(
                        endpoint = %self.label,
                        retry = retry + 1,
                        wait_ms = wait.as_millis() as u64,
                        class = error.class(),
                        "model call failed, retrying: {error}"
                    );
                    tokio::time::sleep(wait).await;
                    retry += 1;
                }
                Err(error) => return Err(OpenAIError::Boxed(Box::new(error))),
            }
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
