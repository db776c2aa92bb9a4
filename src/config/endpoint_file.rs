//! The types of an endpoint table: as written ([`EndpointSettings`],
//! [`EndpointFile`]) and as stored in a job's snapshot ([`EndpointSnapshot`]).
//! `endpoint` reads and checks them; this file imports none of its folder's
//! logic, so that the tables as written (`file`) can name them.

use serde::{Deserialize, Serialize};

use super::api::Api;

/// What a job's own endpoint (a server or the mock) may set besides its target.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EndpointSettings {
    pub model: String,
    #[serde(default)]
    pub temperature: Option<f32>,
    #[serde(default)]
    pub top_p: Option<f32>,
    /// Always sent: without it llama.cpp generates until the context is full
    /// (seen: 4,092 tokens, 100 s, for one reply from a 135M model).
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: f64,
    #[serde(default = "default_max_in_flight")]
    pub max_in_flight: usize,
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// Speak HTTP/2 to this endpoint: h2c with prior knowledge on `http://`,
    /// h2 on `https://`. One connection then carries every call in flight.
    #[serde(default)]
    pub http2: bool,
    /// Requests per minute this endpoint may receive (all roles using it together).
    #[serde(default)]
    pub requests_per_minute: Option<u32>,
    /// Tokens per minute (prompt, estimated before the call, plus `max_tokens`).
    #[serde(default)]
    pub tokens_per_minute: Option<u32>,
    /// USD per million prompt tokens; cost is reported as unknown without it.
    #[serde(default)]
    pub input_price_per_million: Option<f64>,
    /// USD per million completion tokens.
    #[serde(default)]
    pub output_price_per_million: Option<f64>,
    /// Send judging jobs' calls through the OpenAI Batch API (docs/batch.md).
    #[serde(default)]
    pub batch: bool,
    /// USD per million prompt tokens of calls answered through a batch.
    #[serde(default)]
    pub batch_input_price_per_million: Option<f64>,
    /// USD per million completion tokens of calls answered through a batch.
    #[serde(default)]
    pub batch_output_price_per_million: Option<f64>,
    /// Seconds between two looks at the batches in flight.
    #[serde(default = "default_batch_poll_secs")]
    pub batch_poll_secs: f64,
    /// Requests per batch file (the API takes at most 50,000).
    #[serde(default = "default_batch_max_requests")]
    pub batch_max_requests: u32,
    /// Submissions of one call before its judgment fails.
    #[serde(default = "default_batch_max_attempts")]
    pub batch_max_attempts: u32,
    /// `chat` (Chat Completions) or `responses` (the Responses API).
    #[serde(default)]
    pub api: Api,
    /// Ask a vLLM server for each generation's token ids and log
    /// probabilities (chat only; docs/configuration.md).
    #[serde(default)]
    pub capture_tokens: bool,
}

/// One endpoint as written.
#[derive(Debug, Clone, PartialEq)]
pub enum EndpointFile {
    Server {
        base_url: String,
        api_key_env: Option<String>,
        azure_deployment: Option<String>,
        azure_api_version: Option<String>,
        settings: EndpointSettings,
    },
    Mock {
        settings: EndpointSettings,
    },
    Operator {
        operator: String,
        temperature: Option<f32>,
        top_p: Option<f32>,
    },
}

/// An endpoint as stored in a job's snapshot: the shape every stored job has
/// (its config hash covers this text), an operator endpoint resolved to the
/// server it names.
#[derive(Debug, Clone, Serialize)]
pub struct EndpointSnapshot {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    pub mock: bool,
    pub model: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub azure_deployment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub azure_api_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    pub max_tokens: u32,
    pub timeout_secs: f64,
    pub max_in_flight: usize,
    pub max_retries: u32,
    pub http2: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_per_minute: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_price_per_million: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_price_per_million: Option<f64>,
    // The batch keys are written only when set, so that the snapshots (and
    // config hashes) of endpoints without them stay as they were.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub batch: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_input_price_per_million: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_output_price_per_million: Option<f64>,
    #[serde(skip_serializing_if = "is_default_poll")]
    pub batch_poll_secs: f64,
    #[serde(skip_serializing_if = "is_default_max_requests")]
    pub batch_max_requests: u32,
    #[serde(skip_serializing_if = "is_default_max_attempts")]
    pub batch_max_attempts: u32,
    // Written only when not the default, as the batch keys.
    #[serde(skip_serializing_if = "Api::is_chat")]
    pub api: Api,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub capture_tokens: bool,
}

pub(super) fn default_batch_poll_secs() -> f64 {
    30.0
}
pub(super) fn default_batch_max_requests() -> u32 {
    50_000
}
pub(super) fn default_batch_max_attempts() -> u32 {
    3
}

pub(super) fn default_max_tokens() -> u32 {
    1024
}
pub(super) fn default_timeout_secs() -> f64 {
    120.0
}
pub(super) fn default_max_in_flight() -> usize {
    64
}
pub(super) fn default_max_retries() -> u32 {
    4
}

fn is_default_poll(v: &f64) -> bool {
    *v == default_batch_poll_secs()
}
fn is_default_max_requests(v: &u32) -> bool {
    *v == default_batch_max_requests()
}
fn is_default_max_attempts(v: &u32) -> bool {
    *v == default_batch_max_attempts()
}
