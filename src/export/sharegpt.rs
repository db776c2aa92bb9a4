//! `--format sharegpt`: LLaMA-Factory's ShareGPT format (its data README).
//! One line per conversation:
//!
//! - `conversations`: `{from, value}` turns, `from` one of `human`, `gpt`,
//!   `function_call` and `observation`; human or observation turns at odd
//!   positions (1st, 3rd, ...), gpt or function_call turns at even ones,
//!   ending on the policy (an even count);
//! - a `function_call` value is the JSON text of `{"name", "arguments"}`
//!   (arguments an object), or of a list of them for parallel calls; the
//!   results of parallel calls are one `observation`, joined by newlines;
//! - `system` (the system prompt, `""` without one) and `tools` (the JSON text
//!   of the list of `{name, description, parameters}`, `""` without tools)
//!   at the top level, and `metadata`.
//!
//! ShareGPT begins with a human turn, so the configured greeting of a job
//! whose agent opens (`[user_simulator] opens = "agent"`, written by sparring,
//! not by the policy) is left out. Text the policy wrote beside its tool
//! calls has no place in a `function_call` turn and is left out too. A conversation that cannot take
//! this shape (a user turn right after a tool result, two replies in a row,
//! a system message after the start, tool-call arguments that are not an
//! object) is left out, as LLaMA-Factory itself would drop it.

use serde_json::{json, Value};

use super::{hf, openai, trim, ExportError, Skip};
use crate::store::StoredConversation;

pub fn line(c: &StoredConversation, metadata: Value) -> Result<Result<Value, Skip>, ExportError> {
    let chat = match hf::messages(&openai::messages(c)?) {
        Ok(chat) => chat,
        Err(skip) => return Ok(Err(skip)),
    };
    let chat = trim::to_last_policy_reply(&chat);
    if chat.is_empty() {
        return Ok(Err(Skip::NoPolicyReply));
    }
    let (system, rest) = match chat.split_first() {
        Some((first, rest)) if trim::role(first) == "system" => {
            (first["content"].as_str().unwrap_or_default(), rest)
        }
        _ => ("", chat),
    };
    let Some((conversations, weights)) = turns(rest) else {
        return Ok(Err(Skip::NotShareGpt));
    };
    let mut metadata = metadata;
    metadata["assistant_weights"] = json!(weights);
    let tools: Vec<Value> = openai::tools(c)
        .into_iter()
        .map(|tool| tool["function"].clone())
        .collect();
    let tools = if tools.is_empty() {
        String::new()
    } else {
        Value::Array(tools).to_string()
    };
    Ok(Ok(json!({
        "conversations": conversations,
        "system": system,
        "tools": tools,
        "metadata": metadata,
    })))
}

/// The turns of `hf`-shaped messages (no system message), with the weight
/// of each gpt or function_call turn (1 when the policy wrote it), or
/// `None` when they do not alternate as LLaMA-Factory requires.
fn turns(messages: &[Value]) -> Option<(Vec<Value>, Vec<u8>)> {
    let mut turns: Vec<(&str, String)> = Vec::new();
    let mut weights = Vec::new();
    // The greeting before the user's first message.
    let opening = messages
        .iter()
        .take_while(|m| trim::role(m) == "assistant")
        .count();
    for m in &messages[opening..] {
        let (from, value) = match trim::role(m) {
            "user" => ("human", m["content"].as_str()?.to_string()),
            "tool" => ("observation", m["content"].as_str()?.to_string()),
            "assistant" => {
                weights.push(u8::from(trim::is_policy_reply(m)));
                match m["tool_calls"].as_array() {
                    Some(calls) if !calls.is_empty() => ("function_call", function_call(calls)),
                    _ => ("gpt", m["content"].as_str().unwrap_or_default().to_string()),
                }
            }
            _ => return None,
        };
        match turns.last_mut() {
            // The results of one step's parallel calls are one observation.
            Some((last, text)) if from == "observation" && *last == "observation" => {
                text.push('\n');
                text.push_str(&value);
            }
            _ => turns.push((from, value)),
        }
    }
    let alternates = turns.iter().enumerate().all(|(i, (from, _))| {
        if i % 2 == 0 {
            matches!(*from, "human" | "observation")
        } else {
            matches!(*from, "gpt" | "function_call")
        }
    });
    (alternates && !turns.is_empty() && turns.len().is_multiple_of(2)).then(|| {
        let turns = turns
            .into_iter()
            .map(|(from, value)| json!({"from": from, "value": value}))
            .collect();
        (turns, weights)
    })
}

fn function_call(calls: &[Value]) -> String {
    let calls: Vec<Value> = calls
        .iter()
        .map(|c| json!({"name": c["function"]["name"], "arguments": c["function"]["arguments"]}))
        .collect();
    match calls.as_slice() {
        [one] => one.to_string(),
        _ => Value::Array(calls).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(role: &str, content: &str) -> Value {
        json!({"role": role, "content": content, "tool_calls": null, "tool_call_id": null})
    }

    fn calls(names: &[&str]) -> Value {
        let calls: Vec<Value> = names
            .iter()
            .map(|n| json!({"id": n, "type": "function", "function": {"name": n, "arguments": {"id": 1}}}))
            .collect();
        json!({"role": "assistant", "content": null, "tool_calls": calls, "tool_call_id": null})
    }

    #[test]
    fn parallel_calls_are_one_function_call_and_their_results_one_observation() {
        let messages = [
            msg("user", "where are my orders?"),
            calls(&["get_a", "get_b"]),
            msg("tool", "a"),
            msg("tool", "b"),
            msg("assistant", "both shipped"),
        ];
        let (turns, weights) = turns(&messages).unwrap();
        assert_eq!(weights, [1, 1]);
        let from: Vec<&str> = turns.iter().map(|t| t["from"].as_str().unwrap()).collect();
        assert_eq!(from, ["human", "function_call", "observation", "gpt"]);
        let call: Value = serde_json::from_str(turns[1]["value"].as_str().unwrap()).unwrap();
        assert_eq!(call[1], json!({"name": "get_b", "arguments": {"id": 1}}));
        assert_eq!(turns[2]["value"], "a\nb");
        let single = turns_of(&[msg("user", "x"), calls(&["get_a"])]);
        let call: Value = serde_json::from_str(single[1]["value"].as_str().unwrap()).unwrap();
        assert_eq!(call, json!({"name": "get_a", "arguments": {"id": 1}}));
    }

    #[test]
    fn the_greeting_before_the_first_user_message_is_left_out() {
        let messages = [
            msg("assistant", "Hi! How can I help?"),
            msg("user", "x"),
            msg("assistant", "y"),
        ];
        let from: Vec<Value> = turns_of(&messages)
            .iter()
            .map(|t| t["from"].clone())
            .collect();
        assert_eq!(from, ["human", "gpt"]);
        assert!(turns(&[msg("assistant", "hello")]).is_none());
    }

    fn turns_of(messages: &[Value]) -> Vec<Value> {
        turns(messages).unwrap().0
    }

    #[test]
    fn turns_that_do_not_alternate_are_refused() {
        // A user turn right after a tool result.
        assert!(turns(&[
            msg("user", "x"),
            calls(&["get_a"]),
            msg("tool", "a"),
            msg("user", "y")
        ])
        .is_none());
        // Two replies in a row.
        assert!(turns(&[
            msg("user", "x"),
            msg("assistant", "a"),
            msg("assistant", "b")
        ])
        .is_none());
        // The policy speaks right after a tool result.
        assert!(turns(&[
            msg("user", "x"),
            calls(&["get_a"]),
            msg("tool", "a"),
            msg("tool", "b"),
            msg("user", "y")
        ])
        .is_none());
        assert!(turns(&[msg("system", "s")]).is_none());
    }
}
