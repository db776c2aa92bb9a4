//! `Endpoint`: an OpenAI-compatible server and model, with its limits (rpm,
//! tpm, requests in flight), its pause after a 429, and the one retry policy.
//! Roles naming the same endpoint share one `Endpoint`, so they share its
//! limits; endpoints are independent of each other.
//!
//! Its `api` picks the wire format: chat completions ([`super::wire`], with
//! [`super::chat_tokens`] when `capture_tokens` is set) or the Responses API
//! ([`super::responses`]); everything else (limits, retries, error classes,
//! telemetry, transports) is the same for both.
//!
//! The requests go through [`super::transport`]: async-openai's config gives
//! the URL and the headers (authorization, organization, project; Azure's
//! deployment and api-version), and its client carries `https://` requests.
//! A call keeps its request (messages share their text,
//! so that is cheap) and serializes the body for each attempt, so no body is
//! held while the call waits for the model: async-openai's client kept one
//! per call, 13 KiB each with a thousand calls in flight.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use http::HeaderValue;

use super::chat::{ChatModel, ChatRequest, ChatResponse};
use super::error::LlmError;
use super::limiter::{LimitStats, Limits};
use super::raw::{RawReply, RawRequest};
use super::responses;
use super::retry::{parse_retry_after, Attempt, Pause, RetryPolicy};
use super::telemetry::{self, CallMeasure, EndpointTelemetry};
use super::transport::raw::RawClient;
use super::transport::{Reply, Transport};
use super::wire::{self, Sampling, WireResponse};
use crate::config::{Api, EndpointConfig};

/// Header naming the scenario being played; the mock model server reads it.
pub const SCENARIO_HEADER: &str = "x-sparring-scenario";

pub struct Endpoint {
    name: String,
    model: String,
    /// The wire format: chat completions or the Responses API.
    api: Api,
    /// Chat completions: ask for token ids (`llm::chat_tokens`).
    capture_tokens: bool,
    transport: Transport,
    /// Raw calls of a black-box agent below the same base URL.
    raw: RawClient,
    sampling: Sampling,
    policy: RetryPolicy,
    timeout: Duration,
    limits: Limits,
    pause: Pause,
    calls: AtomicU64,
    /// This process's counters for endpoints of this name, resolved once here
    /// so a call never looks them up.
    telemetry: std::sync::Arc<EndpointTelemetry>,
}

impl Endpoint {
    /// `base_url` is where requests go (the config's URL, or the mock's address).
    /// Fails when the tpm limit is too small for any request to fit, or the
    /// URL or API key cannot be sent.
    pub fn new(config: &EndpointConfig, base_url: &str) -> Result<Self, LlmError> {
        let transport = Transport::new(config, base_url)?;
        let raw = RawClient::new(
            base_url,
            config.api_key.as_deref(),
            config.ca_pem.as_deref(),
        )?;
        tracing::debug!(endpoint = %config.name, client = transport.client(), "endpoint ready");
        Ok(Endpoint {
            name: config.name.clone(),
            model: config.settings.model.clone(),
            api: config.settings.api,
            capture_tokens: config.settings.capture_tokens,
            transport,
            raw,
            sampling: Sampling {
                temperature: config.settings.temperature,
                top_p: config.settings.top_p,
                max_tokens: Some(config.settings.max_tokens),
            },
            policy: RetryPolicy {
                max_retries: config.settings.max_retries,
                ..RetryPolicy::default()
            },
            timeout: config.timeout(),
            limits: Limits::new(config)?,
            pause: Pause::default(),
            calls: AtomicU64::new(0),
            telemetry: telemetry::endpoint(&config.name),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tokens the tpm limit will be charged for `req` (each attempt),
    /// by [`limiter::estimate_tokens`] over the JSON body sent.
    pub fn estimate_tokens(&self, req: &ChatRequest) -> u64 {
        let bytes = self.encode(req).map_or(0, |body| body.len());
        self.limits.estimate_tokens(bytes)
    }

    /// Which client carries this endpoint's requests (`http1` or `async-openai`).
    pub fn client(&self) -> &'static str {
        self.transport.client()
    }

    /// What this endpoint's limits and pauses have cost so far.
    pub fn limit_stats(&self) -> LimitStats {
        self.limits.stats()
    }

    /// How long the endpoint stays paused after a 429, if it is paused.
    pub fn paused_for(&self) -> Option<Duration> {
        self.pause.remaining()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let stats = self.limits.stats();
        if !stats.waited.is_zero() || !stats.paused.is_zero() {
            tracing::info!(
                endpoint = %self.name,
                requests = stats.requests,
                estimated_tokens = stats.estimated_tokens,
                waited_on_limits_s = stats.waited.as_secs_f64(),
                paused_after_429_s = stats.paused.as_secs_f64(),
                "time requests spent waiting for the endpoint's limits"
            );
        }
    }
}

impl Endpoint {
    /// The JSON body of `req`, as sent.
    fn encode(&self, req: &ChatRequest) -> Result<String, LlmError> {
        let body = match self.api {
            Api::Chat => {
                let request = wire::to_request(&self.model, &self.sampling, req);
                if self.capture_tokens {
                    serde_json::to_string(&request.capturing_tokens())
                } else {
                    serde_json::to_string(&request)
                }
            }
            Api::Responses => {
                serde_json::to_string(&responses::to_request(&self.model, &self.sampling, req))
            }
        };
        body.map_err(|e| LlmError::InvalidRequest(format!("cannot serialize the request: {e}")))
    }

    /// One call: its attempts, retries and parsing, and what they cost
    /// beyond the model's time. Latency is filled in by `complete`.
    async fn send(&self, req: &ChatRequest) -> (Result<ChatResponse, LlmError>, CallMeasure) {
        let mut measure = CallMeasure::default();
        let scenario = match req.scenario.as_deref().map(HeaderValue::from_str) {
            None => None,
            Some(Ok(value)) => Some(value),
            Some(Err(_)) => {
                let e = LlmError::InvalidRequest(format!(
                    "the scenario id {:?} cannot be sent in the {SCENARIO_HEADER} header",
                    req.scenario
                ));
                return (Err(e), measure);
            }
        };
        let extra: Vec<(&str, &HeaderValue)> =
            scenario.iter().map(|v| (SCENARIO_HEADER, v)).collect();
        let call_number = self.calls.fetch_add(1, Ordering::Relaxed);
        let admission_wait = AtomicU64::new(0);
        let (result, retries) = self
            .policy
            .run(&self.pause, &self.name, &self.telemetry, |attempt| {
                self.attempt(req, &extra, attempt, &admission_wait)
            })
            .await;
        measure.retries = u64::from(retries);
        measure.admission_wait = Duration::from_nanos(admission_wait.into_inner());
        let call_ids = format!("call_{call_number}");
        let result = result.and_then(|reply| match reply {
            Parsed::Chat(mut response) => {
                let tokens = response.take_tokens()?.map(Box::new);
                let (message, finish_reason, usage) = wire::from_response(response, &call_ids)?;
                Ok(ChatResponse {
                    message,
                    finish_reason,
                    usage,
                    latency_ms: 0,
                    tokens,
                })
            }
            Parsed::Responses(reply) => {
                let converted = responses::from_reply(reply, &call_ids)?;
                Ok(ChatResponse {
                    message: converted.message,
                    finish_reason: converted.finish_reason,
                    usage: converted.usage,
                    latency_ms: 0,
                    tokens: converted.tokens,
                })
            }
        });
        (result, measure)
    }

    /// One attempt, as `llm::retry` asks for it: admitted by the limits,
    /// sent, and read. A 429 pauses the endpoint for every caller.
    async fn attempt(
        &self,
        req: &ChatRequest,
        extra: &[(&str, &HeaderValue)],
        attempt: Attempt,
        admission_wait: &AtomicU64,
    ) -> Result<Parsed, LlmError> {
        let retry = attempt.retry;
        let encode = || self.encode(req);
        let body = encode()?;
        let body_bytes = body.len();
        // Held until the response is read: until then the request is in flight.
        let (admission, body) = match self.limits.try_admit(body_bytes, &self.pause)? {
            Some(admission) => (admission, body),
            None => {
                // A queue of waiting calls holds no bodies; it is made again.
                drop(body);
                let admission = self.limits.admit(body_bytes, &self.pause).await?;
                (admission, encode()?)
            }
        };
        let _in_flight = self.admitted(&admission, admission_wait);
        let Reply {
            status,
            retry_after,
            rate,
            body,
        } = self
            .transport
            .post(body, extra, self.timeout, attempt.new_connection, &encode)
            .await?;
        if let Some((remaining, reset)) = rate.tokens() {
            self.limits.observe_remaining_tokens(remaining, reset);
        }
        if !(200..300).contains(&status) {
            let retry_after = retry_after
                .as_deref()
                .and_then(|v| parse_retry_after(v, SystemTime::now()));
            let error = LlmError::from_status(status, &body, retry_after);
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
        // Not JSON, or not shaped like a chat completion: retried like any
        // transient failure.
        let parsed = match self.api {
            Api::Chat => Parsed::Chat(
                serde_json::from_slice::<WireResponse>(&body)
                    .map_err(|e| super::error::not_a_completion(&e, &body))?,
            ),
            Api::Responses => Parsed::Responses(
                serde_json::from_slice::<responses::WireReply>(&body)
                    .map_err(|e| super::error::not_a_completion(&e, &body))?,
            ),
        };
        self.limits
            .settle(&admission, body_bytes, parsed.reported_usage());
        if let Parsed::Responses(reply) = &parsed {
            if let Some(error) = reply.failure() {
                if let LlmError::RateLimited { .. } = error {
                    self.pause.extend(self.policy.delay(retry, &error));
                }
                return Err(error);
            }
        }
        Ok(parsed)
    }
}

impl Endpoint {
    /// Count an admitted request in flight (until the guard drops) and what
    /// its admission waited, for telemetry and the call's latency.
    fn admitted(
        &self,
        admission: &super::limiter::Admission,
        admission_wait: &AtomicU64,
    ) -> super::telemetry::InFlight<'_> {
        let in_flight = self.telemetry.in_flight();
        self.telemetry
            .record_admission(admission.waited, admission.paused);
        let waited = admission.waited + admission.paused;
        admission_wait.fetch_add(
            u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        in_flight
    }

    /// One attempt of a raw call: admitted by the limits, sent, and read; a
    /// status other than success is an error of its class, and a 429 pauses
    /// the endpoint for every caller, as for a model call.
    async fn raw_attempt(
        &self,
        req: &RawRequest,
        attempt: Attempt,
        admission_wait: &AtomicU64,
    ) -> Result<RawReply, LlmError> {
        let body_bytes = req.body.as_ref().map_or(0, String::len);
        let admission = match self.limits.try_admit(body_bytes, &self.pause)? {
            Some(admission) => admission,
            None => self.limits.admit(body_bytes, &self.pause).await?,
        };
        let _in_flight = self.admitted(&admission, admission_wait);
        let exchange = self.raw.send(req, self.timeout).await?;
        self.limits.settle(&admission, body_bytes, None);
        if !(200..300).contains(&exchange.status) {
            let retry_after = exchange
                .headers
                .get(http::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| parse_retry_after(v, SystemTime::now()));
            let error = LlmError::from_status(exchange.status, &exchange.body, retry_after);
            if let LlmError::RateLimited { .. } = error {
                self.pause.extend(self.policy.delay(attempt.retry, &error));
            }
            return Err(error);
        }
        Ok(RawReply {
            status: exchange.status,
            headers: exchange.headers,
            body: exchange.body,
        })
    }
}

/// A success reply, read as its wire format says.
enum Parsed {
    Chat(WireResponse),
    Responses(responses::WireReply),
}

impl Parsed {
    fn reported_usage(&self) -> Option<(u64, u64)> {
        match self {
            Parsed::Chat(response) => response.reported_usage(),
            Parsed::Responses(reply) => reply.reported_usage(),
        }
    }
}

/// Put what a finished call cost on its span and in a debug event, when
/// debug logging is on (the span is disabled otherwise, and this is skipped).
fn trace_call(result: &Result<ChatResponse, LlmError>, latency: Duration, measure: &CallMeasure) {
    if !tracing::enabled!(tracing::Level::DEBUG) {
        return;
    }
    let span = tracing::Span::current();
    let latency_ms = latency.as_millis() as u64;
    span.record("latency_ms", latency_ms);
    span.record("retries", measure.retries);
    span.record("waited_ms", measure.admission_wait.as_millis() as u64);
    match result {
        Ok(response) => {
            span.record("outcome", tracing::field::display(telemetry::OK));
            span.record("prompt_tokens", response.usage.prompt_tokens);
            span.record("completion_tokens", response.usage.completion_tokens);
            tracing::debug!(
                latency_ms,
                prompt_tokens = response.usage.prompt_tokens,
                completion_tokens = response.usage.completion_tokens,
                retries = measure.retries,
                "model call ok"
            );
        }
        Err(e) => {
            span.record("outcome", tracing::field::display(e.class()));
            tracing::debug!(
                latency_ms,
                retries = measure.retries,
                outcome = e.class(),
                "model call failed: {e}"
            );
        }
    }
}

#[async_trait]
impl ChatModel for Endpoint {
    fn model(&self) -> &str {
        &self.model
    }

    #[tracing::instrument(
        name = "model_call",
        level = "debug",
        skip_all,
        fields(
            role = %req.role.as_str(),
            endpoint = %self.name,
            model = %self.model,
            outcome = tracing::field::Empty,
            latency_ms = tracing::field::Empty,
            waited_ms = tracing::field::Empty,
            prompt_tokens = tracing::field::Empty,
            completion_tokens = tracing::field::Empty,
            retries = tracing::field::Empty,
        )
    )]
    async fn complete(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        let role = req.role;
        let started = Instant::now();
        let (result, measure) = self.send(&req).await;
        drop(req);
        // Time waited for the endpoint's limits or a pause is not the model's.
        let latency = started.elapsed().saturating_sub(measure.admission_wait);
        self.telemetry.record_call(
            role,
            latency,
            result.as_ref().map(|response| response.usage),
        );
        trace_call(&result, latency, &measure);
        result.map(|response| ChatResponse {
            latency_ms: latency.as_millis() as u64,
            ..response
        })
    }

    #[tracing::instrument(
        name = "agent_call",
        level = "debug",
        skip_all,
        fields(endpoint = %self.name, path = %req.path)
    )]
    async fn call_raw(&self, req: RawRequest) -> Result<RawReply, LlmError> {
        let started = Instant::now();
        self.calls.fetch_add(1, Ordering::Relaxed);
        let admission_wait = AtomicU64::new(0);
        let (result, retries) = self
            .policy
            .run(&self.pause, &self.name, &self.telemetry, |attempt| {
                self.raw_attempt(&req, attempt, &admission_wait)
            })
            .await;
        let waited = Duration::from_nanos(admission_wait.into_inner());
        let latency = started.elapsed().saturating_sub(waited);
        // Counted as the policy's calls: an agent plays the policy.
        self.telemetry.record_call(
            super::Role::Policy,
            latency,
            result.as_ref().map(|_| super::Usage::default()),
        );
        if let Err(e) = &result {
            tracing::debug!(retries, outcome = e.class(), "agent call failed: {e}");
        }
        result
    }
}
