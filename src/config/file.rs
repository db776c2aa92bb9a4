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
