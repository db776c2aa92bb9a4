//! Scoring a retail conversation: the `db` component replays the scenario's
//! gold actions on a fresh state and compares it with the state
//! the policy left; `communicate` checks the required facts were said.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::db::Database;
use super::tools::run_call;
use crate::env::{EnvError, Message, ToolCall, ToolSpec};
use crate::verify::{communicate, Component, ComponentScore, Criteria, Verification};

/// Replay `criteria.actions` on `fresh` (the state the conversation started
/// from). A gold action that fails is a bug of the scenario, not of the policy.
pub fn replay_gold(
    tools: &[ToolSpec],
    fresh: Arc<Database>,
    criteria: &Criteria,
) -> Result<Arc<Database>, EnvError> {
    let mut gold = fresh;
    for (index, action) in criteria.actions.iter().enumerate() {
        let arguments = match &action.arguments {
            Value::Null => "{}".to_string(),
            other => other.to_string(),
        };
        let call = ToolCall {
            id: format!("gold-{index}"),
            name: action.name.clone(),
            arguments,
        };
        let output = run_call(tools, &mut gold, &call);
        if output.is_error {
            return Err(EnvError::Verification(format!(
                "the scenario's gold action evaluation.actions[{index}] ({}) fails on a fresh session: {}",
                action.name, output.content
            )));
        }
    }
    Ok(gold)
}

/// Structural equality, not a hash of serialized text: the same verdict (money
/// is whole cents, maps are ordered), without serializing the whole store twice
/// per conversation, which was a third of the CPU at a thousand calls a second.
pub fn db_score(actual: &Database, gold: &Database) -> ComponentScore {
    if actual == gold {
        ComponentScore {
            score: 1.0,
            detail: "state matches gold".to_string(),
        }
    } else {
        ComponentScore {
            score: 0.0,
            detail: format!(
                "state differs from gold: {}",
                actual.differences(gold).join("; ")
            ),
        }
    }
}

pub fn verify(
    tools: &[ToolSpec],
    fresh: Arc<Database>,
    actual: &Database,
    messages: &[Message],
    criteria: &Criteria,
) -> Result<Verification, EnvError> {
    let gold = replay_gold(tools, fresh, criteria)?;
    let mut components = BTreeMap::new();
    components.insert(Component::Db, db_score(actual, &gold));
    components.insert(
        Component::Communicate,
        communicate::score(messages, &criteria.communicate),
    );
    Ok(Verification::combine(&criteria.reward_basis, components))
}
