//! The checks' input rebuilt from what is stored: an imported
//! conversation's lines, what its user wrote before its control tokens were
//! cut (`user_outputs` in its metadata), its scenario and gold. Import uses
//! it as it stores a conversation, and `sparring recheck` to check a stored
//! one again.

use serde_json::{Map, Value};

use crate::persona::{Scenario, UserScenario};
use crate::prompt::{OUT_OF_SCOPE_TOKEN, STOP_TOKEN, TRANSFER_TOKEN};
use crate::verify::Criteria;

use super::input::{Line, Speaker, UserOutput, UserTurns};

/// The scenario the checks read of an imported conversation: its user's
/// part and its gold.
pub fn scenario_of(id: &str, user: Option<UserScenario>, evaluation: Option<Criteria>) -> Scenario {
    Scenario {
        id: id.to_string(),
        description: String::new(),
        difficulty: None,
        tags: Vec::new(),
        user: user.unwrap_or_default(),
        initial_state: Value::Null,
        evaluation: evaluation.unwrap_or_default(),
        prelude: Vec::new(),
        tools: None,
        probe: None,
    }
}

/// A stored message as the checks read it, with its tool calls' names.
pub fn stored_line(
    index: usize,
    role: &str,
    author: &str,
    content: &str,
    tool_calls: Option<&Value>,
) -> Line {
    let calls = tool_calls
        .into_iter()
        .flat_map(|calls| calls.as_array().into_iter().flatten())
        .filter_map(|call| call.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    Line::new(index, role, author, content, calls)
}

/// The conversation the checks look at, from an import's stored lines and
/// metadata: what the simulated user wrote before its control tokens were
/// cut (`user_outputs`, at the stored messages' indexes: the system prompt,
/// when there is one, comes first), and whether it ended with ###STOP###.
pub fn imported_turns(
    lines: Vec<Line>,
    metadata: &Map<String, Value>,
    has_system: bool,
    simulated_user: bool,
) -> UserTurns {
    let offset = usize::from(has_system);
    let recorded = metadata.get("user_outputs").and_then(Value::as_array);
    let outputs = recorded
        .into_iter()
        .flatten()
        .filter_map(|o| {
            Some(UserOutput {
                message: o
                    .get("message")
                    .and_then(Value::as_u64)
                    .map(|i| i as usize + offset),
                raw: o.get("raw")?.as_str()?.to_string(),
                finish_reason: None,
            })
        })
        .collect();
    // What its last output says, or (none recorded) the source's
    // termination. tau2 records a ###TRANSFER### as `user_stop` too.
    let last_raw = recorded
        .and_then(|o| o.last())
        .and_then(|o| o.get("raw"))
        .and_then(Value::as_str);
    let last_user = lines.iter().rev().find(|l| l.speaker == Speaker::User);
    let user_stopped = match last_raw {
        Some(raw) if raw.contains(STOP_TOKEN) => true,
        Some(raw) if raw.contains(TRANSFER_TOKEN) || raw.contains(OUT_OF_SCOPE_TOKEN) => false,
        _ => {
            last_user.is_some_and(|l| l.text.contains(STOP_TOKEN))
                || metadata.get("termination_reason").and_then(Value::as_str) == Some("user_stop")
        }
    };
    UserTurns {
        lines,
        outputs,
        user_stopped,
        simulated_user,
    }
}
