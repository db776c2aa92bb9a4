//! The job config as written in TOML. Every table denies unknown fields so a typo
//! is an error, not a silently ignored setting. `load.rs` turns this into a `Job`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    pub name: String,
    /// Job seed; item seeds derive from it and the item key.
    #[serde(default)]
    pub seed: u64,
    /// `sqlite://PATH` (relative to the working directory) or `postgres://…`.
    #[serde(default = "default_database")]
    pub database: String,
    /// Conversations in flight at once.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// User turns before a conversation ends with `max_turns`.
    #[serde(default = "default_max_turns")]
    pub max_turns: u32,
    pub endpoints: BTreeMap<String, EndpointFile>,
    pub roles: RolesFile,
    #[serde(default)]
    pub user_simulator: UserSimulatorFile,
    #[serde(default)]
    pub policy: PolicyFile,
    pub environment: EnvironmentFile,
    pub dataset: DatasetFile,
    #[serde(default)]
    pub circuit_breaker: CircuitBreakerFile,
    /// How long a worker's claim on an item lasts without a heartbeat; a worker
    /// that dies has its items redone this long after its last heartbeat.
    #[serde(default = "default_lease_secs")]
    pub lease_secs: f64,
    /// Knobs of the in-process mock model server (used when an endpoint has `mock = true`).
    #[serde(default)]
    pub mock: MockFile,
    /// LLM judges (`[[judges]]`), kept as written: the `judge` module, which sits
    /// above config, reads and checks them (`judge::judges_from_tables`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<toml::Table>,
}

fn default_lease_secs() -> f64 {
    60.0
}

/// Stop the job, saying why, when too many recent items fail (e.g. a bad API key),
/// instead of failing every item one by one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CircuitBreakerFile {
    /// Number of most recent finished items considered.
    #[serde(default = "default_breaker_window")]
    pub window: u32,
    /// Stop when the failed share of the window reaches this (0 < x ≤ 1).
    #[serde(default = "default_breaker_rate")]
    pub max_error_rate: f64,
}

impl Default for CircuitBreakerFile {
    fn default() -> Self {
        CircuitBreakerFile {
            window: default_breaker_window(),
            max_error_rate: default_breaker_rate(),
        }
    }
}

fn default_breaker_window() -> u32 {
    20
}
fn default_breaker_rate() -> f64 {
    0.5
}

/// Behaviour of the in-process mock model server (a test double).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MockFile {
    /// Added to every response, milliseconds.
    #[serde(default)]
    pub latency_ms: u64,
    /// Uniform random extra latency in [0, this], milliseconds.
    #[serde(default)]
    pub latency_jitter_ms: u64,
    /// Share of requests answered with a fault instead (0 to 1).
    #[serde(default)]
    pub fault_rate: f64,
    /// Faults to draw from: `429`, `500`, `503`, `timeout`, `malformed`, `truncated`.
    #[serde(default)]
    pub faults: Vec<String>,
}

pub fn default_database() -> String {
    "sqlite://usersim.db".to_string()
}
fn default_concurrency() -> usize {
    16
}
fn default_max_turns() -> u32 {
    12
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointFile {
    /// OpenAI-compatible base URL, e.g. `http://127.0.0.1:8000/v1`.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Start usersim's mock model server (a test double) in-process instead.
    #[serde(default)]
    pub mock: bool,
    pub model: String,
    /// Name of the environment variable holding the API key.
    #[serde(default)]
    pub api_key_env: Option<String>,
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

/// Which endpoint plays each role.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolesFile {
    pub policy: String,
    pub user: String,
}

/// Who speaks first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Opener {
    /// The agent greets with `greeting`, then the user states their need.
    #[default]
    Agent,
    /// The user opens the conversation.
    User,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserSimulatorFile {
    /// Template path (relative to this config file); built-in template when absent.
    #[serde(default)]
    pub template: Option<PathBuf>,
    #[serde(default)]
    pub opens: Opener,
    #[serde(default = "default_greeting")]
    pub greeting: String,
}

impl Default for UserSimulatorFile {
    fn default() -> Self {
        UserSimulatorFile {
            template: None,
            opens: Opener::default(),
            greeting: default_greeting(),
        }
    }
}

fn default_greeting() -> String {
    "Hi! How can I help you today?".to_string()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// System prompt template (relative to this config file); built-in when absent.
    #[serde(default)]
    pub template: Option<PathBuf>,
    /// Model calls the policy may make within one turn (tool use loops).
    #[serde(default = "default_max_steps")]
    pub max_steps_per_turn: u32,
}

impl Default for PolicyFile {
    fn default() -> Self {
        PolicyFile {
            template: None,
            max_steps_per_turn: default_max_steps(),
        }
    }
}

fn default_max_steps() -> u32 {
    8
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentFile {
    /// `builtin:retail`.
    pub name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetFile {
    /// Scenarios JSONL (relative to this config file).
    pub scenarios: PathBuf,
    /// A directory of persona TOML files or a persona JSONL file.
    pub personas: PathBuf,
    #[serde(default = "default_samples")]
    pub samples_per_scenario: u32,
    /// Personas paired with each scenario, chosen by seed; all personas when absent.
    #[serde(default)]
    pub personas_per_scenario: Option<u32>,
}

fn default_samples() -> u32 {
    1
}
