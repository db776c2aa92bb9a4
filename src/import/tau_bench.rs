//! tau-bench (v1) trajectories: the JSON list `run.py` writes and papers
//! publish (`historical_trajectories/*.json`), one `{task_id, reward, info,
//! traj, trial}` per run of a task, read one element at a time
//! (`import::list`). `traj` holds chat-completion messages (the agent's
//! system prompt first, tool calls with JSON-text arguments, tool results
//! with `tool_call_id`); `info.task` the task: the user's `instruction` (its
//! scenario, as task instructions), the gold `actions` (`name`, `kwargs`)
//! and `outputs` (facts the agent must say), which become the scenario's
//! gold. `reward` is the reward, `task_id` the scenario, `trial` the
//! sample; every other field (`info` whole) is kept in metadata. The user's
//! control tokens are cut from its text as sparring cuts its own user's
//! (`import::control_tokens`). The file defines no tools: the calls' tools
//! are inferred (`import::conversation`). It names no model either.

use std::io::{Read, Seek};
use std::ops::ControlFlow;

use serde_json::{json, Map, Value};

use crate::persona::UserScenario;

use super::list::{self, DocumentError};
use super::tau2::{evaluation_criteria, id_text};
use super::{chat, control_tokens, pairing, ImportedConversation, LineProblem, Origin};

/// Reads a whole trajectories file, handing each run's conversation, or why
/// it cannot be read, to `each` in file order until it breaks.
pub fn read_file<R, F>(mut reader: R, mut each: F) -> Result<(), DocumentError>
where
    R: Read + Seek,
    F: FnMut(Result<ImportedConversation, LineProblem>) -> ControlFlow<()>,
{
    list::read_document(
        &mut reader,
        "a list of tau-bench runs ({task_id, reward, info, traj, trial})",
        |index, line, run| each(read(index, line, run)),
    )
}

/// Element `index` of the list, starting on line `line`.
fn read(index: usize, line: usize, run: Value) -> Result<ImportedConversation, LineProblem> {
    let Value::Object(mut run) = run else {
        return Err(LineProblem::new(
            line,
            format!("run {index} is not an object"),
        ));
    };
    let task_id = run.get("task_id").and_then(id_text);
    let trial = run.get("trial").and_then(Value::as_i64);
    let at = |why: String| {
        let which = match (&task_id, trial) {
            (Some(task), Some(trial)) => format!(" (task {task}, trial {trial})"),
            (Some(task), None) => format!(" (task {task})"),
            _ => String::new(),
        };
        LineProblem::new(line, format!("run {index}{which}: {why}"))
    };
    let traj = match run.remove("traj") {
        Some(traj @ Value::Array(_)) => traj,
        None | Some(Value::Null) => return Err(at("no `traj`".into())),
        Some(_) => return Err(at("`traj` is not a list".into())),
    };
    let (messages, _) = chat::messages(line, Some(&traj)).map_err(|p| at(p.why))?;
    drop(traj);
    let task = run
        .get("info")
        .and_then(|i| i.get("task"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let reward = run.get("reward").and_then(Value::as_f64);
    let mut conversation = ImportedConversation::new(line, messages, Vec::new(), reward, run)
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
    conversation.scenario = scenario(&task);
    conversation.criteria = evaluation_criteria(Some(&json!({
        "actions": task.get("actions").cloned().unwrap_or(Value::Null),
        "communicate_info": task.get("outputs").cloned().unwrap_or(Value::Null),
    })));
    conversation.simulated_user = true;
    conversation.pairing = pairing::check(&conversation);
    Ok(conversation)
}

/// The task's `instruction` as what its user was told (all of it hidden
/// from the agent: tau-bench does not split what the user knows from how it
/// behaves); `None` without one.
fn scenario(task: &Map<String, Value>) -> Option<UserScenario> {
    let instruction = task.get("instruction")?.as_str()?;
    Some(UserScenario {
        task_instructions: instruction.to_string(),
        ..UserScenario::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::Role;
    use std::io::Cursor;

    const RUN: &str = r##"{"task_id": 3, "reward": 1.0, "trial": 2,
      "info": {"task": {"user_id": "mia_li_3668",
        "actions": [{"name": "get_user_details", "kwargs": {"user_id": "mia_li_3668"}},
                    {"name": "cancel_reservation", "kwargs": {"reservation_id": "ABC123"}}],
        "instruction": "You are mia_li_3668. You want to cancel reservation ABC123.",
        "outputs": ["327"]}, "source": "user", "reward_info": {"reward": 1.0}},
      "traj": [
        {"role": "system", "content": "# Airline Agent Policy"},
        {"role": "user", "content": "Hi, I'm mia_li_3668."},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
          "function": {"name": "cancel_reservation", "arguments": "{\"reservation_id\":\"ABC123\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "cancel_reservation", "content": "ok"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Thanks! ###STOP###"}]}"##;

    fn read_all(
        text: &str,
    ) -> (
        Vec<Result<ImportedConversation, LineProblem>>,
        Result<(), DocumentError>,
    ) {
        let mut out = Vec::new();
        let end = read_file(Cursor::new(text.as_bytes()), |c| {
            out.push(c);
            ControlFlow::Continue(())
        });
        (out, end)
    }

    #[test]
    fn a_run_is_a_conversation_with_its_task_as_scenario_and_gold() {
        let (read, end) = read_all(&format!("[{RUN}]"));
        end.unwrap();
        let c = read.into_iter().next().unwrap().unwrap();
        assert_eq!(c.system_prompt.as_deref(), Some("# Airline Agent Policy"));
        assert_eq!(c.messages[1].role, Role::Assistant);
        assert_eq!(c.messages[4].content.as_ref(), "Thanks!");
        assert_eq!(c.metadata["user_outputs"][1]["raw"], "Thanks! ###STOP###");
        assert_eq!(c.reward, Some(1.0));
        assert_eq!(c.origin.scenario_id.as_deref(), Some("3"));
        assert_eq!(c.origin.trial, Some(2));
        assert!(c.simulated_user);
        assert!(c
            .scenario
            .as_ref()
            .unwrap()
            .task_instructions
            .starts_with("You are mia_li_3668"));
        let gold = c.criteria.as_ref().unwrap();
        assert_eq!(gold.actions[1].name, "cancel_reservation");
        assert_eq!(gold.actions[1].arguments["reservation_id"], "ABC123");
        assert_eq!(gold.communicate, ["327"]);
        assert_eq!(c.metadata["inferred_tools"], json!(["cancel_reservation"]));
        assert_eq!(c.pairing.as_ref().unwrap()["paired"], true);
        assert_eq!(c.metadata["info"]["source"], "user");
    }

    #[test]
    fn a_run_that_does_not_fit_is_a_problem_at_its_line() {
        let (read, end) = read_all(&format!(
            "[\n{RUN},\n{{\"task_id\": 4, \"trial\": 0}},\n7\n]"
        ));
        end.unwrap();
        assert!(read[0].is_ok());
        let p = read[1].as_ref().unwrap_err();
        assert_eq!(p.line, 2 + RUN.lines().count());
        assert!(
            p.why.starts_with("run 1 (task 4, trial 0): no `traj`"),
            "{p}"
        );
        assert!(read[2].as_ref().unwrap_err().why.contains("not an object"));
        let err = read_all("{\"task_id\": 1}").1.unwrap_err();
        assert!(
            err.to_string().contains("a list of tau-bench runs"),
            "{err}"
        );
    }
}
