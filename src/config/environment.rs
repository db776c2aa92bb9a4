//! `[environment]`: a table tagged by `kind`: `builtin` (the default when
//! `kind` is left out): `name = "builtin:retail"`; `nemo_gym`: a NeMo Gym
//! resources server at `base_url`. The coming kinds (`mcp`, `simulated`) are
//! further variants of [`EnvironmentConfig`], each with its own keys, read in
//! [`read_environment`]. Also here: which dataset formats and user modes fit
//! which kind ([`check_dataset_format`]).

use std::path::Path;

use serde::Deserialize;
use toml::de::DeValue;

use super::environment_name::name_problem;
use super::environment_table::NEMO_GYM_TIMEOUT_SECS;
pub use super::environment_table::{EnvironmentConfig, McpConfig, NemoGymConfig, SimulatedConfig};
use super::file::{DatasetFile, DatasetFormat, UserMode};
use super::mcp::read_mcp;
use super::state_calls;
use super::trust::Trust;
use crate::diagnostics::document::{child, fields_of, Node, Source};
use crate::diagnostics::problem::Problem;

/// Names a job config may give a built-in environment (`env::builtin` opens them).
pub const BUILTIN_ENVIRONMENTS: &[&str] = &[
    "builtin:retail",
    "builtin:chat",
    "builtin:qa",
    "builtin:phone",
];

/// The environment kinds, as `kind` names them.
pub const KINDS: &[&str] = &["builtin", "nemo_gym", "simulated", "mcp"];

const MAX_TIMEOUT_SECS: f64 = 3600.0;
const MOST_RETRIES: u32 = 10;

#[derive(Debug, Deserialize)]
struct BuiltinKeys {
    #[allow(dead_code)]
    kind: Option<String>,
    /// `builtin:retail`, or `retail` with `kind = "builtin"`.
    name: String,
}

/// Read `[environment]` (`node`), its kind from `kind` (default `builtin`);
/// `base` is the config's folder.
pub fn read_environment<'t>(
    source: &Source<'t>,
    node: Node<'t>,
    base: &Path,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Option<EnvironmentConfig> {
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
            Some(EnvironmentConfig::Builtin(name))
        }
        "nemo_gym" => {
            let keys: NemoGymConfig = source.typed(field, node, problems)?;
            nemo_gym(&source.file, keys, trust, problems).map(EnvironmentConfig::NemoGym)
        }
        "simulated" => {
            let keys: SimulatedConfig = source.typed(field, node, problems)?;
            if keys.tools.as_os_str().is_empty() {
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
            Some(EnvironmentConfig::Simulated(keys))
        }
        "mcp" => {
            let keys: McpConfig = source.typed(field, node, problems)?;
            read_mcp(&source.file, keys, base, trust, problems).map(EnvironmentConfig::Mcp)
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
                    fields_of::<NemoGymConfig>().join(", "),
                    fields_of::<SimulatedConfig>().join(", "),
                    fields_of::<McpConfig>().join(", ")
                ),
            ));
            None
        }
    }
}

/// A NeMo Gym server's keys, checked; its `base_url` without a trailing `/`.
fn nemo_gym(
    path: &Path,
    mut keys: NemoGymConfig,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Option<NemoGymConfig> {
    let before = problems.len();
    let url = &keys.base_url;
    if url.is_empty() {
        problems.push(Problem::at_field(
            path,
            "environment.base_url",
            "is missing; kind = \"nemo_gym\" needs the resources server's address, \
             e.g. base_url = \"http://127.0.0.1:18402\" (scripts/nemo-gym start prints it)",
        ));
        return None;
    }
    if url.starts_with("http://") || url.starts_with("https://") {
        if let Trust::Submitted(boundary) = trust {
            problems.extend(boundary.check_url(path, "environment.base_url", url));
        }
        keys.base_url = url.trim_end_matches('/').to_string();
    } else {
        problems.push(Problem::at_field(
            path,
            "environment.base_url",
            format!(
                "'{url}' is not an http(s) URL; give the resources server's address, \
                 e.g. http://127.0.0.1:18402 (scripts/nemo-gym start prints it)"
            ),
        ));
    }
    let timeout_secs = keys.timeout_secs;
    if !(timeout_secs.is_finite() && timeout_secs > 0.0 && timeout_secs <= MAX_TIMEOUT_SECS) {
        problems.push(Problem::at_field(
            path,
            "environment.timeout_secs",
            format!(
                "{timeout_secs} is out of range; use seconds in (0, {MAX_TIMEOUT_SECS}], \
                 e.g. {NEMO_GYM_TIMEOUT_SECS}"
            ),
        ));
    }
    if keys.max_retries > MOST_RETRIES {
        problems.push(Problem::at_field(
            path,
            "environment.max_retries",
            format!(
                "{} is out of range; use 0 to {MOST_RETRIES}",
                keys.max_retries
            ),
        ));
    }
    problems.extend(state_calls::problems(
        path,
        "environment.state_probes",
        &keys.state_probes,
    ));
    match &keys.records_row {
        Some(row) if !row.is_object() => problems.push(Problem::at_field(
            path,
            "environment.records_row",
            "is not a table; give the fields /seed_session needs, e.g. \
             records_row = { initial_count = 3 }",
        )),
        Some(_) if keys.state_probes.is_empty() => problems.push(Problem::at_field(
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
    keys.default_name = super::environment_name::name_of_rows(None);
    (problems.len() == before).then_some(keys)
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
