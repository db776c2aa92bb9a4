//! The validated job: paths resolved, roles bound to endpoints, secrets read.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use super::file::Opener;

/// Where an endpoint's requests go.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Url(String),
    /// The in-process mock model server, started by the runner.
    Mock,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EndpointConfig {
    pub name: String,
    pub target: Target,
    pub model: String,
    pub api_key: Option<String>,
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub max_tokens: u32,
    pub timeout: Duration,
    pub max_in_flight: usize,
    pub max_retries: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct UserSimulatorConfig {
    pub template: Option<PathBuf>,
    pub opens: Opener,
    pub greeting: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PolicyConfig {
    pub template: Option<PathBuf>,
    pub max_steps_per_turn: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DatasetConfig {
    pub scenarios: PathBuf,
    pub personas: PathBuf,
    pub samples_per_scenario: u32,
    pub personas_per_scenario: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub name: String,
    /// The config file this job was read from.
    pub source: PathBuf,
    /// Its text, stored with the job.
    pub snapshot: String,
    pub seed: u64,
    pub database: String,
    pub concurrency: usize,
    pub max_turns: u32,
    pub endpoints: BTreeMap<String, EndpointConfig>,
    /// Endpoint name of each role.
    pub policy_endpoint: String,
    pub user_endpoint: String,
    pub user_simulator: UserSimulatorConfig,
    pub policy: PolicyConfig,
    pub environment: String,
    pub dataset: DatasetConfig,
}
