//! The brief check, the last step of validation by execution: a proposal is
//! what its brief asked for, or it goes back to the generator with every
//! way it is not.
//!
//! - **tools**: each required tool is called by some gold action;
//! - **difficulty**: the scenario's `difficulty` is the one asked for;
//! - **tags**: the scenario carries every tag asked for;
//! - **resolve**: not tagged `refusal` or `transfer`, and no gold action
//!   transfers to a human;
//! - **refusal**: tagged `refusal`, the gold actions change nothing and do
//!   not transfer;
//! - **transfer**: tagged `transfer`, the last gold action transfers to a
//!   human (a tool named like `transfer_to_human_agents`);
//! - **multi-intent**: tagged `multi-intent`, and the gold actions change
//!   the state with at least two different tools.
//!
//! *Multi-intent*, precisely: the user comes with two requests that each
//! need their own change, which the gold actions show as state changes made
//! by two different tools (cancel one order and return items of another;
//! change an address and cancel an order). A write is a gold action after
//! which the session's state differs from before it, so no list of write
//! tools is needed. Reads do not count (every task reads), and two calls of
//! one tool (returns from two orders) are one kind of request. A scenario
//! tagged `multi-intent` is held to this whatever its brief, so coverage
//! counts only real ones.

use serde_json::Value;

use crate::config::synth::diversity::{
    is_transfer_tool, MULTI_INTENT_TAG, REFUSAL_TAG, TRANSFER_TAG,
};
use crate::env::{Environment, InitialState, ToolCall};
use crate::persona::scenario::Scenario;

use super::brief::{Outcome, ProposalBrief};
use super::stage::{Rejection, Stage};

/// Check `scenario` against `brief`; `state_changed` says whether its gold
/// actions changed the state. Every unmet part in one reason.
pub async fn check_brief(
    environment: &dyn Environment,
    scenario: &Scenario,
    brief: &ProposalBrief,
    state_changed: bool,
) -> Result<(), Rejection> {
    let transfer_tools: Vec<&str> = environment
        .tools()
        .iter()
        .map(|t| t.name.as_str())
        .filter(|name| is_transfer_tool(name))
        .collect();
    let mut reasons = unmet(scenario, brief, state_changed, &transfer_tools);
    if brief.multi_intent || has_tag(scenario, MULTI_INTENT_TAG) {
        let writes = write_tools(environment, scenario).await?;
        if let Some(reason) = single_intent(brief, &writes) {
            reasons.push(reason);
        }
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(Rejection::new(Stage::Brief, reasons.join("; ")))
    }
}

pub fn has_tag(scenario: &Scenario, tag: &str) -> bool {
    scenario
        .tags
        .iter()
        .any(|t| t.trim().eq_ignore_ascii_case(tag))
}

fn quoted(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("\"{i}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every part of `brief` the scenario does not meet, but multi-intent's
/// state changes (which need a replay): each as a sentence saying what is
/// asked, what the scenario has, and what to do.
pub fn unmet(
    scenario: &Scenario,
    brief: &ProposalBrief,
    state_changed: bool,
    transfer_tools: &[&str],
) -> Vec<String> {
    let mut reasons = Vec::new();
    let called: Vec<&str> = scenario
        .evaluation
        .actions
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    let calls = if called.is_empty() {
        "none".to_string()
    } else {
        called.join(", ")
    };
    for tool in &brief.tools {
        if !called.contains(&tool.as_str()) {
            reasons.push(format!(
                "the brief asks for a task whose gold actions call {tool}, but none does (they \
                 call: {calls}); choose a task that needs {tool}"
            ));
        }
    }
    if let Some(wanted) = &brief.difficulty {
        let has = scenario.difficulty.as_deref().map(str::trim);
        if !has.is_some_and(|d| d.eq_ignore_ascii_case(wanted.trim())) {
            let has = has.map_or("not set".to_string(), |d| format!("\"{d}\""));
            let article = match wanted.trim().chars().next() {
                Some(c) if "aeiouAEIOU".contains(c) => "an",
                _ => "a",
            };
            reasons.push(format!(
                "the brief asks for {article} {wanted} task, but the scenario's difficulty is \
                 {has}; make the task {wanted} and set \"difficulty\": \"{wanted}\""
            ));
        }
    }
    let missing: Vec<&str> = brief
        .tags
        .iter()
        .filter(|t| !has_tag(scenario, t))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        let tags: Vec<&str> = scenario.tags.iter().map(String::as_str).collect();
        reasons.push(format!(
            "the brief asks for a task about {}, but the scenario's tags ({}) lack {}; make the \
             task about {} and add the {}",
            missing.join(" and "),
            quoted(&tags),
            quoted(&missing),
            if missing.len() == 1 { "it" } else { "them" },
            if missing.len() == 1 { "tag" } else { "tags" },
        ));
    }
    let transfers: Vec<&str> = called
        .iter()
        .copied()
        .filter(|name| is_transfer_tool(name))
        .collect();
    let transfer = match transfer_tools {
        [] => "a transfer tool (the environment has none)".to_string(),
        tools => tools.join(" or "),
    };
    match brief.outcome {
        None => {}
        Some(Outcome::Resolve) => {
            for tag in [REFUSAL_TAG, TRANSFER_TAG] {
                if has_tag(scenario, tag) {
                    reasons.push(format!(
                        "the brief asks for a request the agent completes itself, but the \
                         scenario is tagged \"{tag}\"; propose a request the policy allows and \
                         the tools can do"
                    ));
                }
            }
            if let Some(t) = transfers.first() {
                reasons.push(format!(
                    "the brief asks for a request the agent completes itself, but a gold action \
                     transfers to a human ({t}); propose a request the tools can do, without \
                     the transfer"
                ));
            }
        }
        Some(Outcome::Refusal) => {
            if !has_tag(scenario, REFUSAL_TAG) {
                reasons.push(format!(
                    "the brief asks for a request the policy forbids, which the agent refuses, \
                     but the scenario is not tagged \"{REFUSAL_TAG}\"; propose such a request \
                     and tag it \"{REFUSAL_TAG}\""
                ));
            }
            if state_changed {
                reasons.push(
                    "the brief asks for a refusal, but the gold actions change the state; a \
                     refusal's gold actions only look things up"
                        .to_string(),
                );
            }
            if let Some(t) = transfers.first() {
                reasons.push(format!(
                    "the brief asks for a refusal, but a gold action transfers to a human ({t}); \
                     the agent refuses itself, drop the transfer"
                ));
            }
        }
        Some(Outcome::Transfer) => {
            if !called.last().is_some_and(|last| is_transfer_tool(last)) {
                reasons.push(format!(
                    "the brief asks for a request the agent must hand to a human, but the last \
                     gold action is {}, not {transfer}; propose a request outside what the \
                     tools and policy allow (e.g. a damaged-item claim) and end the gold \
                     actions with {transfer}",
                    called.last().unwrap_or(&"missing (there are none)")
                ));
            }
            if !has_tag(scenario, TRANSFER_TAG) {
                reasons.push(format!(
                    "the brief asks for a transfer to a human, but the scenario is not tagged \
                     \"{TRANSFER_TAG}\"; tag it \"{TRANSFER_TAG}\""
                ));
            }
        }
    }
    if brief.multi_intent && !has_tag(scenario, MULTI_INTENT_TAG) {
        reasons.push(format!(
            "the brief asks for a user with two requests, but the scenario is not tagged \
             \"{MULTI_INTENT_TAG}\"; give the user two requests and tag it \
             \"{MULTI_INTENT_TAG}\""
        ));
    }
    reasons
}

/// Why the scenario is not multi-intent, from the tools whose gold calls
/// changed the state (`writes`, in order, each once); `None` when it is.
pub fn single_intent(brief: &ProposalBrief, writes: &[String]) -> Option<String> {
    let made = match writes {
        [] => "no change at all".to_string(),
        [one] => format!("changes with one tool only ({one})"),
        _ => return None,
    };
    let (who, or_else) = if brief.multi_intent {
        ("the brief asks for a user with two requests", "")
    } else {
        (
            "the scenario is tagged \"multi-intent\"",
            ", or drop the tag",
        )
    };
    Some(format!(
        "{who}, but its gold actions make {made}; two requests means state changes by at \
         least two different tools (e.g. cancel one order and return items of another), so \
         add the second request and its change{or_else}"
    ))
}

/// The tools whose gold calls change the state, in order, each once: the
/// gold actions replayed on a fresh session with the state compared around
/// each call.
pub async fn write_tools(
    environment: &dyn Environment,
    scenario: &Scenario,
) -> Result<Vec<String>, Rejection> {
    let replay_error = |e: String| Rejection::new(Stage::Execution, format!("replay: {e}"));
    let init = InitialState {
        seed: 0,
        data: scenario.initial_state.clone(),
    };
    let mut session = environment
        .open(&init)
        .await
        .map_err(|e| replay_error(e.to_string()))?;
    let mut before: Value = session
        .state()
        .await
        .map_err(|e| replay_error(e.to_string()))?
        .unwrap_or(Value::Null);
    let mut writes: Vec<String> = Vec::new();
    for (i, action) in scenario.evaluation.actions.iter().enumerate() {
        let call = ToolCall {
            id: format!("gold_{i}"),
            name: action.name.clone(),
            arguments: action.arguments.to_string(),
        };
        session
            .call_by(action.caller, &call)
            .await
            .map_err(|e| replay_error(e.to_string()))?;
        let after = session
            .state()
            .await
            .map_err(|e| replay_error(e.to_string()))?
            .unwrap_or(Value::Null);
        if after != before && !writes.contains(&action.name) {
            writes.push(action.name.clone());
        }
        before = after;
    }
    Ok(writes)
}

#[cfg(test)]
#[path = "brief_check_tests.rs"]
mod tests;
