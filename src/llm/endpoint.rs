//! `Endpoint`: an OpenAI-compatible server and model behind async-openai, with
//! its limits (rpm, tpm, requests in flight), its pause after a 429, and the one
//! retry policy. Roles naming the same endpoint share one `Endpoint`, so they
//! share its limits; endpoints are independent of each other.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::traits::RequestOptionsBuilder;
use async_trait::async_trait;

use super::chat::{ChatModel, ChatRequest, ChatResponse};
use super::error::LlmError;
use super::limiter::{LimitStats, Limits};
use super::retry::{Pause, RetryPolicy, RetryService};
use super::telemetry::{self, CallMeasure, EndpointTelemetry};
use super::wire::{self, Sampling, WireResponse};
use crate::config::EndpointConfig;

/// Header naming the scenario being played; the mock model server reads it.
pub const SCENARIO_HEADER: &str = "x-usersim-scenario";

pub struct Endpoint {
    name: String,
    model: String,
    client: async_openai::Client<OpenAIConfig>,
    sampling: Sampling,
    limits: Arc<Limits>,
    pause: Arc<Pause>,
    calls: AtomicU64,
    /// This process's counters for endpoints of this name, resolved once here
    /// so a call never looks them up.
    telemetry: Arc<EndpointTelemetry>,
}

fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Fails only if another provider was installed first, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// One HTTP client for the whole process (per protocol), so endpoints on the
/// same server share one pool of keep-alive connections (with one pool per
/// endpoint, every conversation kept a connection open in each). Timeouts are
/// set per request.
///
/// HTTP/1.1 unless the endpoint opts in to HTTP/2: over HTTP/1.1 every call
/// in flight holds a connection of its own (about 30 KiB of buffers and
/// channels in hyper), over HTTP/2 they share one. HTTP/2 is not the default
/// because a server's stream limit (often 100 to 250) would then cap the calls
/// in flight, and vLLM and llama.cpp servers speak only HTTP/1.1.
fn shared_http_client(http2: bool) -> Result<reqwest::Client, LlmError> {
    static HTTP1: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    static HTTP2: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    let cell = if http2 { &HTTP2 } else { &HTTP1 };
    if let Some(client) = cell.get() {
        return Ok(client.clone());
    }
    install_crypto_provider();
    let builder = reqwest::Client::builder().connect_timeout(Duration::from_secs(10));
    let builder = if http2 {
        builder.http2_prior_knowledge()
    } else {
        builder.http1_only()
    };
    let client = builder
        .build()
        .map_err(|e| LlmError::InvalidRequest(format!("cannot build the HTTP client: {e}")))?;
    Ok(cell.get_or_init(|| client).clone())
}

impl Endpoint {
    /// `base_url` is where requests go (the config's URL, or the mock's address).
    /// Fails when the tpm limit is too small for any request to fit.
    pub fn new(config: &EndpointConfig, base_url: &str) -> Result<Self, LlmError> {
        let http = shared_http_client(config.http2)?;
        let openai = OpenAIConfig::new()
            .with_api_base(base_url)
            .with_api_key(config.api_key.clone().unwrap_or_default());
        let policy = RetryPolicy {
            max_retries: config.max_retries,
            ..RetryPolicy::default()
        };
        let limits = Arc::new(Limits::new(config)?);
        let pause = Arc::new(Pause::default());
        let telemetry = telemetry::endpoint(&config.name);
        let client =
            async_openai::Client::build(http.clone(), openai).with_http_service(RetryService::new(
                http,
                policy,
                config.timeout,
                &config.name,
                limits.clone(),
                pause.clone(),
                telemetry.clone(),
            ));
        Ok(Endpoint {
            name: config.name.clone(),
            model: config.model.clone(),
            client,
            sampling: Sampling {
                temperature: config.temperature,
                top_p: config.top_p,
                max_tokens: Some(config.max_tokens),
            },
            limits,
            pause,
            calls: AtomicU64::new(0),
            telemetry,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tokens the tpm limit will be charged for `req` (each attempt),
    /// by [`limiter::estimate_tokens`] over the JSON body sent.
    pub fn estimate_tokens(&self, req: &ChatRequest) -> u64 {
        let body = wire::to_request(&self.model, &self.sampling, req);
        let bytes = serde_json::to_vec(&body).map_or(0, |b| b.len());
        self.limits.estimate_tokens(bytes)
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

fn from_openai(error: OpenAIError) -> LlmError {
    match error {
        OpenAIError::Boxed(boxed) => match boxed.downcast::<LlmError>() {
            Ok(e) => *e,
            Err(other) => LlmError::InvalidRequest(other.to_string()),
        },
        OpenAIError::JSONDeserialize(e, _) => {
            LlmError::Malformed(format!("unexpected response shape: {e}"))
        }
        OpenAIError::Reqwest(e) => LlmError::Connection(e.to_string()),
        other => LlmError::InvalidRequest(other.to_string()),
    }
}

impl Endpoint {
    /// One call, its limits, retries and parsing; latency is filled in by
    /// `complete`, which knows how long the attempts waited for admission.
    async fn send(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        // Serialized at once and the request (a copy of the transcript)
        // dropped: the call may wait hundreds of milliseconds, and a thousand
        // calls in flight would each hold both. As a `RawValue` the body is
        // written into async-openai's buffer in one piece, so that buffer,
        // kept for retries until the call ends, is exactly its size (a body
        // serialized field by field there grows by doubling: 28 KiB per call
        // held where 15 were used).
        let body = serde_json::value::to_raw_value(&wire::to_request(
            &self.model,
            &self.sampling,
            &req,
        ))
        .map_err(|e| LlmError::InvalidRequest(format!("cannot serialize the request: {e}")))?;
        let scenario = req.scenario.clone();
        drop(req);
        let call_number = self.calls.fetch_add(1, Ordering::Relaxed);
        let mut chat = self.client.chat();
        if let Some(scenario) = &scenario {
            chat = chat
                .header(SCENARIO_HEADER, scenario.as_str())
                .map_err(|e| LlmError::InvalidRequest(e.to_string()))?;
        }
        // The limits, the in-flight cap and the pause are waited for inside the
        // HTTP service, before each attempt.
        let response = chat
            .create_byot::<_, WireResponse>(body)
            .await
            .map_err(from_openai)?;
        let (message, finish_reason, usage) =
            wire::from_response(response, &format!("call_{call_number}"))?;
        Ok(ChatResponse {
            message,
            finish_reason,
            usage,
            latency_ms: 0,
        })
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
        let (result, measure) = telemetry::measure_call(self.send(req)).await;
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
}
