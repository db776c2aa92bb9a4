//! One element of `simulations` as an [`ImportedConversation`]: its
//! messages, the domain's policy as the system prompt, the agent's tools,
//! `reward_info.reward` as the reward, its task's user scenario and gold
//! (`evaluation_criteria`), the run's models, whether its user speaks of
//! its task's identifiers (`import::pairing`), and every
//! other field of the simulation (`reward_info`, `termination_reason`,
//! `trial`, `seed`, costs, reviews ...) in metadata beside the run's `info`
//! (`run`), the task's persona, description and ticket (`task`) and the ids
//! of calls whose result was an error (`tool_errors`). The user's control
//! tokens are cut from its text as sparring cuts its own user's, what it
//! wrote kept in `user_outputs` (see `import::control_tokens`).

use std::collections::HashMap;

use serde_json::Value;

use crate::import::conversation::ImportedConversation;
use crate::import::{control_tokens, pairing};
use crate::import::{LineProblem, Origin};
use crate::llm::message::{Message, Role};

use super::messages;
use super::run::{id_text, Run, Task};

/// The metadata key that says a simulation named no task (`task_id`), so it
/// was read without its task's scenario and gold.
pub const TASKLESS_KEY: &str = "no_task_id";

/// `index` is the simulation's place in `simulations`, `line` the line of
/// the file it starts on; `tasks` is `None` for a bare list of simulations,
/// whose tasks are not in the file.
pub(super) fn read(
    index: usize,
    line: usize,
    simulation: Value,
    run: &Run,
    tasks: Option<&HashMap<String, Task>>,
) -> Result<ImportedConversation, LineProblem> {
    let Value::Object(mut sim) = simulation else {
        return Err(LineProblem::new(
            line,
            format!("`simulations[{index}]` is not an object"),
        ));
    };
    let task_id = sim.get("task_id").and_then(id_text);
    let trial = sim.get("trial").and_then(Value::as_i64);
    let at = |why: String| {
        let task = match (&task_id, trial) {
            (Some(task), Some(trial)) => format!(" (task `{task}`, trial {trial})"),
            (Some(task), None) => format!(" (task `{task}`)"),
            _ => String::new(),
        };
        LineProblem::new(line, format!("`simulations[{index}]`{task}: {why}"))
    };
    let list = match sim.remove("messages") {
        Some(Value::Array(list)) => list,
        None | Some(Value::Null) if sim.get("ticks").is_some_and(|t| !t.is_null()) => {
            return Err(at(
                "no `messages`: a full-duplex (voice) simulation keeps its turns in `ticks`, which are not read".into(),
            ))
        }
        None | Some(Value::Null) => return Err(at("no `messages`".into())),
        Some(_) => return Err(at("`messages` is not a list".into())),
    };
    // A simulation that names no task is read without one (no scenario, no
    // gold), and says so in its metadata; one that names a task the file
    // does not hold is a problem.
    let task = match (&task_id, tasks) {
        (Some(id), Some(tasks)) => Some(
            tasks
                .get(id)
                .ok_or_else(|| at(format!("task `{id}` is not in the file's `tasks`")))?,
        ),
        _ => None,
    };
    let scenario = match task {
        Some(task) => task
            .scenario
            .clone()
            .map_err(|why| at(format!("its task's {why}")))?,
        None => None,
    };
    let read = messages::read(&list).map_err(at)?;
    drop(list);
    let mut messages = read.messages;
    if messages.first().map(|m| m.role) != Some(Role::System) {
        let policy = match sim.remove("policy") {
            Some(Value::String(p)) if !p.is_empty() => Some(p),
            _ => run.policy.clone(),
        };
        if let Some(policy) = policy {
            messages.insert(0, Message::system(policy));
        }
    }
    let reward = sim
        .get("reward_info")
        .and_then(|r| r.get("reward"))
        .and_then(Value::as_f64);
    sim.remove("ticks");
    if !run.metadata.is_empty() {
        sim.insert("run".into(), Value::Object(run.metadata.clone()));
    }
    if let Some(task) = task.filter(|t| !t.metadata.is_empty()) {
        sim.insert("task".into(), Value::Object(task.metadata.clone()));
    }
    if !read.tool_errors.is_empty() {
        sim.insert("tool_errors".into(), serde_json::json!(read.tool_errors));
    }
    if task_id.is_none() {
        sim.insert(TASKLESS_KEY.into(), Value::Bool(true));
    }
    let mut conversation =
        ImportedConversation::new(line, messages, run.tools.clone(), reward, sim)
            .map_err(|p| at(p.why))?;
    let cut = control_tokens::cut(&mut conversation.messages);
    if !cut.outputs.is_empty() {
        conversation
            .metadata
            .insert("user_outputs".into(), Value::Array(cut.outputs));
    }
    conversation.origin = Origin {
        scenario_id: task_id,
        persona_id: None,
        trial,
    };
    conversation.scenario = scenario;
    conversation.criteria = task.and_then(|t| t.criteria.clone());
    conversation.models = run.models.clone();
    conversation.simulated_user = true;
    conversation.pairing = pairing::check(&conversation);
    Ok(conversation)
}
