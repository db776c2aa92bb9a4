//! The mock policy: identify the user, replay the scenario's gold actions as
//! tool calls (asking for confirmation before the first write), then answer with
//! the facts to communicate. Some seeds get a deliberate flaw so rewards vary.
//! Consecutive `get_` reads go out as parallel calls, unless the request says
//! `parallel_tool_calls: false` (a job's `[policy] parallel_tool_calls =
//! false`, which the default prompt also says): then one call per reply.

use crate::llm::message::Caller;
use crate::llm::message::{Message, Role, ToolCall};
use crate::persona::Scenario;
use crate::verify::probe_spec::Family;
use crate::verify::Action;

use super::behaviour::{stable_hash, Modifiers};
use super::probe_policy;

pub use super::policy_lines::{
    tool_calls, ASK_IDENTITY, CONFIRM_MARK, DONE_PREFIX, TRANSFERRED, USER_ACTION_MARK,
};
const TRANSFER_TOOL: &str = "transfer_to_human_agents";

/// A deliberate mistake, chosen per (scenario, seed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flaw {
    /// Never makes the last state-changing call.
    SkipLastWrite,
    /// Leaves the required facts out of the final answer.
    ForgetFacts,
}

pub fn is_read(name: &str) -> bool {
    ["get_", "find_", "list_", "search_", "calculate", "check_"]
        .iter()
        .any(|p| name.starts_with(p))
}

pub(crate) fn is_write(name: &str) -> bool {
    !is_read(name) && name != TRANSFER_TOOL
}

pub fn flaw_for(scenario: &Scenario, seed: u64, modifiers: &Modifiers) -> Option<Flaw> {
    if modifiers.perfect {
        return None;
    }
    let has_write = scenario
        .evaluation
        .actions
        .iter()
        .any(|a| is_write(&a.name));
    let has_facts = !scenario.evaluation.communicate.is_empty();
    if modifiers.wrong {
        // Always flawed: the last write left out, or else the facts.
        return if has_write {
            Some(Flaw::SkipLastWrite)
        } else {
            has_facts.then_some(Flaw::ForgetFacts)
        };
    }
    match stable_hash(&[scenario.id.as_bytes(), &seed.to_le_bytes()]) % 10 {
        0 | 1 if has_write => Some(Flaw::SkipLastWrite),
        2 if has_facts => Some(Flaw::ForgetFacts),
        _ => None,
    }
}

/// The actions this mock will make, flaw applied.
fn planned_actions(scenario: &Scenario, flaw: Option<Flaw>) -> Vec<Action> {
    let mut actions = scenario.evaluation.actions.clone();
    if flaw == Some(Flaw::SkipLastWrite) {
        if let Some(last) = actions.iter().rposition(|a| is_write(&a.name)) {
            actions.remove(last);
        }
    }
    actions
}

/// The next assistant message given the conversation so far (policy view).
pub fn respond(
    scenario: Option<&Scenario>,
    seed: u64,
    messages: &[Message],
    modifiers: &Modifiers,
    parallel: bool,
) -> Message {
    let Some(scenario) = scenario else {
        return Message::assistant(
            "I'm the mock policy and I was not told which scenario this is (no X-Sparring-Scenario header), so I can only say hello.",
        );
    };
    // A probe's mock replays its gold actions whole; its flaw is breaking
    // the line (see `probe_policy`).
    let probe = scenario.probe.as_ref();
    let breaking = probe.is_some_and(|_| probe_policy::breaks(&scenario.id, seed, modifiers));
    let flaw = if probe.is_some() {
        None
    } else {
        flaw_for(scenario, seed, modifiers)
    };
    let actions = planned_actions(scenario, flaw);
    let said = |needle: &str| {
        messages
            .iter()
            .any(|m| m.role == Role::Assistant && m.content.contains(needle))
    };
    if !actions.is_empty() && !said(ASK_IDENTITY) {
        return Message::assistant(ASK_IDENTITY);
    }
    let results: Vec<&Message> = messages.iter().filter(|m| m.role == Role::Tool).collect();
    let done = results
        .iter()
        .filter(|m| !m.content.starts_with("Error"))
        .count();
    let position = next_position(&actions, done, user_actions_done(messages));

    if modifiers.clumsy && results.is_empty() {
        if let Some(first) = actions.iter().find(|a| a.caller == Caller::Policy) {
            return tool_calls(vec![ToolCall {
                id: "call_clumsy".into(),
                name: first.name.clone(),
                arguments: "{\"oops\": ".into(),
            }]);
        }
    }
    if let Some(next) = actions.get(position) {
        if next.caller == Caller::User {
            return Message::assistant(format!("{USER_ACTION_MARK} {}.", next.name));
        }
        let group = next_group(&actions, position, parallel);
        let skips_confirmation =
            breaking && probe.is_some_and(|p| p.family == Family::Confirmation);
        if group.iter().any(|a| is_write(&a.name)) && !said(CONFIRM_MARK) && !skips_confirmation {
            let what: Vec<String> = group.iter().map(describe).collect();
            let note = match probe {
                Some(p) if p.family == Family::Consequence && !breaking => {
                    format!(" {}", probe_policy::CONSEQUENCE_NOTE)
                }
                _ => String::new(),
            };
            return Message::assistant(format!(
                "Here is what I will do: {}.{note} {CONFIRM_MARK}",
                what.join("; ")
            ));
        }
        let calls = group
            .iter()
            .enumerate()
            .map(|(i, a)| ToolCall {
                id: format!("call_{}_{i}", done),
                name: a.name.clone(),
                arguments: a.arguments.to_string(),
            })
            .collect();
        return tool_calls(calls);
    }
    if let Some(said) =
        probe.and_then(|p| probe_policy::after_actions(p, &scenario.id, seed, messages, breaking))
    {
        return said;
    }
    if actions.last().is_some_and(|a| a.name == TRANSFER_TOOL) {
        return Message::assistant(TRANSFERRED);
    }
    let facts = if flaw == Some(Flaw::ForgetFacts) {
        String::new()
    } else {
        scenario
            .evaluation
            .communicate
            .iter()
            .map(|f| format!(" {f}."))
            .collect()
    };
    Message::assistant(format!(
        "{DONE_PREFIX}{facts} Is there anything else I can help you with?"
    ))
}

/// Consecutive `get_` reads go out together as parallel calls (when
/// `parallel`); anything else alone.
fn next_group(actions: &[Action], from: usize, parallel: bool) -> Vec<Action> {
    let rest = &actions[from..];
    let together = if parallel {
        rest.iter()
            .take_while(|a| a.caller == Caller::Policy && a.name.starts_with("get_"))
            .count()
    } else {
        1
    };
    rest[..together.clamp(1, rest.len())].to_vec()
}

/// The user's actions asked for that the user has answered since (whether
/// or not it made the call: the policy only knows what the user said).
fn user_actions_done(messages: &[Message]) -> usize {
    messages
        .iter()
        .enumerate()
        .filter(|(i, m)| {
            m.role == Role::Assistant
                && m.content.starts_with(USER_ACTION_MARK)
                && messages[i + 1..]
                    .iter()
                    .any(|later| later.role == Role::User)
        })
        .count()
}

/// The first action not done yet: `policy_done` of the policy's calls and
/// `user_done` of the user's have been made, in the plan's order.
fn next_position(actions: &[Action], policy_done: usize, user_done: usize) -> usize {
    let (mut policy_left, mut user_left) = (policy_done, user_done);
    for (i, action) in actions.iter().enumerate() {
        let left = match action.caller {
            Caller::Policy => &mut policy_left,
            Caller::User => &mut user_left,
        };
        if *left == 0 {
            return i;
        }
        *left -= 1;
    }
    actions.len()
}

fn describe(action: &Action) -> String {
    format!("{} with {}", action.name, action.arguments)
}
