//! A `POST /v1/rollouts` request read and checked into the generation job it
//! asks for: the job config (a file inside the data root, or inline TOML)
//! with the request's policy endpoint as the `policy` role, its scenarios and
//! `k` samples of each. The config is then loaded exactly as a config
//! submitted to `POST /v1/jobs` is (paths inside the data root, the egress
//! allowlist, operator endpoints), so a request reaches nothing a submitted
//! job could not. A key given with the endpoint is held in memory only: the
//! stored config never has it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::config::{self, Job, Problem, Trust};
use crate::jobs::{prepare, Prepared};

use super::super::{ApiError, AppState};

pub use super::inline::BODY;
/// The name the request's policy endpoint takes in the job's config.
pub const POLICY_ENDPOINT: &str = "rollouts_policy";
/// Samples per scenario a request may ask for.
pub const K: config::ranges::Whole = config::ranges::whole(1, 1_000);
/// Rollouts (scenarios × k) of one request at most.
pub const MAX_ROLLOUTS: u64 = 100_000;

const FIELDS: &[&str] = &[
    "config",
    "config_toml",
    "scenarios",
    "k",
    "policy",
    "name",
    "concurrency",
];
const POLICY_FIELDS: &[&str] = &[
    "base_url",
    "model",
    "api",
    "api_key",
    "operator",
    "temperature",
    "top_p",
    "max_tokens",
    "timeout_secs",
    "max_in_flight",
    "max_retries",
];
const SCENARIO_FIELDS: &[&str] = &["file", "ids"];

/// The request, each field read.
pub struct RolloutsRequest {
    config: ConfigSource,
    scenario_file: Option<String>,
    scenario_ids: Option<Vec<String>>,
    /// Scenario objects given in the request, as JSONL.
    inline: Option<String>,
    pub k: u32,
    /// The `[endpoints.rollouts_policy]` table.
    policy: toml::Table,
    api_key: Option<String>,
    name: Option<String>,
    concurrency: Option<i64>,
}

enum ConfigSource {
    File(String),
    Inline(String),
}

/// The job a request asks for, loaded and checked, over its scenarios only.
pub struct Asked {
    pub job: Job,
    pub prepared: Prepared,
    pub k: u32,
    /// The scenarios it gave inline, kept in the data root, with its turn
    /// at them: taken away again when dropped before [`Kept::accepted`], so
    /// that a request refused (or gone) before its job is stored leaves
    /// nothing.
    pub kept: Option<Kept>,
}

/// Inline scenarios written for a request whose job is not yet stored.
pub struct Kept {
    keeping: Option<super::inline::Keeping>,
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

impl Kept {
    /// The job is stored: its scenarios file stays.
    pub fn accepted(mut self) {
        self.keeping = None;
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        if let Some(keeping) = self.keeping.take() {
            keeping.discard();
        }
    }
}

fn invalid(field: &str, message: impl Into<String>) -> Problem {
    Problem::at_field(BODY, field, message)
}

/// `value` as a `T`, or a problem at `field`.
fn typed<T: DeserializeOwned>(
    field: &str,
    value: Value,
    expected: &str,
    problems: &mut Vec<Problem>,
) -> Option<T> {
    match serde_json::from_value(value) {
        Ok(v) => Some(v),
        Err(_) => {
            problems.push(invalid(field, format!("is not {expected}")));
            None
        }
    }
}

/// Keys of `object` that are not in `known`, each a problem under `prefix`.
fn unknown_keys(prefix: &str, object: &Map<String, Value>, known: &[&str]) -> Vec<Problem> {
    object
        .keys()
        .filter(|key| !known.contains(&key.as_str()))
        .map(|key| {
            let field = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            invalid(
                &field,
                format!(
                    "is not a field of this request; known: {}",
                    known.join(", ")
                ),
            )
        })
        .collect()
}

impl RolloutsRequest {
    /// Read the body: 400 when it is not a JSON object, 422 naming each
    /// field that is missing, unknown, of the wrong type or out of range.
    pub fn read(body: &[u8]) -> Result<RolloutsRequest, ApiError> {
        let value: Value = serde_json::from_slice(body).map_err(|e| {
            ApiError::BadRequest(format!(
                "{BODY}: is not JSON (line {}, column {}: {}); send a JSON object",
                e.line(),
                e.column(),
                crate::diagnostics::problem::json_message(&e)
            ))
        })?;
        let Value::Object(mut object) = value else {
            return Err(ApiError::BadRequest(format!(
                "{BODY}: is not a JSON object; send {{\"config\", \"k\", \"policy\", ...}}"
            )));
        };
        let mut problems = unknown_keys("", &object, FIELDS);
        let mut text = |field: &str, problems: &mut Vec<Problem>| {
            object
                .remove(field)
                .and_then(|v| typed::<String>(field, v, "a string", problems))
        };
        let config_file = text("config", &mut problems);
        let config_toml = text("config_toml", &mut problems);
        let name = text("name", &mut problems);
        let config = match (config_file, config_toml) {
            (Some(file), None) => Some(ConfigSource::File(file)),
            (None, Some(toml)) => Some(ConfigSource::Inline(toml)),
            (Some(_), Some(_)) => {
                problems.push(invalid(
                    "config_toml",
                    "give either `config` (a job config file inside the data root) or \
                     `config_toml` (the config itself), not both",
                ));
                None
            }
            (None, None) => {
                problems.push(invalid(
                    "config",
                    "is missing; name a job config file inside the data root (e.g. \
                     \"quickstart.toml\"), or give the config as `config_toml`",
                ));
                None
            }
        };
        if name.as_deref().is_some_and(|n| n.trim().is_empty()) {
            problems.push(invalid(
                "name",
                "is blank; leave it out for the config's name",
            ));
        }
        let k = match object.remove("k") {
            None => {
                problems.push(invalid(
                    "k",
                    format!(
                        "is missing; give the samples per scenario, from {} to {}",
                        K.min, K.max
                    ),
                ));
                None
            }
            Some(v) => typed::<i64>("k", v, "a whole number", &mut problems).and_then(|k| {
                match u32::try_from(k) {
                    Ok(k) if K.contains(u64::from(k)) => Some(k),
                    _ => {
                        problems.push(invalid(
                            "k",
                            format!(
                                "is {k}; give the samples per scenario, from {} to {}",
                                K.min, K.max
                            ),
                        ));
                        None
                    }
                }
            }),
        };
        let concurrency = object
            .remove("concurrency")
            .and_then(|v| typed::<i64>("concurrency", v, "a whole number", &mut problems));
        let mut inline = None;
        let (scenario_file, scenario_ids) = match object.remove("scenarios") {
            None => (None, None),
            Some(Value::Array(items)) => {
                match super::inline::jsonl(items) {
                    Ok(text) => inline = Some(text),
                    Err(p) => problems.extend(p),
                }
                (None, None)
            }
            Some(Value::Object(mut scenarios)) => {
                problems.extend(unknown_keys("scenarios", &scenarios, SCENARIO_FIELDS));
                let file = scenarios
                    .remove("file")
                    .and_then(|v| typed::<String>("scenarios.file", v, "a string", &mut problems));
                let ids = scenarios.remove("ids").and_then(|v| {
                    typed::<Vec<String>>(
                        "scenarios.ids",
                        v,
                        "a list of scenario ids",
                        &mut problems,
                    )
                });
                if ids.as_ref().is_some_and(Vec::is_empty) {
                    problems.push(invalid(
                        "scenarios.ids",
                        "is empty; name at least one scenario, or leave `ids` out for all",
                    ));
                }
                (file, ids)
            }
            Some(_) => {
                problems.push(invalid(
                    "scenarios",
                    "is neither a list of scenario objects nor {\"file\": \"PATH\", \"ids\": \
                     [\"ID\", ...]}",
                ));
                (None, None)
            }
        };
        let (policy, api_key) = match object.remove("policy") {
            None => {
                problems.push(invalid(
                    "policy",
                    "is missing; give the policy's endpoint: {\"base_url\": \
                     \"http://HOST:PORT/v1\", \"model\": \"NAME\"}, or {\"operator\": \"NAME\"}",
                ));
                (None, None)
            }
            Some(Value::Object(policy)) => {
                let (table, key) = policy_table(policy, &mut problems);
                (Some(table), key)
            }
            Some(_) => {
                problems.push(invalid("policy", "is not an object"));
                (None, None)
            }
        };
        match (config, k, policy, problems.is_empty()) {
            (Some(config), Some(k), Some(policy), true) => Ok(RolloutsRequest {
                config,
                scenario_file,
                scenario_ids,
                inline,
                k,
                policy,
                api_key,
                name,
                concurrency,
            }),
            _ => Err(ApiError::Invalid(problems)),
        }
    }

    /// The job this request asks for, loaded as a submitted config and
    /// prepared (its scenarios, environment and templates checked), over
    /// the scenarios it names.
    pub async fn job(self, state: &AppState) -> Result<Asked, ApiError> {
        let boundary = &state.boundary;
        let root = boundary.data_root().to_path_buf();
        let (label, text, base) = match &self.config {
            ConfigSource::Inline(text) => ("config_toml".to_string(), text.clone(), root.clone()),
            ConfigSource::File(file) => {
                let path = boundary
                    .contain(Path::new(BODY), "config", &root, Path::new(file))
                    .map_err(|p| ApiError::Invalid(vec![p]))?;
                let text = crate::regular_file::read_to_string(&path).map_err(|_| {
                    ApiError::Invalid(vec![invalid(
                        "config",
                        format!("'{file}' cannot be read as a text file inside the data root"),
                    )])
                })?;
                let base = path.parent().map_or(root.clone(), Path::to_path_buf);
                (file.clone(), text, base)
            }
        };
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            ApiError::Invalid(vec![Problem::from_toml_error(&label, &text, &e)])
        })?;
        // Scenarios given inline are kept in a file of the data root only
        // while the request is checked and after it is taken: checked in
        // turn with any other request keeping the same ones, written, and
        // taken away again when the request is refused.
        let Some(jsonl) = self.inline.clone() else {
            return self.checked(state, &label, table, &root, &base, None).await;
        };
        let mut keeping = super::inline::plan(&root, jsonl)?;
        let turn = super::inline::turn(&keeping.path).lock().await;
        let checked = match keeping.write() {
            Ok(()) => {
                let path = keeping.path.clone();
                self.checked(state, &label, table, &root, &base, Some(path))
                    .await
            }
            Err(e) => Err(e),
        };
        match checked {
            Ok(asked) => Ok(Asked {
                kept: Some(Kept {
                    keeping: Some(keeping),
                    _turn: turn,
                }),
                ..asked
            }),
            Err(e) => {
                keeping.discard();
                Err(e)
            }
        }
    }

    /// The job of the request, its config being `table` (named `label`,
    /// its paths relative to `base`), over the scenarios `kept` inline or
    /// those the request or the config names.
    async fn checked(
        &self,
        state: &AppState,
        label: &str,
        mut table: toml::Table,
        root: &Path,
        base: &Path,
        kept: Option<PathBuf>,
    ) -> Result<Asked, ApiError> {
        let boundary = &state.boundary;
        let scenario_file = match (&self.scenario_file, &kept) {
            (_, Some(kept)) => Some(kept.clone()),
            (Some(file), None) => Some(
                boundary
                    .contain(Path::new(BODY), "scenarios.file", root, Path::new(file))
                    .map_err(|p| ApiError::Invalid(vec![p]))?,
            ),
            (None, None) => None,
        };
        let said = |problems: Vec<Problem>| {
            ApiError::Invalid(
                problems
                    .into_iter()
                    .map(said_as_asked)
                    .map(|p| match &kept {
                        Some(kept) => super::inline::said_as_asked(p, kept),
                        None => p,
                    })
                    .collect(),
            )
        };
        self.rewrite(&mut table, scenario_file.as_deref());
        let json = serde_json::to_string(&table)
            .map_err(|e| ApiError::Internal(format!("a config as JSON: {e}")))?;
        let mut job = config::load::from_json(label, &json, base, Trust::Submitted(boundary))
            .map_err(said)?;
        job.database = state.database.clone();
        if let Some(key) = &self.api_key {
            if let Some(endpoint) = job.endpoints.get_mut(POLICY_ENDPOINT) {
                endpoint.api_key = Some(key.clone());
            }
        }
        let mut prepared = prepare(&job).await.map_err(said)?;
        if let Some(ids) = &self.scenario_ids {
            select(&mut prepared, ids)?;
        }
        let rollouts = prepared.scenarios.len() as u64 * u64::from(self.k);
        if rollouts > MAX_ROLLOUTS {
            return Err(ApiError::Invalid(vec![invalid(
                "k",
                format!(
                    "{} scenarios × k = {} make {rollouts} rollouts; a request makes at most \
                     {MAX_ROLLOUTS}: name fewer scenarios (scenarios.ids) or lower k",
                    prepared.scenarios.len(),
                    self.k
                ),
            )]));
        }
        Ok(Asked {
            job,
            prepared,
            k: self.k,
            kept: None,
        })
    }

    /// The config with the request in it: the policy role on the request's
    /// endpoint, k samples of each scenario with one persona each (a
    /// scenario's k rollouts are its group), the scenarios file, the name
    /// and concurrency when given.
    fn rewrite(&self, table: &mut toml::Table, scenario_file: Option<&Path>) {
        use toml::Value as T;
        if let Some(endpoints) = sub(table, "endpoints") {
            endpoints.insert(POLICY_ENDPOINT.into(), T::Table(self.policy.clone()));
        }
        if let Some(roles) = sub(table, "roles") {
            roles.insert("policy".into(), T::String(POLICY_ENDPOINT.into()));
        }
        if let Some(dataset) = sub(table, "dataset") {
            dataset.insert("samples_per_scenario".into(), T::Integer(i64::from(self.k)));
            dataset.insert("personas_per_scenario".into(), T::Integer(1));
            if let Some(file) = scenario_file {
                let key = if dataset.contains_key("rows") {
                    "rows"
                } else {
                    "scenarios"
                };
                dataset.insert(key.into(), T::String(file.display().to_string()));
            }
        }
        if let Some(name) = &self.name {
            table.insert("name".into(), T::String(name.clone()));
        }
        if let Some(concurrency) = self.concurrency {
            table.insert("concurrency".into(), T::Integer(concurrency));
        }
    }
}

/// Table `name` of `table`, made when missing; `None` when it is no table
/// (the config's loader then says so).
fn sub<'t>(table: &'t mut toml::Table, name: &str) -> Option<&'t mut toml::Table> {
    table
        .entry(name)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
}

/// The `[endpoints.rollouts_policy]` table of the request's `policy`, and its key.
fn policy_table(
    mut policy: Map<String, Value>,
    problems: &mut Vec<Problem>,
) -> (toml::Table, Option<String>) {
    problems.extend(unknown_keys("policy", &policy, POLICY_FIELDS));
    let api_key = policy
        .remove("api_key")
        .and_then(|v| typed::<String>("policy.api_key", v, "a string", problems));
    if api_key.as_deref().is_some_and(|k| k.trim().is_empty()) {
        problems.push(invalid(
            "policy.api_key",
            "is blank; leave it out for no key",
        ));
    }
    if api_key.is_some() && policy.contains_key("operator") {
        problems.push(invalid(
            "policy.api_key",
            "an operator endpoint uses the operator's own key; remove api_key",
        ));
    }
    // Chat completions are what every endpoint speaks unless told otherwise.
    if policy.get("api").and_then(Value::as_str) == Some("chat_completions") {
        policy.remove("api");
    }
    let mut table = toml::Table::new();
    for (key, value) in policy {
        let field = format!("policy.{key}");
        let converted = match value {
            Value::String(s) => Some(toml::Value::String(s)),
            Value::Number(n) if n.is_i64() => n.as_i64().map(toml::Value::Integer),
            Value::Number(n) => n.as_f64().map(toml::Value::Float),
            Value::Bool(b) => Some(toml::Value::Boolean(b)),
            _ => None,
        };
        match converted {
            Some(v) => {
                table.insert(key, v);
            }
            None => problems.push(invalid(&field, "is not a string, number or boolean")),
        }
    }
    (table, api_key)
}

/// Keep only the scenarios `ids` names; an id the dataset lacks is a 422.
fn select(prepared: &mut Prepared, ids: &[String]) -> Result<(), ApiError> {
    let known: HashSet<&str> = prepared.scenarios.iter().map(|s| s.id.as_str()).collect();
    let mut problems = Vec::new();
    let mut seen = HashSet::new();
    for (i, id) in ids.iter().enumerate() {
        if !known.contains(id.as_str()) {
            problems.push(invalid(
                &format!("scenarios.ids[{i}]"),
                format!("'{id}' is not a scenario of the dataset"),
            ));
        } else if !seen.insert(id.as_str()) {
            problems.push(invalid(
                &format!("scenarios.ids[{i}]"),
                format!("'{id}' is named twice; each scenario is one group of k rollouts"),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(ApiError::Invalid(problems));
    }
    let wanted: HashSet<String> = ids.iter().cloned().collect();
    prepared.keep_scenarios(|s| wanted.contains(&s.id));
    Ok(())
}

/// A problem of the loaded config said in the request's words: the policy
/// endpoint's fields are the request's `policy`, the samples its `k`.
fn said_as_asked(problem: Problem) -> Problem {
    let Some(location) = problem.location.as_deref() else {
        return problem;
    };
    let endpoint = format!("endpoints.{POLICY_ENDPOINT}");
    let field = if let Some(rest) = location.strip_prefix(&endpoint) {
        format!("policy{rest}")
    } else if location == "dataset.samples_per_scenario" {
        "k".to_string()
    } else {
        return problem;
    };
    Problem {
        file: PathBuf::from(BODY),
        location: Some(field),
        message: problem.message.replace(&endpoint, "policy"),
    }
}
