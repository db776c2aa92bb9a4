//! Environments: the resource tools a policy may call, with per-conversation state.
//!
//! An [`Environment`] is shared by all conversations of a job; [`Environment::open`]
//! makes a [`Session`] with fresh state for one conversation.

pub mod builtin;
pub mod mcp;
pub mod nemo_gym;
pub mod planted;
pub mod preflight;
pub mod sampled;
pub mod simulated;

use std::sync::Arc;

use async_trait::async_trait;

use crate::config::{EnvironmentConfig, Problem};
pub use crate::llm::message::{Caller, Message, ToolCall, ToolSpec};
use crate::llm::ChatModel;
use crate::verify::probes::ProbeOutput;
use crate::verify::{Criteria, Verification};

/// Open the environment a job config names (a `simulated` one without the
/// model that plays its tools: enough to check it, not to run it; an MCP
/// server is started once, to list its tools).
pub async fn open_environment(
    config: &EnvironmentConfig,
) -> Result<Arc<dyn Environment>, EnvError> {
    open_environment_with(config, None).await
}

/// [`open_environment`] with the model of the `tools` role, for a
/// `simulated` environment to run.
pub async fn open_environment_with(
    config: &EnvironmentConfig,
    tools_model: Option<&Arc<dyn ChatModel>>,
) -> Result<Arc<dyn Environment>, EnvError> {
    match config {
        EnvironmentConfig::Builtin(name) => builtin::open_builtin(name),
        EnvironmentConfig::NemoGym(c) => {
            Ok(Arc::new(nemo_gym::NemoGymEnvironment::connect(c).await?))
        }
        EnvironmentConfig::Simulated(c) => Ok(Arc::new(simulated::SimulatedEnvironment::open(
            c,
            tools_model.cloned(),
        )?)),
        EnvironmentConfig::Mcp(c) => Ok(Arc::new(mcp::McpEnvironment::start(c).await?)),
    }
}

/// What a session starts from: the item's seed and the scenario's initial-state
/// overrides (domain-specific JSON, `null` when the scenario gives none).
#[derive(Debug, Clone, Default)]
pub struct InitialState {
    pub seed: u64,
    pub data: serde_json::Value,
}

/// The result of one tool call as the policy sees it. Errors are outputs too:
/// the model reads them and may correct itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: false,
        }
    }
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: format!("Error: {}", message.into()),
            is_error: true,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error("environment '{0}' is not known; built-in environments are: {1}")]
    UnknownEnvironment(String, String),
    #[error("cannot load environment data from {path}: {message}")]
    Data { path: String, message: String },
    #[error("the scenario's initial state is invalid: {0}")]
    InitialState(String),
    #[error("verification failed to run: {0}")]
    Verification(String),
    /// A remote environment failed (after the retries of transient failures):
    /// the conversation fails as `env_error`, never scored.
    #[error("resources server {url}: {message}")]
    Remote { url: String, message: String },
    /// The tool specs of a `simulated` environment are unusable: every
    /// problem of the file, each naming its tool and field.
    #[error("{path}: {}", problems.join("; "))]
    ToolSpecs { path: String, problems: Vec<String> },
    /// The model playing a `simulated` tool failed, or gave a bad result
    /// twice: the item fails (retryable), never a tool error the policy sees.
    #[error("simulated tool '{tool}': {message}")]
    Simulated { tool: String, message: String },
    /// An MCP server failed to start, or failed during a conversation.
    #[error("MCP server {server}: {message}")]
    Mcp { server: String, message: String },
    /// Scenario synthesis needs real records and a readable state; `reason`
    /// says what this environment lacks and what would make it sampleable.
    #[error("environment '{environment}' cannot be sampled for scenario synthesis: {reason}")]
    NotSampleable { environment: String, reason: String },
}

impl EnvError {
    /// The error as problems of the config's `field` in `file`: one for each
    /// problem of a tools file, so `validate` lists them all; one otherwise.
    pub fn problems_at(&self, file: &std::path::Path, field: &str) -> Vec<Problem> {
        match self {
            EnvError::ToolSpecs { path, problems } if !problems.is_empty() => problems
                .iter()
                .map(|problem| Problem::at_field(file, field, format!("{path}: {problem}")))
                .collect(),
            other => vec![Problem::at_field(file, field, other.to_string())],
        }
    }
}

/// Resource tools with per-conversation state.
#[async_trait]
pub trait Environment: Send + Sync {
    /// Name as written in a job config, e.g. `builtin:retail`.
    fn name(&self) -> &str;
    /// The system-prompt policy text of the domain (rules the agent must follow).
    fn policy_text(&self) -> &str;
    fn tools(&self) -> &[ToolSpec];
    /// Whether the domain's policy lets the agent make several tool calls in
    /// one step. A job's `[policy] parallel_tool_calls` follows it unless
    /// the config says otherwise, so that the system prompt never allows
    /// what the policy it includes forbids.
    fn allows_parallel_tool_calls(&self) -> bool {
        true
    }
    /// Tools the simulated user may call on its own side of the same session
    /// (dual control: the user's device). Never offered to the policy.
    fn user_tools(&self) -> &[ToolSpec] {
        &[]
    }
    /// What is wrong with a gold action's `arguments` for `tool` by the
    /// tool's own parameters schema, which `validate` reports; `None` when
    /// they fit, or when the environment does not check arguments before a
    /// call (a real server answers a bad call itself, and the gold actions'
    /// replay on a fresh session finds that).
    fn argument_problem(
        &self,
        caller: Caller,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> Option<String> {
        let _ = (caller, tool, arguments);
        None
    }
    /// The tools a scenario's probes may call (`validate` checks each
    /// probe's): the policy's, unless the environment gives probes a list of
    /// their own (an MCP server's `probe_tools`).
    fn probe_tools(&self) -> Vec<&str> {
        self.tools().iter().map(|t| t.name.as_str()).collect()
    }
    /// Whether `sparring validate` replays the scenarios' gold actions on a
    /// fresh session. An environment whose tools are played by a model
    /// (`simulated`) has nothing to replay before a job runs.
    fn replays_gold_actions(&self) -> bool {
        true
    }
    async fn open(&self, init: &InitialState) -> Result<Box<dyn Session>, EnvError>;
    /// Real records of a fresh session for a scenario generator to ground its
    /// proposals in (never invented IDs): a JSON object of a few records per
    /// kind, chosen by `seed`, at most `n` of the main kind.
    async fn sample_records(&self, seed: u64, n: usize) -> Result<serde_json::Value, EnvError> {
        let _ = (seed, n);
        Err(EnvError::NotSampleable {
            environment: self.name().to_string(),
            reason: "it cannot show the records of a fresh session; an environment needs a \
                     readable state (builtin:retail, builtin:phone, an mcp or nemo_gym \
                     environment with state_probes) to ground proposals in"
                .to_string(),
        })
    }
    /// Whether a scenario may name `db` in its reward basis (the state left
    /// behind compared with the gold actions' state). An MCP server's state
    /// cannot be replayed and compared: its scenarios check it with probes.
    fn scores_db(&self) -> bool {
        true
    }
}

/// One environment instance for one conversation.
#[async_trait]
pub trait Session: Send {
    /// Run one tool call. Errors the policy caused (an unknown tool, bad
    /// arguments) are outputs it sees; an `Err` is the environment failing,
    /// which ends the conversation as `env_error`.
    async fn call(&mut self, call: &ToolCall) -> Result<ToolOutput, EnvError>;
    /// Run one tool call made by `caller`: the policy's go to [`Session::call`];
    /// the user's to the environment's user tools, which an environment
    /// without them refuses (an output the user simulator reads).
    async fn call_by(&mut self, caller: Caller, call: &ToolCall) -> Result<ToolOutput, EnvError> {
        match caller {
            Caller::Policy => self.call(call).await,
            Caller::User => Ok(ToolOutput::error(format!(
                "the user has no tools in this environment ('{}' was called)",
                call.name
            ))),
        }
    }
    /// Make a scenario's probe call after the conversation (see
    /// `verify::probes`): by default the call as the policy would make it,
    /// its output as the policy would read it. An MCP session lets probes
    /// call their own list of tools and keeps a result's text and structured
    /// content apart.
    async fn probe(&mut self, call: &ToolCall) -> Result<ProbeOutput, EnvError> {
        let output = self.call(call).await?;
        Ok(ProbeOutput {
            content: output.content,
            structured: None,
            is_error: output.is_error,
        })
    }
    /// Score the conversation: `messages` is the policy's view of the transcript.
    async fn verify(
        &mut self,
        messages: &[Message],
        criteria: &Criteria,
    ) -> Result<Verification, EnvError>;
    /// Requests this session made to a remote environment, and the time spent
    /// waiting for them (nothing for a built-in one, which answers in-process).
    fn usage(&self) -> EnvUsage {
        EnvUsage::default()
    }
    /// The session's current state as JSON, for synthesis to compare before
    /// and after gold actions and to look up the IDs a user may know: a
    /// built-in domain's whole store, what an MCP or NeMo Gym environment's
    /// `state_probes` read, a simulated one's facts and successful writes.
    /// `None` when the environment cannot show its state; an `Err` is the
    /// environment failing to answer (infrastructure, not the scenario).
    async fn state(&mut self) -> Result<Option<serde_json::Value>, EnvError> {
        Ok(None)
    }
}

/// A session's requests to a remote environment and the time they took.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EnvUsage {
    pub requests: u64,
    pub wait: std::time::Duration,
}
