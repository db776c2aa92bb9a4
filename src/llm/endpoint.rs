//! `Endpoint`: an OpenAI-compatible server and model behind async-openai, with
//! its cap on requests in flight and the one retry policy.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::traits::RequestOptionsBuilder;
use async_trait::async_trait;
use tokio::sync::Semaphore;

use super::chat::{ChatModel, ChatRequest, ChatResponse};
use super::error::LlmError;
use super::retry::{RetryPolicy, RetryService};
use super::wire::{self, Sampling, WireResponse};
use crate::config::EndpointConfig;

/// Header naming the scenario being played; the mock model server reads it.
pub const SCENARIO_HEADER: &str = "x-usersim-scenario";

pub struct Endpoint {
    name: String,
    model: String,
    client: async_openai::Client<OpenAIConfig>,
    sampling: Sampling,
    in_flight: Arc<Semaphore>,
    calls: AtomicU64,
}

fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Fails only if another provider was installed first, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

impl Endpoint {
    /// `base_url` is where requests go (the config's URL, or the mock's address).
    pub fn new(config: &EndpointConfig, base_url: &str) -> Result<Self, LlmError> {
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .pool_max_idle_per_host(config.max_in_flight)
            .build()
            .map_err(|e| LlmError::InvalidRequest(format!("cannot build the HTTP client: {e}")))?;
        let openai = OpenAIConfig::new()
            .with_api_base(base_url)
            .with_api_key(config.api_key.clone().unwrap_or_default());
        let policy = RetryPolicy {
            max_retries: config.max_retries,
            ..RetryPolicy::default()
        };
        let client = async_openai::Client::build(http.clone(), openai).with_http_service(
            RetryService::new(http, policy, config.timeout, &config.name),
        );
        Ok(Endpoint {
            name: config.name.clone(),
            model: config.model.clone(),
            client,
            sampling: Sampling {
                temperature: config.temperature,
                top_p: config.top_p,
                max_tokens: Some(config.max_tokens),
            },
            in_flight: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
            calls: AtomicU64::new(0),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
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

#[async_trait]
impl ChatModel for Endpoint {
    fn model(&self) -> &str {
        &self.model
    }

    #[tracing::instrument(skip_all, fields(endpoint = %self.name, model = %self.model))]
    async fn complete(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        let body = wire::to_request(&self.model, &self.sampling, &req);
        let call_number = self.calls.fetch_add(1, Ordering::Relaxed);
        let _permit = self
            .in_flight
            .acquire()
            .await
            .map_err(|_| LlmError::InvalidRequest("endpoint is shut down".into()))?;
        let started = Instant::now();
        let mut chat = self.client.chat();
        if let Some(scenario) = &req.scenario {
            chat = chat
                .header(SCENARIO_HEADER, scenario.as_str())
                .map_err(|e| LlmError::InvalidRequest(e.to_string()))?;
        }
        let response: WireResponse = chat.create_byot(body).await.map_err(from_openai)?;
        let latency_ms = started.elapsed().as_millis() as u64;
        let (message, finish_reason, usage) =
            wire::from_response(response, &format!("call_{call_number}"))?;
        Ok(ChatResponse {
            message,
            finish_reason,
            usage,
            latency_ms,
        })
    }
}
