//! The mock for scenarios that bring their own opening (NeMo Gym rows).
//!
//! The policy replays the scenario's expected tool calls in order, one per
//! step, then answers with its reference reply (a recorded rollout's), else
//! its expected answer, else "Done.". On some seeds (and always with
//! `+wrong`) it errs: it leaves out the last call, or, with no calls to make,
//! answers that it is not sure; `+perfect` never errs. So NeMo Gym's own
//! verify gives 1 to a faithful replay and 0 to a flawed one.
//!
//! The user, after the dataset's opening, says the row's later user turns
//! verbatim, one per message, then stops.

use crate::llm::message::{Message, Role, ToolCall};
use crate::persona::Scenario;

use super::behaviour::{stable_hash, Modifiers};

pub const UNSURE: &str = "I am not sure.";
pub const DONE: &str = "Done.";
pub const GOODBYE: &str = "Thanks, that's all. ###STOP###";

/// Whether this mock plays a scenario: it brings its own opening.
pub fn plays(scenario: &Scenario) -> bool {
    !scenario.prelude.is_empty()
}

fn errs(scenario: &Scenario, seed: u64, modifiers: &Modifiers) -> bool {
    if modifiers.wrong {
        return true;
    }
    !modifiers.perfect && stable_hash(&[scenario.id.as_bytes(), &seed.to_le_bytes()]) % 10 < 3
}

/// The policy's next message; `messages` is its view (the prelude first).
pub fn policy(
    scenario: &Scenario,
    seed: u64,
    messages: &[Message],
    modifiers: &Modifiers,
) -> Message {
    let flawed = errs(scenario, seed, modifiers);
    let mut calls = scenario.evaluation.actions.as_slice();
    if flawed && !calls.is_empty() {
        calls = &calls[..calls.len() - 1];
    }
    let after_prelude = messages.get(scenario.prelude.len()..).unwrap_or_default();
    let done = after_prelude
        .iter()
        .filter(|m| m.role == Role::Tool)
        .count();
    if let Some(next) = calls.get(done) {
        return Message {
            role: Role::Assistant,
            content: "".into(),
            tool_calls: vec![ToolCall {
                id: format!("call_{done}"),
                name: next.name.clone(),
                arguments: next.arguments.to_string(),
            }],
            tool_call_id: None,
            reasoning: None,
        };
    }
    if flawed && scenario.evaluation.actions.is_empty() {
        return Message::assistant(UNSURE);
    }
    let criteria = &scenario.evaluation;
    let answer = criteria
        .reference_reply
        .as_deref()
        .or(criteria.expected_answer.as_deref())
        .unwrap_or(DONE);
    Message::assistant(answer)
}

/// The user's next message; `messages` is the simulator's view (its own
/// words as `assistant`, the prelude's user turns among them).
pub fn user(scenario: &Scenario, messages: &[Message]) -> String {
    let own = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count();
    let given = scenario
        .prelude
        .iter()
        .filter(|m| m.role == Role::User)
        .count();
    match scenario.user.turns.get(own.saturating_sub(given)) {
        Some(turn) => turn.clone(),
        None => GOODBYE.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Action;

    fn row_scenario(actions: usize, reply: Option<&str>) -> Scenario {
        let mut s: Scenario = serde_json::from_value(serde_json::json!({
            "id": "r",
            "user": {"reason_for_contact": "x", "known_info": "", "task_instructions": "",
                     "turns": ["then this", "and that"]},
            "prelude": [{"role": "user", "content": "do x"}]
        }))
        .unwrap();
        s.evaluation.actions = (0..actions)
            .map(|k| Action {
                name: format!("tool_{k}"),
                arguments: serde_json::json!({"k": k}),
                caller: Default::default(),
            })
            .collect();
        s.evaluation.reference_reply = reply.map(str::to_string);
        s
    }

    fn perfect() -> Modifiers {
        Modifiers {
            perfect: true,
            ..Modifiers::default()
        }
    }

    #[test]
    fn the_policy_replays_each_call_then_the_reference_reply() {
        let s = row_scenario(2, Some("\\boxed{B}"));
        let mut messages = s.prelude.clone();
        for k in 0..2 {
            let m = policy(&s, 1, &messages, &perfect());
            assert_eq!(m.tool_calls[0].name, format!("tool_{k}"));
            messages.push(m);
            messages.push(Message::tool_result(format!("call_{k}"), "ok"));
        }
        assert_eq!(&*policy(&s, 1, &messages, &perfect()).content, "\\boxed{B}");
    }

    #[test]
    fn made_to_err_it_drops_the_last_call_or_is_unsure() {
        let wrong = Modifiers {
            wrong: true,
            ..Modifiers::default()
        };
        let s = row_scenario(1, None);
        assert_eq!(&*policy(&s, 1, &s.prelude, &wrong).content, DONE);
        let s = row_scenario(0, Some("\\boxed{B}"));
        assert_eq!(&*policy(&s, 1, &s.prelude, &wrong).content, UNSURE);
    }

    #[test]
    fn the_user_says_the_rows_later_turns_then_stops() {
        let s = row_scenario(0, None);
        let mut view = vec![
            Message::system("you are a user"),
            Message::assistant("do x"),
        ];
        assert_eq!(user(&s, &view), "then this");
        view.push(Message::assistant("then this"));
        assert_eq!(user(&s, &view), "and that");
        view.push(Message::assistant("and that"));
        assert_eq!(user(&s, &view), GOODBYE);
    }
}
