//! The validated job: paths resolved, roles bound to endpoints, secrets read.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use super::api::Api;
pub use super::endpoint_file::EndpointTable;
pub use super::environment_table::{EnvironmentConfig, NemoGymConfig, SimulatedConfig};
pub use super::file::{
    CircuitBreakerFile as CircuitBreakerConfig, DatasetFile, DatasetFormat, MockConfig, MockFault,
    Opener, PolicyFile, UserMode, UserSimulatorFile,
};
pub use super::missing_tool::MissingTool;

/// Where an endpoint's requests go.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Url(String),
    /// The in-process mock model server, started by the runner.
    Mock,
}

/// A model endpoint as a job uses it: its table (defaults filled, an
/// operator's endpoint resolved) and what checking the table found.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointConfig {
    pub name: String,
    pub target: Target,
    /// The key read from the variable `api_key_env` names (or held in memory).
    pub api_key: Option<String>,
    /// An Azure OpenAI deployment: requests go to
    /// `{base_url}/openai/deployments/{deployment}/chat/completions?api-version=..`
    /// with an `api-key` header, through async-openai's Azure config.
    pub azure: Option<AzureDeployment>,
    /// PEM certificates trusted for this endpoint's `https://` besides the
    /// system's roots: a private CA, or a test server's own certificate.
    pub ca_pem: Option<String>,
    pub settings: EndpointTable,
}

impl EndpointConfig {
    /// Endpoint `name` at `target` serving `model`: its settings are what
    /// reading a table of just those keys gives, every other key its default.
    pub fn new(name: &str, target: Target, model: &str) -> Result<Self, toml::de::Error> {
        let mut table = toml::Table::new();
        table.insert("model".into(), model.into());
        match &target {
            Target::Url(url) => table.insert("base_url".into(), url.as_str().into()),
            Target::Mock => table.insert("mock".into(), true.into()),
        };
        Ok(EndpointConfig {
            name: name.into(),
            target,
            api_key: None,
            azure: None,
            ca_pem: None,
            settings: table.try_into()?,
        })
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.settings.timeout_secs)
    }

    /// What a call costs; unknown without both prices.
    pub fn prices(&self) -> Option<Prices> {
        let s = &self.settings;
        Prices::of(s.input_price_per_million, s.output_price_per_million)
    }

    /// `batch = true`: how judging jobs send this endpoint's calls through
    /// the OpenAI Batch API.
    pub fn batch(&self) -> Option<BatchSettings> {
        let s = &self.settings;
        s.batch.then(|| BatchSettings {
            poll: Duration::from_secs_f64(s.batch_poll_secs),
            max_requests: s.batch_max_requests,
            max_attempts: s.batch_max_attempts,
            prices: Prices::of(
                s.batch_input_price_per_million,
                s.batch_output_price_per_million,
            ),
        })
    }
}

/// How an endpoint's judge calls go through the Batch API.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchSettings {
    /// Between two looks at the batches in flight.
    pub poll: Duration,
    /// Requests per batch file.
    pub max_requests: u32,
    /// Submissions of one call before its judgment fails.
    pub max_attempts: u32,
    /// What calls answered through a batch cost; unknown without them.
    pub prices: Option<Prices>,
}

/// Which Azure OpenAI deployment, and which version of its API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AzureDeployment {
    pub deployment: String,
    pub api_version: String,
}

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

impl Prices {
    /// Prices when both are given.
    pub fn of(input: Option<f64>, output: Option<f64>) -> Option<Prices> {
        Some(Prices {
            input_per_million: input?,
            output_per_million: output?,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub name: String,
    /// The config file this job was read from.
    pub source: PathBuf,
    /// The config as parsed, every path absolute (TOML): stored with the job so a
    /// worker or `run --resume` can rebuild it from the database alone.
    pub snapshot: String,
    pub seed: u64,
    pub database: String,
    pub concurrency: usize,
    pub max_turns: u32,
    pub endpoints: BTreeMap<String, EndpointConfig>,
    /// Endpoint name of each role.
    pub policy_endpoint: String,
    pub user_endpoint: String,
    /// The endpoint that plays a `simulated` environment's tools.
    pub tools_endpoint: Option<String>,
    /// As written, its template resolved.
    pub user_simulator: UserSimulatorFile,
    /// As written, its template resolved and its kind checked.
    pub policy: PolicyFile,
    pub environment: EnvironmentConfig,
    /// As written, its paths resolved, with `[persona_table]`.
    pub dataset: DatasetFile,
    pub circuit_breaker: CircuitBreakerConfig,
    pub lease: Duration,
    pub mock: MockConfig,
    /// The `[[judges]]` tables as written, `template` paths made absolute;
    /// `judge::judges_of_job` validates them.
    pub judges: Vec<toml::Table>,
    /// The config text as read (a JSON body's TOML rendering): the judge
    /// module reads `[[judges]]` from it, so its problems keep their lines.
    pub text: Arc<str>,
    /// Whether `text` is a rendering (problems then name fields, not lines).
    pub text_is_rendered: bool,
    /// The folder relative paths of the config resolve against.
    pub base: PathBuf,
}
