//! The types of an endpoint table: as written and as stored in a job's
//! snapshot, one type ([`EndpointTable`]), and the kinds ([`EndpointFile`]).
//! `endpoint` reads and checks them; this file imports none of its folder's
//! logic, so that the tables as written (`file`) can name them.

use serde::{Deserialize, Serialize};

use super::api::Api;

/// One `[endpoints.NAME]` table of a server (`base_url`) or of the built-in
/// mock (`mock = true`), as written. With its defaults filled and `mock` set,
/// serialized, it is also the endpoint's stored snapshot: every stored job's
/// config hash covers that text, so the field order and what is skipped stay
/// as they are (`snapshot_golden`), and a key added later is skipped at its
/// default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndpointTable {
    /// OpenAI-compatible base URL, e.g. `http://127.0.0.1:8000/v1`; the mock has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The built-in mock model server (a test double); written `false` in the
    /// stored snapshots of servers.
    #[serde(default)]
    pub mock: bool,
    pub model: String,
    /// Name of the environment variable holding the API key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// An Azure OpenAI deployment's name (see `config::azure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azure_deployment: Option<String>,
    /// Its `api-version`, e.g. `2024-10-21`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azure_api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
    /// Tokens per minute (prompt, estimated before the call, plus `max_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_minute: Option<u32>,
    /// USD per million prompt tokens; cost is reported as unknown without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_price_per_million: Option<f64>,
    /// USD per million completion tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_price_per_million: Option<f64>,
    // The keys below came later: each is stored only when not its default,
    // so that the snapshots (and config hashes) of endpoints without it stay
    // as they were.
    /// Send judging jobs' calls through the OpenAI Batch API (docs/batch.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub batch: bool,
    /// USD per million prompt tokens of calls answered through a batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_input_price_per_million: Option<f64>,
    /// USD per million completion tokens of calls answered through a batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_output_price_per_million: Option<f64>,
    /// Seconds between two looks at the batches in flight.
    #[serde(
        default = "default_batch_poll_secs",
        skip_serializing_if = "is_default_poll"
    )]
    pub batch_poll_secs: f64,
    /// Requests per batch file (the API takes at most 50,000).
    #[serde(
        default = "default_batch_max_requests",
        skip_serializing_if = "is_default_max_requests"
    )]
    pub batch_max_requests: u32,
    /// Submissions of one call before its judgment fails.
    #[serde(
        default = "default_batch_max_attempts",
        skip_serializing_if = "is_default_max_attempts"
    )]
    pub batch_max_attempts: u32,
    /// `chat` (Chat Completions) or `responses` (the Responses API).
    #[serde(default, skip_serializing_if = "Api::is_chat")]
    pub api: Api,
    /// Ask a vLLM server for each generation's token ids and log
    /// probabilities (chat only; docs/configuration.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capture_tokens: bool,
}

/// The keys only a server's table may hold.
pub const SERVER_ONLY: &[&str] = &[
    "base_url",
    "api_key_env",
    "azure_deployment",
    "azure_api_version",
];

/// One endpoint as written.
#[derive(Debug, Clone, PartialEq)]
pub enum EndpointFile {
    /// A server or the mock: its stored snapshot is the table itself.
    Table(Box<EndpointTable>),
    /// An operator endpoint of `sparring serve --endpoints`, stored resolved.
    Operator {
        operator: String,
        temperature: Option<f32>,
        top_p: Option<f32>,
    },
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

fn default_max_tokens() -> u32 {
    1024
}
fn default_timeout_secs() -> f64 {
    120.0
}
fn default_max_in_flight() -> usize {
    64
}
fn default_max_retries() -> u32 {
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
