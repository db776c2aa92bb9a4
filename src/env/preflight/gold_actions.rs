//! Checking a scenario's gold actions against an environment: each names one
//! of its tools, fits the tool's parameters, and succeeds when replayed on a
//! fresh session.

use std::path::Path;

use crate::config::Problem;
use crate::env::{Caller, Environment, InitialState, ToolCall, ToolSpec};
use crate::persona::Scenario;

/// Every gold action must name one of the environment's tools, fit its
/// parameters schema where the environment checks one, and succeed when
/// replayed on a fresh session; otherwise no policy could ever earn the
/// reward. A problem names the scenario's line in `file` when it is a
/// scenarios JSONL file.
pub async fn check_gold_actions(
    file: &Path,
    scenarios: &[Scenario],
    environment: &dyn Environment,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    // Read only when there is a problem to place.
    let lines = std::sync::OnceLock::new();
    let names =
        |tools: &[ToolSpec]| -> Vec<String> { tools.iter().map(|t| t.name.clone()).collect() };
    let policy_tools = names(environment.tools());
    let user_tools = names(environment.user_tools());
    // A scenario with its own tools (a NeMo Gym row) is verified by its own
    // resources server, which knows its gold calls better than sparring does.
    for scenario in scenarios.iter().filter(|s| s.tools.is_none()) {
        let at = |i: usize| {
            let line = lines
                .get_or_init(|| crate::persona::load::scenario_lines(file))
                .get(&scenario.id)
                .map(|line| format!("line {line}, "))
                .unwrap_or_default();
            format!("{line}scenario '{}', evaluation.actions[{i}]", scenario.id)
        };
        let mut known = true;
        for (i, action) in scenario.evaluation.actions.iter().enumerate() {
            let (tools, whose) = match action.caller {
                Caller::Policy => (&policy_tools, "a tool"),
                Caller::User => (&user_tools, "a user tool"),
            };
            if !tools.contains(&action.name) {
                known = false;
                let list = if tools.is_empty() {
                    "none".to_string()
                } else {
                    tools.join(", ")
                };
                let hint = match (action.caller, user_tools.contains(&action.name)) {
                    (Caller::Policy, true) => " (it is a user tool: add \"caller\": \"user\")",
                    _ => "",
                };
                problems.push(Problem::at_field(
                    file,
                    &at(i),
                    format!(
                        "'{}' is not {whose} of {}{hint}; its {}s are: {list}",
                        action.name,
                        environment.name(),
                        whose.trim_start_matches("a ")
                    ),
                ));
            } else if let Some(why) =
                environment.argument_problem(action.caller, &action.name, &action.arguments)
            {
                known = false;
                problems.push(Problem::at_field(file, &at(i), why));
            }
        }
        if !known || !environment.replays_gold_actions() {
            continue;
        }
        let init = InitialState {
            seed: 0,
            data: scenario.initial_state.clone(),
        };
        let mut session = match environment.open(&init).await {
            Ok(session) => session,
            Err(e) => {
                problems.push(Problem::at_field(
                    file,
                    &format!("scenario '{}', initial_state", scenario.id),
                    e.to_string(),
                ));
                continue;
            }
        };
        for (i, action) in scenario.evaluation.actions.iter().enumerate() {
            let call = ToolCall {
                id: format!("gold_{i}"),
                name: action.name.clone(),
                arguments: action.arguments.to_string(),
            };
            let output = match session.call_by(action.caller, &call).await {
                Ok(output) => output,
                Err(e) => {
                    problems.push(Problem::at_field(file, &at(i), e.to_string()));
                    continue;
                }
            };
            if output.is_error {
                problems.push(Problem::at_field(
                    file,
                    &at(i),
                    format!(
                        "fails when replayed on a fresh session: {}; fix the arguments or the order of the gold actions",
                        output.content
                    ),
                ));
            }
        }
    }
    problems
}
