//! What a results file says once for all its simulations: the run's `info`
//! (the domain's policy, the agent's tools, the agent's and the user's
//! models) and its `tasks`, each kept only as much as a conversation needs
//! (the scenario, its gold: `evaluation_criteria`, the persona, the
//! description and ticket), so memory grows with the number of tasks, never
//! of simulations.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::import::conversation::Models;
use crate::llm::message::Caller;
use crate::persona::UserScenario;
use crate::verify::{Action, Criteria};

use super::scenario::user_scenario;

/// The file's `info`.
#[derive(Debug, Default)]
pub(super) struct Run {
    /// `environment_info.policy`: the policy the agent was given, the
    /// conversation's system prompt (tau2 stores no system message: its
    /// agent wraps the policy in its own instructions).
    pub policy: Option<String>,
    /// `environment_info.tool_defs` as `{name, description, parameters}`.
    pub tools: Vec<Value>,
    /// `agent_info.llm` and `user_info.llm`.
    pub models: Models,
    /// The rest of `info` (models, trials, seed, git commit, domain).
    pub metadata: Map<String, Value>,
}

impl Run {
    pub(super) fn read(info: Value) -> Result<Run, String> {
        let Value::Object(mut info) = info else {
            return Err("`info` is not an object".into());
        };
        let mut run = Run::default();
        if let Some(Value::Object(env)) = info.get_mut("environment_info") {
            if let Some(Value::String(policy)) = env.remove("policy") {
                run.policy = Some(policy).filter(|p| !p.is_empty());
            }
            match env.remove("tool_defs") {
                None | Some(Value::Null) => {}
                Some(Value::Object(defs)) => run.tools = defs.into_iter().map(tool).collect(),
                Some(_) => return Err("`info.environment_info.tool_defs` is not an object".into()),
            }
        }
        let llm = |who: &str| {
            info.get(who)
                .and_then(|i| i.get("llm"))
                .and_then(Value::as_str)
                .filter(|m| !m.trim().is_empty())
                .map(str::to_string)
        };
        run.models = Models {
            policy: llm("agent_info"),
            user: llm("user_info"),
        };
        run.metadata = info;
        Ok(run)
    }
}

/// A tau2 `ToolSignature` (`name`, `doc`, `params`) as `{name, description, parameters}`.
fn tool((key, def): (String, Value)) -> Value {
    let name = def.get("name").and_then(Value::as_str).unwrap_or(&key);
    let description = def.get("doc").and_then(Value::as_str).unwrap_or_default();
    let parameters = def.get("params").cloned().unwrap_or(Value::Null);
    serde_json::json!({"name": name, "description": description, "parameters": parameters})
}

/// One task, as much of it as its simulations need.
#[derive(Debug)]
pub(super) struct Task {
    /// The scenario, or why the task's `user_scenario` cannot be read.
    pub scenario: Result<Option<UserScenario>, String>,
    /// Its `evaluation_criteria` as the scenario's gold (`None` without any).
    pub criteria: Option<Criteria>,
    /// `persona`, `description` and `ticket`, for the conversation's metadata.
    pub metadata: Map<String, Value>,
}

/// Adds one element of `tasks` to `tasks`, by id; a task without an id
/// answers no simulation and is left out.
pub(super) fn add_task(tasks: &mut HashMap<String, Task>, task: Value) {
    let Some(id) = task.get("id").and_then(id_text) else {
        return;
    };
    let scenario = user_scenario(task.get("user_scenario"));
    let mut metadata = Map::new();
    if let Ok((_, Some(persona))) = &scenario {
        metadata.insert("persona".into(), Value::String(persona.clone()));
    }
    for key in ["description", "ticket"] {
        if let Some(v) = task.get(key).filter(|v| !v.is_null()) {
            metadata.insert(key.into(), v.clone());
        }
    }
    let scenario = scenario.map(|(s, _)| s);
    let criteria = criteria(task.get("evaluation_criteria"));
    tasks.insert(
        id,
        Task {
            scenario,
            criteria,
            metadata,
        },
    );
}

/// A task's `evaluation_criteria` as gold: its `actions` (`name`,
/// `arguments`, `requestor`: the user's own calls are the user's),
/// `communicate_info` as the facts to communicate, and `nl_assertions`.
/// `None` when it has none of them; a field of another shape is left out
/// (the reward is the file's, so nothing is scored from it).
pub(crate) fn criteria(value: Option<&Value>) -> Option<Criteria> {
    let value = value?.as_object()?;
    let list = |key: &str| value.get(key).and_then(Value::as_array);
    let actions: Vec<Action> = list("actions")
        .into_iter()
        .flatten()
        .filter_map(|a| {
            let name = a.get("name")?.as_str()?.to_string();
            let arguments = a
                .get("arguments")
                .or_else(|| a.get("kwargs"))
                .cloned()
                .unwrap_or(Value::Null);
            let caller = match a.get("requestor").and_then(Value::as_str) {
                Some("user") => Caller::User,
                _ => Caller::Policy,
            };
            Some(Action {
                name,
                arguments,
                caller,
            })
        })
        .collect();
    let texts = |key: &str| -> Vec<String> {
        list(key)
            .into_iter()
            .flatten()
            .filter_map(|v| match v {
                Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect()
    };
    let communicate = texts("communicate_info");
    let nl_assertions = texts("nl_assertions");
    if actions.is_empty() && communicate.is_empty() && nl_assertions.is_empty() {
        return None;
    }
    Some(Criteria {
        actions,
        communicate,
        nl_assertions,
        ..Criteria::default()
    })
}

/// A task id: tau2 writes text, older files numbers.
pub(crate) fn id_text(id: &Value) -> Option<String> {
    match id {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
