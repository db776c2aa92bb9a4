//! `[environment]`: a table tagged by `kind`: `builtin` (the default when
//! `kind` is left out): `name = "builtin:retail"`; `nemo_gym`: a NeMo Gym
//! resources server at `base_url`. The coming kinds (`mcp`, `simulated`) are
//! further variants of [`EnvironmentFile`], each with its own keys, read in
//! [`read_environment`]. Also here: which dataset formats and user modes fit
//! which kind ([`check_dataset_format`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::de::DeValue;

use super::document::{child, fields_of, Node, Source};
use super::environment_name::name_problem;
pub use super::environment_snapshot::EnvironmentSnapshot;
use super::file::{DatasetFile, DatasetFormat, UserMode};
use super::job::{EnvironmentConfig, MissingTool, NemoGymConfig, SimulatedConfig};
use super::mcp::{read_mcp, McpConfig, McpKeys};
use super::problem::Problem;
use super::state_calls::{self, StateCall};
use super::trust::Trust;

/// Names a job config may give a built-in environment (`env::builtin` opens them).
pub const BUILTIN_ENVIRONMENTS: &[&str] = &[
    "builtin:retail",
    "builtin:chat",
    "builtin:qa",
    "builtin:phone",
];

/// The environment kinds, as `kind` names them.
pub const KINDS: &[&str] = &["builtin", "nemo_gym", "simulated", "mcp"];

const DEFAULT_TIMEOUT_SECS: f64 = 60.0;
const MAX_TIMEOUT_SECS: f64 = 3600.0;
const DEFAULT_MAX_RETRIES: u32 = 4;
const MOST_RETRIES: u32 = 10;

/// The environment as written.
#[derive(Debug, Clone, PartialEq)]
pub enum EnvironmentFile {
    /// A domain built into sparring, by its full name (`builtin:retail`).
    Builtin { name: String },
    /// A NeMo Gym resources server.
    NemoGym(NemoGymConfig),
    /// Tool specs played by the `tools` role's model; `tools` as written,
    /// made absolute when the config's paths are resolved; `name` as shown
    /// to the policy (`None`: the file's stem).
    Simulated {
        tools: PathBuf,
        name: Option<String>,
    },
    /// An MCP server.
    Mcp(McpConfig),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SimulatedKeys {
    #[serde(default)]
    #[allow(dead_code)]
    kind: Option<String>,
    /// The tool specs (JSON, relative to the config): OpenAI function tools,
    /// each optionally with an `output_schema`, and optional `user_tools`.
    tools: Option<PathBuf>,
    /// What the policy's prompt calls it (default: the tools file's stem).
    #[serde(default)]
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
struct NemoGymKeys {
    #[serde(default)]
    #[allow(dead_code)]
    kind: Option<String>,
    /// The resources server, e.g. `http://127.0.0.1:18402`.
    #[serde(default)]
    base_url: Option<String>,
    /// What the policy's prompt and the exports call it (default: the
    /// folder under `resources_servers/` the rows come from).
    #[serde(default)]
    name: Option<String>,
    /// Seconds one request may take (default 60, range (0, 3600]).
    #[serde(default)]
    timeout_secs: Option<f64>,
    /// Retries of a transient failure (default 4, range 0 to 10).
    #[serde(default)]
    max_retries: Option<u32>,
    /// Tool calls that read a session's state (scenario synthesis).
    #[serde(default)]
    state_probes: Option<Vec<StateCall>>,
    /// The row `/seed_session` gets for the session whose probed state a
    /// scenario generator is shown (default `{}`).
    #[serde(default)]
    records_row: Option<serde_json::Value>,
    /// What a call to a tool the server does not serve becomes (default
    /// `output`, as NeMo Gym's agent does; or `env_error`).
    #[serde(default)]
    on_missing_tool: Option<MissingTool>,
}

#[derive(Debug, Deserialize)]
struct BuiltinKeys {
    #[serde(default)]
    #[allow(dead_code)]
    kind: Option<String>,
    /// `builtin:retail`, or `retail` with `kind = "builtin"`.
    name: String,
}

impl EnvironmentFile {
    /// The environment a job runs against.
    pub fn config(&self) -> EnvironmentConfig {
        match self {
            EnvironmentFile::Builtin { name } => EnvironmentConfig::Builtin(name.clone()),
            EnvironmentFile::NemoGym(c) => EnvironmentConfig::NemoGym(c.clone()),
            EnvironmentFile::Simulated { tools, name } => {
                EnvironmentConfig::Simulated(SimulatedConfig {
                    tools: tools.clone(),
                    name: name.clone(),
                })
            }
            EnvironmentFile::Mcp(c) => EnvironmentConfig::Mcp(c.clone()),
        }
    }

    pub fn snapshot(&self) -> EnvironmentSnapshot {
        match self {
            EnvironmentFile::Builtin { name } => EnvironmentSnapshot {
                name: Some(name.clone()),
                ..EnvironmentSnapshot::default()
            },
            EnvironmentFile::NemoGym(c) => EnvironmentSnapshot {
                kind: Some("nemo_gym".into()),
                // Only when written, so the snapshots (and hashes) of jobs
                // written before it stay as they were.
                name: c.name.clone(),
                base_url: Some(c.base_url.clone()),
                timeout_secs: Some(c.timeout.as_secs_f64()),
                max_retries: Some(c.max_retries),
                state_probes: (!c.state_probes.is_empty()).then(|| c.state_probes.clone()),
                records_row: c.records_row.clone(),
                on_missing_tool: (c.on_missing_tool != MissingTool::default())
                    .then_some(c.on_missing_tool),
                ..EnvironmentSnapshot::default()
            },
            EnvironmentFile::Simulated { tools, name } => EnvironmentSnapshot {
                kind: Some("simulated".into()),
                name: name.clone(),
                tools: Some(tools.clone()),
                ..EnvironmentSnapshot::default()
            },
            EnvironmentFile::Mcp(c) => EnvironmentSnapshot {
                kind: Some("mcp".into()),
                name: c.name.clone(),
                timeout_secs: Some(c.timeout.as_secs_f64()),
                mcp: Some(c.snapshot()),
                ..EnvironmentSnapshot::default()
            },
        }
    }
}

/// Read `[environment]` (`node`), its kind from `kind` (default `builtin`);
/// `base` is the config's folder.
pub fn read_environment<'t>(
    source: &Source<'t>,
    node: Node<'t>,
    base: &Path,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Option<EnvironmentFile> {
    let field = "environment";
    let DeValue::Table(table) = node.get_ref() else {
        problems.push(source.at(
            node.span(),
            field,
            "is not a table; write [environment] with name = \"builtin:retail\"",
        ));
        return None;
    };
    let kind = match table.get("kind").map(|k| k.get_ref()) {
        None => "builtin".to_string(),
        Some(DeValue::String(kind)) => kind.to_string(),
        Some(_) => {
            problems.push(Problem::at_field(
                &source.file,
                &child(field, "kind"),
                format!("is not a string; use one of {}", KINDS.join(", ")),
            ));
            return None;
        }
    };
    match kind.as_str() {
        "builtin" => {
            let keys: BuiltinKeys = source.typed(field, node, problems)?;
            let name = if keys.name.contains(':') {
                keys.name
            } else {
                format!("builtin:{}", keys.name)
            };
            if !BUILTIN_ENVIRONMENTS.contains(&name.as_str()) {
                problems.push(Problem::at_field(
                    &source.file,
                    &child(field, "name"),
                    format!(
                        "environment '{name}' is not known; built-in environments are: {}",
                        BUILTIN_ENVIRONMENTS.join(", ")
                    ),
                ));
                return None;
            }
            Some(EnvironmentFile::Builtin { name })
        }
        "nemo_gym" => {
            let keys: NemoGymKeys = source.typed(field, node, problems)?;
            nemo_gym(&source.file, keys, trust, problems).map(EnvironmentFile::NemoGym)
        }
        "simulated" => {
            let keys: SimulatedKeys = source.typed(field, node, problems)?;
            let Some(tools) = keys.tools else {
                problems.push(Problem::at_field(
                    &source.file,
                    &child(field, "tools"),
                    "is missing; kind = \"simulated\" needs the tool specs, e.g. \
                     tools = \"tools.json\" (a list of OpenAI function tools, each may add an \
                     output_schema), and [roles] tools = \"ENDPOINT\" to play them",
                ));
                return None;
            };
            if let Some(name) = &keys.name {
                problems.extend(name_problem(&source.file, name));
            }
            Some(EnvironmentFile::Simulated {
                tools,
                name: keys.name,
            })
        }
        "mcp" => {
            let keys: McpKeys = source.typed(field, node, problems)?;
            read_mcp(&source.file, keys, base, trust, problems).map(EnvironmentFile::Mcp)
        }
        other => {
            problems.push(Problem::at_field(
                &source.file,
                &child(field, "kind"),
                format!(
                    "'{other}' is not an environment kind; use one of {} (kinds take these \
                     keys: builtin: {}; nemo_gym: {}; simulated: {}; mcp: {})",
                    KINDS.join(", "),
                    fields_of::<BuiltinKeys>().join(", "),
                    fields_of::<NemoGymKeys>().join(", "),
                    fields_of::<SimulatedKeys>().join(", "),
                    fields_of::<McpKeys>().join(", ")
                ),
            ));
            None
        }
    }
}

/// A NeMo Gym server's keys, checked.
fn nemo_gym(
    path: &Path,
    keys: NemoGymKeys,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Option<NemoGymConfig> {
    let before = problems.len();
    let Some(url) = keys.base_url else {
        problems.push(Problem::at_field(
            path,
            "environment.base_url",
            "is missing; kind = \"nemo_gym\" needs the resources server's address, \
             e.g. base_url = \"http://127.0.0.1:18402\" (scripts/nemo-gym start prints it)",
        ));
        return None;
    };
    let base_url = if url.starts_with("http://") || url.starts_with("https://") {
        if let Trust::Submitted(boundary) = trust {
            problems.extend(boundary.check_url(path, "environment.base_url", &url));
        }
        url.trim_end_matches('/').to_string()
    } else {
        problems.push(Problem::at_field(
            path,
            "environment.base_url",
            format!(
                "'{url}' is not an http(s) URL; give the resources server's address, \
                 e.g. http://127.0.0.1:18402 (scripts/nemo-gym start prints it)"
            ),
        ));
        String::new()
    };
    let timeout_secs = keys.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
    if !(timeout_secs.is_finite() && timeout_secs > 0.0 && timeout_secs <= MAX_TIMEOUT_SECS) {
        problems.push(Problem::at_field(
            path,
            "environment.timeout_secs",
            format!(
                "{timeout_secs} is out of range; use seconds in (0, {MAX_TIMEOUT_SECS}], \
                 e.g. {DEFAULT_TIMEOUT_SECS}"
            ),
        ));
    }
    let max_retries = keys.max_retries.unwrap_or(DEFAULT_MAX_RETRIES);
    if max_retries > MOST_RETRIES {
        problems.push(Problem::at_field(
            path,
            "environment.max_retries",
            format!("{max_retries} is out of range; use 0 to {MOST_RETRIES}"),
        ));
    }
    let state_probes = keys.state_probes.unwrap_or_default();
    problems.extend(state_calls::problems(
        path,
        "environment.state_probes",
        &state_probes,
    ));
    match &keys.records_row {
        Some(row) if !row.is_object() => problems.push(Problem::at_field(
            path,
            "environment.records_row",
            "is not a table; give the fields /seed_session needs, e.g. \
             records_row = { initial_count = 3 }",
        )),
        Some(_) if state_probes.is_empty() => problems.push(Problem::at_field(
            path,
            "environment.records_row",
            "seeds the session whose state the state_probes read, and there are none; \
             add state_probes or remove it",
        )),
        _ => {}
    }
    if let Some(name) = &keys.name {
        problems.extend(name_problem(path, name));
    }
    (problems.len() == before).then(|| NemoGymConfig {
        base_url,
        name: keys.name,
        default_name: super::environment_name::name_of_rows(None),
        timeout: Duration::from_secs_f64(timeout_secs),
        max_retries,
        state_probes,
        records_row: keys.records_row,
        on_missing_tool: keys.on_missing_tool.unwrap_or_default(),
    })
}

/// Which fields the dataset's format needs, and that it fits the environment
/// and the user simulator's mode. Paths are checked by the caller.
pub fn check_dataset_format(
    path: &Path,
    d: &DatasetFile,
    nemo_gym: Option<bool>,
    mode: UserMode,
    problems: &mut Vec<Problem>,
) -> DatasetFormat {
    let format = d.format.unwrap_or(DatasetFormat::Scenarios);
    let field = |f: &str| format!("dataset.{f}");
    match format {
        DatasetFormat::Scenarios => {
            if d.scenarios.is_none() {
                problems.push(Problem::at_field(
                    path,
                    &field("scenarios"),
                    "is missing; name a scenarios JSONL file, e.g. scenarios = \"../data/retail/scenarios.jsonl\" \
                     (or set format = \"nemo_gym\" and rows for NeMo Gym rows)",
                ));
            }
            for (name, set) in [
                ("rows", d.rows.is_some()),
                ("replay", d.replay.is_some()),
                ("user_goal_field", d.user_goal_field.is_some()),
            ] {
                if set {
                    problems.push(Problem::at_field(
                        path,
                        &field(name),
                        "is only used with format = \"nemo_gym\"; set that format or remove it",
                    ));
                }
            }
        }
        DatasetFormat::NemoGym => {
            if d.rows.is_none() {
                problems.push(Problem::at_field(
                    path,
                    &field("rows"),
                    "is missing; format = \"nemo_gym\" reads NeMo Gym rows, e.g. \
                     rows = \"../.nemo-gym/resources_servers/mcqa/data/example.jsonl\"",
                ));
            }
            if d.scenarios.is_some() {
                problems.push(Problem::at_field(
                    path,
                    &field("scenarios"),
                    "is not used with format = \"nemo_gym\" (the rows are the scenarios); remove it",
                ));
            }
            // `None`: the environment has problems of its own, already reported.
            if nemo_gym == Some(false) {
                problems.push(Problem::at_field(
                    path,
                    &field("format"),
                    "NeMo Gym rows are verified by their resources server; set [environment] \
                     kind = \"nemo_gym\" with its base_url",
                ));
            }
        }
    }
    // mode = "none" with sparring scenarios: each needs `user.opening`,
    // checked once the scenarios are read (`persona::scenario::opening_problems`).
    if d.personas.is_none() && mode == UserMode::Llm {
        problems.push(Problem::at_field(
            path,
            &field("personas"),
            "is missing; a simulated user needs personas (a folder of *.toml or a .jsonl), \
             e.g. personas = \"../personas\"; only [user_simulator] mode = \"none\" runs without",
        ));
    }
    format
}
