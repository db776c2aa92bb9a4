use std::io::Cursor;

use super::*;
use crate::llm::message::Role;

const INFO: &str = r#"{"git_commit": "abc", "num_trials": 2,
    "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1"},
    "agent_info": {"implementation": "llm_agent", "llm": "m"},
    "environment_info": {"domain_name": "airline", "policy": "Be kind.",
      "tool_defs": {"get": {"name": "get", "doc": "Gets.", "params": {"type": "object"}}}}}"#;

const TASKS: &str = r#"[
  {"id": "1", "description": {"purpose": "p"}, "user_scenario": {"persona": "terse",
    "instructions": {"domain": "airline", "reason_for_call": "cancel", "known_info": "id 7",
      "unknown_info": null, "task_instructions": "insist"}}},
  {"id": "2", "user_scenario": {"instructions": "Create a task."}}]"#;

fn simulation(task: &str, trial: i64, reward: f64) -> String {
    format!(
        r#"{{"id": "s{task}{trial}", "task_id": "{task}", "trial": {trial}, "seed": 9,
  "termination_reason": "user_stop", "reward_info": {{"reward": {reward}, "db_check": null}},
  "messages": [
    {{"role": "assistant", "content": "Hi! How can I help you today?"}},
    {{"role": "user", "content": "Cancel it."}},
    {{"role": "assistant", "content": null, "tool_calls": [
      {{"id": "c1", "name": "get", "arguments": {{"id": 7}}, "requestor": "assistant"}}]}},
    {{"role": "tool", "id": "c1", "content": "ok", "requestor": "assistant", "error": false}},
    {{"role": "user", "content": "Thanks ###STOP###"}}]}}"#
    )
}

/// Every conversation and problem the file gives, and the error that ended it.
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
fn each_simulation_is_a_conversation_with_its_tasks_scenario_reward_and_origin() {
    let file = format!(
        r#"{{"timestamp": "t", "info": {INFO}, "tasks": {TASKS}, "simulations": [{}, {}]}}"#,
        simulation("1", 0, 1.0),
        simulation("2", 1, 0.0)
    );
    let (read, end) = read_all(&file);
    end.unwrap();
    let read: Vec<_> = read.into_iter().map(Result::unwrap).collect();
    assert_eq!(read.len(), 2);
    let c = &read[0];
    assert_eq!(c.system_prompt.as_deref(), Some("Be kind."));
    let roles: Vec<_> = c.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::User
        ]
    );
    assert_eq!(c.messages[2].tool_calls[0].arguments, r#"{"id":7}"#);
    assert_eq!(c.reward, Some(1.0));
    assert_eq!(c.tools[0]["description"], "Gets.");
    assert_eq!(c.origin.scenario_id.as_deref(), Some("1"));
    assert_eq!(c.origin.trial, Some(0));
    assert!(c.simulated_user);
    let scenario = c.scenario.as_ref().unwrap();
    assert_eq!(scenario.reason_for_contact, "cancel");
    assert_eq!(scenario.known_info, "id 7");
    assert_eq!(c.metadata["task"]["persona"], "terse");
    assert_eq!(c.metadata["termination_reason"], "user_stop");
    assert_eq!(c.metadata["reward_info"]["reward"], 1.0);
    assert_eq!(c.metadata["seed"], 9);
    assert_eq!(c.metadata["run"]["user_info"]["llm"], "gpt-4.1");
    assert!(c.metadata["run"]["environment_info"]
        .get("policy")
        .is_none());
    assert!(c.metadata.get("messages").is_none());
    // The user's stop token is cut as sparring cuts its own user's, and kept.
    assert_eq!(c.messages[4].content.as_ref(), "Thanks");
    assert_eq!(c.metadata["user_outputs"][1]["raw"], "Thanks ###STOP###");
    assert_eq!(c.metadata["user_outputs"][1]["message"], 4);
    let c = &read[1];
    assert_eq!(
        c.scenario.as_ref().unwrap().task_instructions,
        "Create a task."
    );
    assert_eq!((c.reward, c.origin.trial), (Some(0.0), Some(1)));
}

#[test]
fn simulations_before_tasks_are_read_in_a_second_pass() {
    let file = format!(
        r#"{{"simulations": [{}], "tasks": {TASKS}, "info": {INFO}}}"#,
        simulation("1", 3, 1.0)
    );
    let (read, end) = read_all(&file);
    end.unwrap();
    assert_eq!(read.len(), 1);
    let c = read.into_iter().next().unwrap().unwrap();
    assert_eq!(c.scenario.unwrap().task_instructions, "insist");
    assert_eq!(c.system_prompt.as_deref(), Some("Be kind."));
    assert_eq!(c.origin.trial, Some(3));
}

#[test]
fn every_simulation_that_does_not_fit_is_a_problem_at_its_line_in_one_pass() {
    let bad_role = simulation("1", 1, 1.0).replace(r#""role": "tool""#, r#""role": "observation""#);
    let no_task = simulation("9", 0, 1.0);
    let orphan =
        simulation("2", 0, 1.0).replace(r#""id": "c1", "content""#, r#""id": "c7", "content""#);
    let file = format!(
        "{{\"info\": {INFO},\n\"tasks\": {TASKS},\n\"simulations\": [\n{},\n{bad_role},\n{no_task},\n{orphan}\n]}}",
        simulation("1", 0, 1.0)
    );
    let start = |n: usize| {
        // The line each simulation starts on.
        let head = file
            .split("\"simulations\"")
            .next()
            .unwrap()
            .lines()
            .count();
        let mut line = head + 2;
        for sim in [simulation("1", 0, 1.0), bad_role.clone(), no_task.clone()]
            .iter()
            .take(n)
        {
            line += sim.lines().count();
        }
        line
    };
    let (read, end) = read_all(&file);
    end.unwrap();
    assert_eq!(read.len(), 4);
    assert!(read[0].is_ok());
    let problems: Vec<LineProblem> = read.into_iter().skip(1).map(Result::unwrap_err).collect();
    assert_eq!(problems[0].line, start(1));
    assert!(
        problems[0]
            .why
            .starts_with("`simulations[1]` (task `1`, trial 1): message 4: role `observation`"),
        "{}",
        problems[0]
    );
    assert_eq!(problems[1].line, start(2));
    assert!(
        problems[1]
            .why
            .contains("task `9` is not in the file's `tasks`"),
        "{}",
        problems[1]
    );
    assert_eq!(problems[2].line, start(3));
    assert!(
        problems[2].why.contains("answers call `c7`"),
        "{}",
        problems[2]
    );
}

#[test]
fn a_file_that_is_no_results_document_says_where_and_why() {
    let why = |text: &str| match read_all(text).1 {
        Err(DocumentError::Invalid(p)) => p,
        other => panic!("{other:?}"),
    };
    let p = why("{\"info\": {},\n\"tasks\": [],\n\"simulations\": [\n{\"task_id\": ");
    assert_eq!(p.line, 4);
    assert!(p.why.starts_with("invalid JSON: EOF"), "{p}");
    assert!(why(r#"{"info": {}, "tasks": []}"#)
        .why
        .contains("no `simulations` list"));
    assert!(why("[1").why.contains("EOF"));
    assert!(why(r#"{"info": 3, "simulations": []}"#)
        .why
        .contains("`info` is not an object"));
    assert!(why(r#"{"tasks": {}, "simulations": []}"#)
        .why
        .contains("list of tasks"));
    assert!(why(r#"{"info": {}, "tasks": [], "simulations": []} x"#)
        .why
        .contains("trailing"));
}

#[test]
fn a_bare_list_of_simulations_is_read_without_tasks_scenario_or_run() {
    let file = format!(
        "[\n{},\n{}, 3]",
        simulation("1", 0, 1.0),
        simulation("7", 1, 0.0)
    );
    let (read, end) = read_all(&file);
    end.unwrap();
    assert_eq!(read.len(), 3);
    let first = read[0].as_ref().unwrap();
    assert_eq!(first.origin.scenario_id.as_deref(), Some("1"));
    assert_eq!(first.reward, Some(1.0));
    assert!(first.scenario.is_none() && first.criteria.is_none());
    assert!(first.metadata.get("run").is_none());
    assert_eq!(first.metadata["inferred_tools"], serde_json::json!(["get"]));
    assert_eq!(read[1].as_ref().unwrap().origin.trial, Some(1));
    let p = read[2].as_ref().unwrap_err();
    assert!(
        p.why.starts_with("`simulations[2]` is not an object"),
        "{p}"
    );
}

#[test]
fn a_document_without_tasks_or_a_simulation_without_task_id_is_read_without_a_task() {
    // As NeMo-style and leaderboard submissions write them: `simulations`
    // (and other keys) without `info` or `tasks`.
    let file = format!(
        r#"{{"domain": "medical_triage", "model": "m", "simulations": [{}]}}"#,
        simulation("4", 0, 1.0)
    );
    let (read, end) = read_all(&file);
    end.unwrap();
    let c = read.into_iter().next().unwrap().unwrap();
    assert_eq!(c.origin.scenario_id.as_deref(), Some("4"));
    assert!(c.scenario.is_none());
    let no_id = simulation("1", 0, 1.0).replace(r#""task_id": "1", "#, "");
    let file = format!(r#"{{"info": {INFO}, "tasks": {TASKS}, "simulations": [{no_id}]}}"#);
    let (read, end) = read_all(&file);
    end.unwrap();
    let c = read.into_iter().next().unwrap().unwrap();
    assert_eq!(c.origin.scenario_id, None);
    assert!(c.scenario.is_none() && c.criteria.is_none());
    assert_eq!(c.metadata[TASKLESS_KEY], true);
}

#[test]
fn a_tasks_evaluation_criteria_are_its_gold_and_the_runs_models_are_kept() {
    let tasks = r#"[{"id": "1", "user_scenario": {"instructions": {"reason_for_call": "cancel",
        "known_info": "Your user id is emma_kim_9957."}},
      "evaluation_criteria": {"actions": [
        {"action_id": "1_0", "requestor": "assistant", "name": "cancel_reservation",
         "arguments": {"reservation_id": "EHGLP3"}, "info": null, "compare_args": null},
        {"action_id": "1_1", "requestor": "user", "name": "toggle_roaming", "arguments": {}}],
       "communicate_info": ["327"], "nl_assertions": null, "reward_basis": ["DB"]}}]"#;
    let file = format!(
        r#"{{"info": {INFO}, "tasks": {tasks}, "simulations": [{}]}}"#,
        simulation("1", 0, 1.0).replace("Cancel it.", "I am emma_kim_9957, cancel it.")
    );
    let (read, end) = read_all(&file);
    end.unwrap();
    let c = read.into_iter().next().unwrap().unwrap();
    let gold = c.criteria.unwrap();
    assert_eq!(gold.actions[0].name, "cancel_reservation");
    assert_eq!(gold.actions[0].arguments["reservation_id"], "EHGLP3");
    assert_eq!(gold.actions[1].caller, crate::llm::message::Caller::User);
    assert_eq!(gold.communicate, ["327"]);
    assert_eq!(c.models.policy.as_deref(), Some("m"));
    assert_eq!(c.models.user.as_deref(), Some("gpt-4.1"));
    assert_eq!(c.pairing.unwrap()["paired"], true);
}

#[test]
fn each_can_stop_the_reading() {
    let file = format!(
        r#"{{"info": {INFO}, "tasks": {TASKS}, "simulations": [{}, {}, "not even read"}}"#,
        simulation("1", 0, 1.0),
        simulation("1", 1, 1.0)
    );
    let mut seen = 0;
    read_file(Cursor::new(file), |_| {
        seen += 1;
        ControlFlow::Break(())
    })
    .unwrap();
    assert_eq!(seen, 1);
}

#[test]
fn a_voice_simulation_without_messages_is_a_problem() {
    let file = format!(
        r#"{{"info": {INFO}, "tasks": {TASKS}, "simulations": [{{"task_id": "1", "messages": null, "ticks": []}}]}}"#
    );
    let (read, _) = read_all(&file);
    let p = read.into_iter().next().unwrap().unwrap_err();
    assert!(p.why.contains("`ticks`"), "{p}");
}

/// A file whose reading fails after its first `at` bytes.
struct Cut {
    inner: Cursor<Vec<u8>>,
    at: u64,
}

impl std::io::Read for Cut {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.at.saturating_sub(self.inner.position());
        if left == 0 {
            return Err(std::io::Error::other("disk gone"));
        }
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        self.inner.read(&mut buf[..n])
    }
}

impl std::io::Seek for Cut {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(to)
    }
}

#[test]
fn a_simulation_is_handed_on_before_the_next_is_read() {
    let file = format!(
        r#"{{"info": {INFO}, "tasks": {TASKS}, "simulations": [{}, {}]}}"#,
        simulation("1", 0, 1.0),
        simulation("1", 1, 1.0)
    );
    // The bytes up to the start of the second simulation, and no more.
    let at = file.rfind(r#"{"id": "s11""#).unwrap() as u64;
    let mut seen = Vec::new();
    let end = read_file(
        Cut {
            inner: Cursor::new(file.into_bytes()),
            at,
        },
        |c| {
            seen.push(c.unwrap().origin.trial);
            ControlFlow::Continue(())
        },
    );
    assert_eq!(seen, [Some(0)]);
    assert!(matches!(end, Err(DocumentError::Io(e)) if e.to_string() == "disk gone"));
}
