//! `[environment]`, one type per kind: as written (its keys, with their
//! defaults), as checked (paths resolved, URLs trimmed) and, serialized, as a
//! job's snapshot stores it. Every stored job's config hash covers that text,
//! so each kind's field order and skip rules stay as they are
//! (`snapshot_golden` holds them). `environment` and `mcp` read and check
//! the tables; this file imports none of its folder's logic.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize, Serializer};

use super::missing_tool::MissingTool;
use super::state_calls::StateCall;

/// Where the environment's tools run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum EnvironmentConfig {
    /// A built-in environment by name, e.g. `builtin:retail` (stored as
    /// `name` alone).
    Builtin(#[serde(serialize_with = "name_table")] String),
    NemoGym(NemoGymConfig),
    /// Tool specs without a backend, played by the `tools` role's model.
    Simulated(SimulatedConfig),
    Mcp(McpConfig),
}

fn name_table<S: Serializer>(name: &str, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Named<'n> {
        name: &'n str,
    }
    Named { name }.serialize(s)
}

/// A `simulated` environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulatedConfig {
    #[serde(default)]
    pub kind: String,
    /// What the policy's prompt calls it (default: the tools file's stem).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The tool specs (JSON, relative to the config, absolute once checked):
    /// OpenAI function tools, each optionally with an `output_schema`, and
    /// optional `user_tools`.
    #[serde(default)]
    pub tools: PathBuf,
}

/// A NeMo Gym resources server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NemoGymConfig {
    #[serde(default)]
    pub kind: String,
    /// What the policy's prompt and the exports call it (`None`:
    /// [`NemoGymConfig::default_name`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The resources server, e.g. `http://127.0.0.1:18402`; without a
    /// trailing `/` once checked.
    #[serde(default)]
    pub base_url: String,
    /// Seconds one request may take.
    #[serde(default = "nemo_gym_timeout_secs")]
    pub timeout_secs: f64,
    /// Retries of a transient failure.
    #[serde(default = "nemo_gym_max_retries")]
    pub max_retries: u32,
    /// Tool calls that read a session's state (for scenario synthesis);
    /// empty: the state cannot be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state_probes: Vec<StateCall>,
    /// The row `/seed_session` gets for the session whose probed state is
    /// shown to a scenario generator as records (`{}` when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records_row: Option<serde_json::Value>,
    /// What a tool the row offers and the server does not serve (HTTP 404)
    /// is; stored only when not the default (so the snapshots, and hashes,
    /// of jobs written before it stay as they were).
    #[serde(default, skip_serializing_if = "MissingTool::is_default")]
    pub on_missing_tool: MissingTool,
    /// The name shown without `name`: the resources server's folder when the
    /// rows are NeMo Gym's own (`resources_servers/mcqa/data/…` → `mcqa`),
    /// else `resources-server`. Never the URL: the policy's prompt and every
    /// exported row carry the label, and a host and port are the machine's.
    #[serde(skip)]
    pub default_name: String,
}

pub const NEMO_GYM_TIMEOUT_SECS: f64 = 60.0;
const NEMO_GYM_MAX_RETRIES: u32 = 4;

fn nemo_gym_timeout_secs() -> f64 {
    NEMO_GYM_TIMEOUT_SECS
}
fn nemo_gym_max_retries() -> u32 {
    NEMO_GYM_MAX_RETRIES
}

/// In an MCP `command` argument or an `env` value: the conversation's own
/// folder, made empty for each session and removed after it.
pub const SESSION_DIR: &str = "{session_dir}";

/// An MCP server: started for each conversation (`command`, over stdio) or
/// reached over streamable HTTP (`url`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpConfig {
    #[serde(default)]
    pub kind: String,
    /// What the policy's prompt calls the environment (default: the name the
    /// server gives itself in `initialize`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Seconds one request (a tool call, `tools/list`) may take.
    #[serde(default = "mcp_timeout_secs")]
    pub timeout_secs: f64,
    /// The server's program and arguments (stdio); once checked, the program
    /// is absolute or a name found on `PATH`, `{session_dir}` not yet replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// The server's streamable-HTTP endpoint, e.g. `http://127.0.0.1:3001/mcp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The folder the server runs in (default: the config's folder;
    /// `"{session_dir}"`: the conversation's own folder); absolute once checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Environment variables of the server process.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The tools offered to the policy (default: every tool the server lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// The tools a scenario's probes may call (default: the policy's tools and
    /// the `state_probes`' tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_tools: Option<Vec<String>>,
    /// Server processes (stdio) alive at once, one per conversation.
    #[serde(default = "mcp_max_processes")]
    pub max_processes: u64,
    /// Seconds the server may take to start and answer `initialize`.
    #[serde(default = "mcp_startup_timeout_secs")]
    pub startup_timeout_secs: f64,
    /// Tool calls that read a session's state (e.g. `read_graph`): what
    /// scenario synthesis compares and shows its generator; empty: the state
    /// cannot be read (no synthesis over this server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state_probes: Vec<StateCall>,
    /// Tool calls made on every fresh session before anything else, so
    /// each starts from the same state (e.g. `create_entities`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seed_calls: Vec<StateCall>,
}

fn mcp_timeout_secs() -> f64 {
    60.0
}
fn mcp_max_processes() -> u64 {
    8
}
fn mcp_startup_timeout_secs() -> f64 {
    30.0
}

/// How sparring reaches an MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpTransport<'c> {
    /// A fresh process per conversation, speaking over its stdin and stdout,
    /// started in `cwd` (`{session_dir}`: the conversation's own folder).
    Stdio {
        command: &'c [String],
        cwd: &'c Path,
        env: &'c BTreeMap<String, String>,
    },
    /// A fresh MCP session (its own `Mcp-Session-Id`) per conversation.
    Http { url: &'c str },
}

impl McpConfig {
    /// A server started by `command` in `cwd`, every other key its default.
    pub fn stdio(command: Vec<String>, cwd: PathBuf) -> McpConfig {
        McpConfig {
            command: Some(command),
            cwd: Some(cwd),
            ..McpConfig::default()
        }
    }

    /// How the server is reached (a checked config has `command` or `url`).
    pub fn transport(&self) -> McpTransport<'_> {
        match (&self.command, &self.url) {
            (Some(command), _) => McpTransport::Stdio {
                command,
                cwd: self.cwd.as_deref().unwrap_or(Path::new(".")),
                env: &self.env,
            },
            (None, url) => McpTransport::Http {
                url: url.as_deref().unwrap_or_default(),
            },
        }
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_secs)
    }

    pub fn startup_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.startup_timeout_secs)
    }

    pub fn max_processes(&self) -> usize {
        usize::try_from(self.max_processes).unwrap_or(usize::MAX)
    }

    /// As errors about the server show it to the person who wrote the
    /// config: `mcp:PROGRAM ARGS` or `mcp:URL` (never to the policy, which
    /// sees the environment's name).
    pub fn label(&self) -> String {
        match self.transport() {
            McpTransport::Stdio { command, .. } => format!("mcp:{}", command.join(" ")),
            McpTransport::Http { url } => format!("mcp:{url}"),
        }
    }

    /// The config field problems with the server are reported at.
    pub fn field(&self) -> &'static str {
        match self.transport() {
            McpTransport::Stdio { .. } => "environment.command",
            McpTransport::Http { .. } => "environment.url",
        }
    }
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            kind: "mcp".into(),
            name: None,
            timeout_secs: mcp_timeout_secs(),
            command: None,
            url: None,
            cwd: None,
            env: BTreeMap::new(),
            allowed_tools: None,
            probe_tools: None,
            max_processes: mcp_max_processes(),
            startup_timeout_secs: mcp_startup_timeout_secs(),
            state_probes: Vec::new(),
            seed_calls: Vec::new(),
        }
    }
}

impl NemoGymConfig {
    /// The server at `base_url`, every other key its default.
    pub fn at(base_url: &str) -> NemoGymConfig {
        NemoGymConfig {
            kind: "nemo_gym".into(),
            name: None,
            base_url: base_url.into(),
            timeout_secs: NEMO_GYM_TIMEOUT_SECS,
            max_retries: NEMO_GYM_MAX_RETRIES,
            state_probes: Vec::new(),
            records_row: None,
            on_missing_tool: MissingTool::default(),
            default_name: super::environment_name::name_of_rows(None),
        }
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_secs)
    }

    /// `nemo_gym:NAME`, as the policy's prompt and the exports show it.
    pub fn label(&self) -> String {
        format!(
            "nemo_gym:{}",
            self.name.as_deref().unwrap_or(&self.default_name)
        )
    }
}

impl SimulatedConfig {
    /// `simulated:NAME`, as the policy's prompt and the exports show it.
    pub fn label(&self) -> String {
        let name = match &self.name {
            Some(name) => name.clone(),
            None => super::environment_name::name_of_file(&self.tools),
        };
        format!("simulated:{name}")
    }
}

impl EnvironmentConfig {
    /// As shown to people and stored with conversations.
    pub fn label(&self) -> String {
        match self {
            EnvironmentConfig::Builtin(name) => name.clone(),
            EnvironmentConfig::NemoGym(c) => c.label(),
            EnvironmentConfig::Simulated(c) => c.label(),
            EnvironmentConfig::Mcp(c) => c.label(),
        }
    }

    /// The config field problems with this environment are reported at.
    pub fn field(&self) -> &'static str {
        match self {
            EnvironmentConfig::Builtin(_) => "environment.name",
            EnvironmentConfig::NemoGym(_) => "environment.base_url",
            EnvironmentConfig::Simulated(_) => "environment.tools",
            EnvironmentConfig::Mcp(c) => c.field(),
        }
    }
}
