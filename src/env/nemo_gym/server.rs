//! The HTTP side of a NeMo Gym resources server: JSON POSTs that carry the
//! session cookie, classified failures, and the one retry policy.
//!
//! Why reqwest here and not `llm::transport`: the transport is shaped for
//! model calls (one URL per endpoint, no response headers), while a resources
//! server is called at many paths and keeps its session in a cookie that every
//! reply may renew. This is the one other place that builds an HTTP client:
//! the clippy `disallowed-types` fence around `reqwest::Client` (clippy.toml)
//! lets the two items below through, with this reason. It retries only through
//! `llm::retry`, the one retry policy.

use std::collections::BTreeMap;
use std::sync::{Arc, Once, OnceLock};
use std::time::Duration;

use serde_json::Value;

use crate::config::NemoGymConfig;
use crate::error_chain::{error_chain_with, Repeats};
use crate::llm::retry::{Pause, RetryPolicy};
use crate::llm::telemetry::{self, EndpointTelemetry};
use crate::llm::LlmError;

/// The longest a [`ResourcesServer::get_once`] waits.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// A reply read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as text, cut short for the command line's own reports
    /// (`sparring verify`) and the log: an error of an environment says only
    /// [`Reply::status_line`], because a submitted job may name any URL.
    pub fn excerpt(&self) -> String {
        self.excerpt_of(300)
    }

    /// The body as text, cut after `max` characters.
    pub fn excerpt_of(&self, max: usize) -> String {
        let text = String::from_utf8_lossy(&self.body);
        let text = text.trim();
        match text.char_indices().nth(max) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None if text.is_empty() => "an empty body".to_string(),
            None => text.to_string(),
        }
    }
}

impl Reply {
    /// What an error may say of this reply: its status, in sparring's words,
    /// the body logged at debug level for the operator.
    pub fn status_line(&self, what: &str) -> String {
        tracing::debug!(status = self.status, reply = %self.excerpt(), "{what}");
        format!("HTTP {}", self.status)
    }
}

/// Where an error that names only a reply's status sends the reader.
pub const LOGGED: &str = "the reply is logged at debug level: SPARRING_LOG=sparring=debug";

impl Reply {}

/// The cookies a resources server set for one conversation (its session).
#[derive(Debug, Clone, Default)]
pub struct Cookies(BTreeMap<String, String>);

impl Cookies {
    fn header(&self) -> Option<String> {
        (!self.0.is_empty()).then(|| {
            self.0
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    fn update(&mut self, headers: &reqwest::header::HeaderMap) {
        for value in headers.get_all(reqwest::header::SET_COOKIE) {
            let Ok(value) = value.to_str() else { continue };
            let pair = value.split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                self.0
                    .insert(name.trim().to_string(), value.trim().to_string());
            }
        }
    }
}

fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Fails only if another provider was installed first, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// One client for the process: every resources server shares its pool.
#[allow(clippy::disallowed_types)] // the resources-server client (see the module comment)
fn shared_client() -> Result<reqwest::Client, String> {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    if let Some(client) = CLIENT.get() {
        return Ok(client.clone());
    }
    install_crypto_provider();
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .http1_only()
        // A redirect could lead past the service's egress allowlist.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    Ok(CLIENT.get_or_init(|| client).clone())
}

/// A resources server at a base URL.
pub struct ResourcesServer {
    #[allow(clippy::disallowed_types)] // the resources-server client (see the module comment)
    client: reqwest::Client,
    base_url: String,
    timeout: Duration,
    retry: RetryPolicy,
    pause: Pause,
    telemetry: Arc<EndpointTelemetry>,
}

impl ResourcesServer {
    pub fn new(config: &NemoGymConfig) -> Result<Self, String> {
        Ok(ResourcesServer {
            client: shared_client()?,
            base_url: config.base_url.clone(),
            timeout: config.timeout(),
            retry: RetryPolicy {
                max_retries: config.max_retries,
                ..RetryPolicy::default()
            },
            pause: Pause::default(),
            telemetry: telemetry::endpoint("nemo_gym"),
        })
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// POST `body` to `path` with the conversation's cookies, updating them
    /// from the reply. Connection failures, timeouts and 5xx/429 replies are
    /// retried by the one retry policy; what is left of them is an error, as is
    /// nothing else: a 4xx reply is returned for the caller to judge.
    pub async fn post(
        &self,
        path: &str,
        body: &Value,
        cookies: &mut Cookies,
    ) -> Result<Reply, LlmError> {
        let url = format!("{}{path}", self.base_url);
        let bytes = serde_json::to_vec(body)
            .map_err(|e| LlmError::InvalidRequest(format!("cannot encode the body: {e}")))?;
        let jar = std::sync::Mutex::new(std::mem::take(cookies));
        let (result, _retries) = self
            .retry
            .run(&self.pause, &self.base_url, &self.telemetry, |_| {
                self.attempt(&url, bytes.clone(), &jar)
            })
            .await;
        *cookies = jar.into_inner().unwrap_or_else(|e| e.into_inner());
        result
    }

    /// GET `path` once, outside the retry policy and within at most
    /// [`PROBE_TIMEOUT`]: for what the server says about itself (its OpenAPI
    /// document), which a caller can do without; a server that is down or
    /// slow is reported by the calls that follow, which retry.
    pub async fn get_once(&self, path: &str) -> Result<Reply, LlmError> {
        let url = format!("{}{path}", self.base_url);
        let response = self
            .client
            .get(&url)
            .timeout(self.timeout.min(PROBE_TIMEOUT))
            .send()
            .await
            .map_err(|e| self.failure(e))?;
        let status = response.status().as_u16();
        let body = response
            .bytes()
            .await
            .map_err(|e| self.failure(e))?
            .to_vec();
        Ok(Reply { status, body })
    }

    async fn attempt(
        &self,
        url: &str,
        body: Vec<u8>,
        jar: &std::sync::Mutex<Cookies>,
    ) -> Result<Reply, LlmError> {
        let cookie = jar.lock().unwrap_or_else(|e| e.into_inner()).header();
        let mut request = self
            .client
            .post(url)
            .timeout(self.timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(cookie) = cookie {
            request = request.header(reqwest::header::COOKIE, cookie);
        }
        let response = request.send().await.map_err(|e| self.failure(e))?;
        jar.lock()
            .unwrap_or_else(|e| e.into_inner())
            .update(response.headers());
        let status = response.status().as_u16();
        let body = response
            .bytes()
            .await
            .map_err(|e| self.failure(e))?
            .to_vec();
        if status == 429 || (500..600).contains(&status) {
            return Err(LlmError::from_status(status, &body, None));
        }
        Ok(Reply { status, body })
    }

    fn failure(&self, e: reqwest::Error) -> LlmError {
        if e.is_timeout() {
            return LlmError::Timeout(self.timeout);
        }
        LlmError::Connection(error_chain_with(&e, Repeats::Written))
    }
}
