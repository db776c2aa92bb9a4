//! The job config as written in TOML, table by table. `load.rs` reads each
//! table with the position of its keys (so every problem names its line) and
//! turns them into a `Job`; [`JobSnapshot`] is what a job stores.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::endpoint_file::EndpointTable;
use super::environment_table::EnvironmentConfig;

/// The top-level keys that are not tables.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobHead {
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
    /// How long a worker's claim on an item lasts without a heartbeat; a worker
    /// that dies has its items redone this long after its last heartbeat.
    #[serde(default = "default_lease_secs")]
    pub lease_secs: f64,
}

/// The config a job stores: every table with its defaults filled in, paths
/// absolute, operator endpoints resolved. Its TOML text is part of the job's
/// config hash, so its shape (field order, what is skipped) never changes for
/// configs that exist: `snapshot_golden` holds it to recorded snapshots.
#[derive(Debug, Clone, Serialize)]
pub struct JobSnapshot {
    pub name: String,
    pub seed: u64,
    pub database: String,
    pub concurrency: usize,
    pub max_turns: u32,
    pub endpoints: BTreeMap<String, EndpointTable>,
    pub roles: RolesFile,
    pub user_simulator: UserSimulatorFile,
    pub policy: PolicyFile,
    pub environment: EnvironmentConfig,
    pub dataset: DatasetFile,
    pub circuit_breaker: CircuitBreakerFile,
    pub lease_secs: f64,
    pub mock: MockConfig,
    /// `[persona_table]`, left out when not given (the snapshots, and config
    /// hashes, of jobs without one stay as they were).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persona_table: Option<PersonaTableFile>,
    /// The `[[judges]]` tables as written, `template` paths made absolute.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<toml::Table>,
}

fn default_lease_secs() -> f64 {
    60.0
}

/// Stop the job, saying why, when too many recent items fail (e.g. a bad API key),
/// instead of failing every item one by one. As written and as the job uses it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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

/// Behaviour of the in-process mock model server (a test double): `[mock]`
/// as written, as the mock server takes it and as stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MockConfig {
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
    pub faults: Vec<MockFault>,
    // The batch keys are written only when set, so that the snapshots (and
    // config hashes) of configs without them stay as they were.
    /// The Batch API (`/v1/files`, `/v1/batches`): milliseconds a batch is
    /// `in_progress` after it is created.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batch_completion_delay_ms: u64,
    /// The Batch API: share of requests (drawn from each custom_id) that
    /// fail, half as an error-file line, half as a 500 in the output file.
    #[serde(default, skip_serializing_if = "is_zero_share")]
    pub batch_fail_share: f64,
    /// The Batch API: batches (1 = the first created) that expire having
    /// answered only the first half of their requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batch_expire: Vec<u64>,
    /// The Batch API: batches that are cancelled before they answer anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batch_cancel: Vec<u64>,
    /// Play a server with this tokens-per-minute limit of its own: every
    /// reply carries `x-ratelimit-remaining-tokens` and
    /// `x-ratelimit-reset-tokens`, counted over the last 60 s of what it
    /// reported (it never refuses a request for it). For the limiter's
    /// tests; never read from a config.
    #[serde(skip)]
    pub announced_tokens_per_minute: Option<u64>,
}

impl MockConfig {
    pub fn latency(&self) -> Duration {
        Duration::from_millis(self.latency_ms)
    }

    pub fn latency_jitter(&self) -> Duration {
        Duration::from_millis(self.latency_jitter_ms)
    }

    pub fn batch_completion_delay(&self) -> Duration {
        Duration::from_millis(self.batch_completion_delay_ms)
    }
}

/// A fault the mock model server can inject, written as its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum MockFault {
    RateLimited,
    ServerError,
    Unavailable,
    Timeout,
    Malformed,
    Truncated,
}

impl MockFault {
    pub const NAMES: &'static [&'static str] =
        &["429", "500", "503", "timeout", "malformed", "truncated"];
    const ALL: [MockFault; 6] = [
        MockFault::RateLimited,
        MockFault::ServerError,
        MockFault::Unavailable,
        MockFault::Timeout,
        MockFault::Malformed,
        MockFault::Truncated,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MockFault::RateLimited => "429",
            MockFault::ServerError => "500",
            MockFault::Unavailable => "503",
            MockFault::Timeout => "timeout",
            MockFault::Malformed => "malformed",
            MockFault::Truncated => "truncated",
        }
    }

    pub fn parse(s: &str) -> Option<MockFault> {
        MockFault::ALL.into_iter().find(|f| f.name() == s)
    }
}

impl TryFrom<String> for MockFault {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        MockFault::parse(&name).ok_or_else(|| {
            format!(
                "'{name}' is not a mock fault; use one of {}",
                MockFault::NAMES.join(", ")
            )
        })
    }
}

impl From<MockFault> for String {
    fn from(fault: MockFault) -> String {
        fault.name().to_string()
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_share(share: &f64) -> bool {
    *share == 0.0
}

pub fn default_database() -> String {
    "sqlite://sparring.db".to_string()
}
fn default_concurrency() -> usize {
    16
}
fn default_max_turns() -> u32 {
    12
}

/// Which endpoint plays each role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolesFile {
    pub policy: String,
    pub user: String,
    /// The endpoint that plays a `simulated` environment's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<String>,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserSimulatorFile {
    /// `llm` (the default): a simulated user talks with the policy; `none`: no
    /// simulated user, the conversation is the dataset's opening and the
    /// policy's answer (single-step NeMo Gym rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<UserMode>,
    /// Template path (relative to this config file); built-in template when absent.
    pub template: Option<PathBuf>,
    #[serde(default)]
    pub opens: Opener,
    #[serde(default = "default_greeting")]
    pub greeting: String,
    /// Deterministic checks of the simulated user (`premature_stop`, …) whose
    /// flagged conversations exports leave out unless told to keep them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop_flagged: Vec<String>,
}

/// The names of the deterministic checks of the simulated user, as
/// `drop_flagged` takes them (the `user_checks` module's flags; a test there
/// holds the two lists together).
pub const USER_FLAG_NAMES: [&str; 6] = [
    "premature_stop",
    "role_confusion",
    "instruction_leak",
    "invented_fact",
    "repetition",
    "control_token_misuse",
];

impl UserSimulatorFile {
    pub fn mode(&self) -> UserMode {
        self.mode.unwrap_or_default()
    }
}

impl Default for UserSimulatorFile {
    fn default() -> Self {
        UserSimulatorFile {
            mode: None,
            template: None,
            opens: Opener::default(),
            greeting: default_greeting(),
            drop_flagged: Vec::new(),
        }
    }
}

fn default_greeting() -> String {
    "Hi! How can I help you today?".to_string()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// System prompt template (relative to this config file); built-in when absent.
    pub template: Option<PathBuf>,
    /// Model calls the policy may make within one turn (tool use loops).
    #[serde(default = "default_max_steps")]
    pub max_steps_per_turn: u32,
    /// Whether the policy may make several tool calls in one step; by
    /// default what the environment's policy allows (retail's: one call at a
    /// time). `false` asks for one call per step (the request's
    /// `parallel_tool_calls` and the default prompt say so), for chat
    /// templates without parallel calls (Llama-3.1's).
    // Left out of a snapshot when not given, so the snapshots, and the
    // config hashes, of jobs stored before the key existed stay the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// What plays the policy (default `model`); see [`super::policy`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<super::policy::PolicyKindName>,
    /// An agent's own tool calls are also made on sparring's session, so that
    /// `db` and probes see them (default false: the agent's tools act on an
    /// environment of their own, or on one sparring reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_agent_tools: Option<bool>,
    /// The kinds' own keys (`[policy.responses_agent]`, `[policy.a2a]`,
    /// `[policy.http]`); only the one of `kind` may be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses_agent: Option<super::policy::ResponsesAgentKeys>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a2a: Option<super::policy::A2aKeys>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<super::policy::HttpKeys>,
    /// What plays the policy, as checked: the kind and its table.
    #[serde(skip)]
    pub checked: super::policy::PolicyKind,
}

impl PolicyFile {
    /// What plays the policy, as written; every problem goes to `problems`.
    pub fn kind(
        &self,
        file: &std::path::Path,
        problems: &mut Vec<super::Problem>,
    ) -> Option<super::policy::PolicyKind> {
        super::policy::read_kind(file, self.kind.unwrap_or_default(), self, problems)
    }

    /// Whether an agent's own tool calls are also made on sparring's session.
    pub fn replay_agent_tools(&self) -> bool {
        self.replay_agent_tools.unwrap_or(false)
    }
}

impl Default for PolicyFile {
    fn default() -> Self {
        PolicyFile {
            template: None,
            max_steps_per_turn: default_max_steps(),
            parallel_tool_calls: None,
            kind: None,
            replay_agent_tools: None,
            responses_agent: None,
            a2a: None,
            http: None,
            checked: Default::default(),
        }
    }
}

fn default_max_steps() -> u32 {
    8
}

/// Whether a simulated user takes part in the conversation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UserMode {
    #[default]
    Llm,
    None,
}

/// How the dataset file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatasetFormat {
    /// sparring scenarios (`scenarios = "…jsonl"`).
    Scenarios,
    /// NeMo Gym rows (`rows = "…/example.jsonl"`): each row is a scenario.
    NemoGym,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetFile {
    /// `scenarios` when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<DatasetFormat>,
    /// Scenarios JSONL (relative to this config file); format `scenarios`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenarios: Option<PathBuf>,
    /// NeMo Gym rows JSONL; format `nemo_gym`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<PathBuf>,
    /// NeMo Gym rollouts JSONL (e.g. `example_rollouts.jsonl`) whose recorded
    /// tool calls and answers the mock policy replays for the rows they were
    /// made from; format `nemo_gym`, optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<PathBuf>,
    /// A row field holding the simulated user's goal (text); without it the
    /// goal is the row's user turns. Format `nemo_gym`, optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_goal_field: Option<String>,
    /// A directory of persona TOML files or a persona JSONL file. Optional
    /// with `[user_simulator] mode = "none"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub personas: Option<PathBuf>,
    #[serde(default = "default_samples")]
    pub samples_per_scenario: u32,
    /// Personas paired with each scenario, chosen by seed; all personas when absent.
    pub personas_per_scenario: Option<u32>,
    /// `[persona_table]`: `personas` is a table whose rows are personas
    /// (a table of its own in the snapshot).
    #[serde(skip)]
    pub persona_table: Option<PersonaTableFile>,
}

impl DatasetFile {
    pub fn format(&self) -> DatasetFormat {
        self.format.unwrap_or(DatasetFormat::Scenarios)
    }

    /// The scenarios file, or the NeMo Gym rows (one is given, once checked).
    pub fn data(&self) -> &Path {
        let data = self.scenarios.as_deref().or(self.rows.as_deref());
        data.unwrap_or(Path::new(""))
    }

    /// Personas paired with each scenario: with `[persona_table] per =
    /// "scenario"`, its `sample` (of the job's `sample × scenarios`, the
    /// plan's rotation); else as written (`None`: every persona).
    pub fn personas_per_scenario(&self) -> Option<u32> {
        match &self.persona_table {
            Some(t) if t.per == SamplePer::Scenario => t.sample,
            _ => self.personas_per_scenario,
        }
    }
}

fn default_samples() -> u32 {
    1
}

/// What a job config's defaults come to, for a job that has no config of
/// its own (an import job, when it is judged).
#[derive(Debug, Clone, Copy)]
pub struct JobDefaults {
    pub concurrency: usize,
    pub lease: std::time::Duration,
    pub circuit_breaker: super::CircuitBreakerConfig,
}

impl JobDefaults {
    pub fn get() -> JobDefaults {
        JobDefaults {
            concurrency: default_concurrency(),
            lease: std::time::Duration::from_secs_f64(default_lease_secs()),
            circuit_breaker: CircuitBreakerFile::default(),
        }
    }
}

/// `[persona_table]`: how the rows of the table `[dataset] personas` names
/// become personas (docs/populations.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonaTableFile {
    /// The column holding each row's unique id (`uuid` in Nemotron-Personas).
    pub id: String,
    /// Persona field → a column name, or a Tera template over the row when
    /// it holds `{{` or `{%`.
    #[serde(default)]
    pub fields: BTreeMap<String, String>,
    /// Attributes computed from the row by templates (e.g. `age_band`), kept
    /// with the row's columns.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub derived: BTreeMap<String, String>,
    /// Rows drawn; every row (that passes `where`) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<u32>,
    /// `job`: `sample` personas for the whole job; `scenario`: `sample` each.
    #[serde(default)]
    pub per: SamplePer,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stratify_by: Vec<String>,
    #[serde(default)]
    pub allocation: Allocation,
    /// A filter over the row, e.g. `country == 'USA' and age >= 65`.
    #[serde(default, rename = "where", skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// The sample's seed; the job's seed when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Knob → (value → weight) every row starts from; the built-in base
    /// weights when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knobs: Option<BTreeMap<String, BTreeMap<String, f64>>>,
    /// Numeric columns shifting knob weights; the built-in OCEAN rules (for
    /// the trait columns the table has) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knob_rules: Option<Vec<KnobRuleFile>>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SamplePer {
    #[default]
    Job,
    Scenario,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Allocation {
    /// Each stratum gets its share of the table's (filtered) rows.
    #[default]
    Proportional,
    /// Each stratum gets the same number.
    Equal,
}

/// A numeric column shifting one knob: the lower the column (within
/// `scale`), the more weight `low` gets; the higher, the more `high` gets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnobRuleFile {
    pub column: String,
    pub knob: String,
    pub low: String,
    pub high: String,
    /// The column's range, `[min, max]`; `[0, 1]` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<[f64; 2]>,
    /// Weight added at the ends of the scale; 6 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strength: Option<f64>,
}
