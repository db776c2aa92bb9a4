//! The `actions` component: the conversation's tool calls, whoever ran them
//! (sparring on its session, or an agent on its own tools and reported in its
//! trace), hold every gold action of the policy: each gold action matched by
//! a distinct call of the same name whose arguments equal the gold ones as
//! JSON (key order and spacing aside). Extra calls do not count against it;
//! order does not matter. This is how a black-box agent whose tools sparring
//! cannot read is verified.

use serde_json::Value;

use super::{Action, ComponentScore};
use crate::llm::message::{Message, Role};

/// Score `gold` (the policy's gold actions) against the calls in `messages`.
pub fn score(gold: &[Action], messages: &[Message]) -> ComponentScore {
    let calls: Vec<(&str, Option<Value>)> = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| m.tool_calls.iter())
        .map(|c| (c.name.as_str(), serde_json::from_str(&c.arguments).ok()))
        .collect();
    let gold: Vec<&Action> = gold.iter().filter(|a| a.caller.is_policy()).collect();
    let mut used = vec![false; calls.len()];
    let mut missing = Vec::new();
    for action in &gold {
        let wanted = normalized(&action.arguments);
        let found = calls.iter().enumerate().position(|(i, (name, args))| {
            !used[i]
                && *name == action.name
                && args.as_ref().map(normalized) == Some(wanted.clone())
        });
        match found {
            Some(i) => used[i] = true,
            None => missing.push(format!("{}({})", action.name, action.arguments)),
        }
    }
    let matched = gold.len() - missing.len();
    let detail = if missing.is_empty() {
        format!(
            "all {} gold actions among {} tool calls",
            gold.len(),
            calls.len()
        )
    } else {
        format!(
            "{matched} of {} gold actions among {} tool calls; missing {}",
            gold.len(),
            calls.len(),
            missing.join(", ")
        )
    };
    ComponentScore {
        score: if missing.is_empty() { 1.0 } else { 0.0 },
        detail,
    }
}

/// Gold arguments left out are `{}`, as a call without arguments sends them.
fn normalized(value: &Value) -> Value {
    match value {
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::ToolCall;
    use serde_json::json;

    fn gold(items: Value) -> Vec<Action> {
        serde_json::from_value(items).unwrap()
    }

    fn calls(calls: &[(&str, &str)]) -> Vec<Message> {
        let mut m = Message::assistant("");
        m.tool_calls = calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| ToolCall {
                id: format!("c{i}"),
                name: name.to_string(),
                arguments: args.to_string(),
            })
            .collect();
        vec![Message::user("hi"), m]
    }

    #[test]
    fn every_gold_action_needs_its_own_call_with_equal_arguments() {
        let g = gold(json!([
            {"name": "get", "arguments": {"id": "#1", "n": 2}},
            {"name": "cancel", "arguments": {"id": "#1"}}
        ]));
        let s = score(
            &g,
            &calls(&[
                ("get", r##"{"n":2, "id":"#1"}"##),
                ("cancel", r##"{"id":"#1"}"##),
                ("get", "{}"),
            ]),
        );
        assert_eq!(s.score, 1.0, "{}", s.detail);
        let s = score(
            &g,
            &calls(&[
                ("get", r##"{"id":"#1","n":2}"##),
                ("cancel", r##"{"id":"#2"}"##),
            ]),
        );
        assert_eq!(s.score, 0.0);
        assert!(
            s.detail.contains("1 of 2") && s.detail.contains("cancel"),
            "{}",
            s.detail
        );
        let twice = gold(json!([{"name": "get", "arguments": {}}, {"name": "get"}]));
        assert_eq!(score(&twice, &calls(&[("get", "{}")])).score, 0.0);
        assert_eq!(
            score(&twice, &calls(&[("get", "{}"), ("get", "{}")])).score,
            1.0
        );
        assert_eq!(score(&g, &calls(&[("get", "not json")])).score, 0.0);
    }

    #[test]
    fn the_users_gold_actions_are_not_the_policys() {
        let g = gold(json!([{"name": "toggle", "arguments": {}, "caller": "user"}]));
        assert_eq!(score(&g, &calls(&[])).score, 1.0);
    }
}
