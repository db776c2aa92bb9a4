//! One reply of a Responses-API agent, read as NeMo Gym's `remote_agent`
//! contract reads it: a `function_call` with a `function_call_output` of the
//! same `call_id` in the same response is the agent's own tool record; a
//! `function_call` without one asks the caller (sparring) to run that tool;
//! an assistant `message` with no unpaired call ends the turn. Anything that
//! is not a Responses object (not a JSON object, no `output` list, an item
//! without its `type`, a call without `name` or `call_id`) is invalid, which
//! the contract makes a terminal failure.

use std::collections::HashSet;

use serde_json::Value;

use crate::env::ToolCall;
use crate::llm::Usage;
use crate::policy::reply::text_of;
use crate::sim::policy::AgentToolRecord;

/// What one reply says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Step {
    /// The agent's own tool use, in order.
    pub records: Vec<AgentToolRecord>,
    /// Tools the agent asks sparring to run, in order.
    pub asks: Vec<ToolCall>,
    /// The assistant messages' text, joined by blank lines (empty: none).
    pub text: String,
    /// Whether any assistant message was in the output.
    pub answered: bool,
    /// The reply's `usage`, where it gave one.
    pub usage: Usage,
    /// `incomplete_details` was set: the agent stopped short.
    pub incomplete: bool,
}

/// Read one reply body.
pub fn read(body: &[u8]) -> Result<Step, String> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| format!("the agent's reply is not JSON ({e})"))?;
    let Some(object) = value.as_object() else {
        return Err("the agent's reply is not a Responses object (a JSON object)".into());
    };
    if let Some(error) = object.get("error").filter(|e| !e.is_null()) {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map(|m| m.chars().take(200).collect::<String>())
            .unwrap_or_else(|| "no message".into());
        return Err(format!("the agent's reply carries an error: {message}"));
    }
    let Some(output) = object.get("output").and_then(Value::as_array) else {
        return Err(
            "the agent's reply has no `output` list, so it is not a Responses object".into(),
        );
    };
    let answered_ids: HashSet<&str> = output
        .iter()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("function_call_output"))
        .filter_map(|i| i.get("call_id").and_then(Value::as_str))
        .collect();
    let mut step = Step {
        incomplete: object
            .get("incomplete_details")
            .is_some_and(|d| !d.is_null()),
        usage: usage_of(object.get("usage")),
        ..Step::default()
    };
    let mut texts = Vec::new();
    for (i, item) in output.iter().enumerate() {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("output item {i} has no `type`"))?;
        match kind {
            "function_call" => {
                let field = |name: &str| {
                    item.get(name).and_then(Value::as_str).ok_or_else(|| {
                        format!("output item {i} (function_call) has no `{name}` string")
                    })
                };
                let call = ToolCall {
                    id: field("call_id")?.to_string(),
                    name: field("name")?.to_string(),
                    arguments: match item.get("arguments") {
                        Some(Value::String(a)) => a.clone(),
                        None | Some(Value::Null) => "{}".into(),
                        Some(other) => other.to_string(),
                    },
                };
                if answered_ids.contains(call.id.as_str()) {
                    step.records.push(AgentToolRecord {
                        call,
                        output: String::new(),
                    });
                } else {
                    step.asks.push(call);
                }
            }
            "function_call_output" => {
                let id = item.get("call_id").and_then(Value::as_str).ok_or_else(|| {
                    format!("output item {i} (function_call_output) has no `call_id`")
                })?;
                let output = item.get("output").map(text_of).unwrap_or_default();
                match step
                    .records
                    .iter_mut()
                    .find(|r| r.call.id == id && r.output.is_empty())
                {
                    Some(record) => record.output = output,
                    // An output before its call, or of a call of an earlier
                    // reply: kept as a record of an unnamed call would be
                    // wrong, so the contract's reading is strict.
                    None => {
                        return Err(format!(
                            "output item {i} answers call {id:?}, which no earlier function_call \
                             of this reply made"
                        ))
                    }
                }
            }
            "message"
                if item
                    .get("role")
                    .and_then(Value::as_str)
                    .unwrap_or("assistant")
                    == "assistant" =>
            {
                step.answered = true;
                let text = item.get("content").map(text_of).unwrap_or_default();
                if !text.trim().is_empty() {
                    texts.push(text);
                }
            }
            // Reasoning and any other item: not part of the conversation.
            _ => {}
        }
    }
    step.text = texts.join("\n\n");
    Ok(step)
}

fn usage_of(usage: Option<&Value>) -> Usage {
    let count = |key: &str| {
        usage
            .and_then(|u| u.get(key))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Usage {
        prompt_tokens: count("input_tokens"),
        completion_tokens: count("output_tokens"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn step(v: Value) -> Result<Step, String> {
        read(v.to_string().as_bytes())
    }

    #[test]
    fn pairs_are_records_unpaired_calls_are_asks_and_a_message_answers() {
        let s = step(json!({"id": "r", "object": "response", "output": [
            {"type": "function_call", "call_id": "own", "name": "get_order_status", "arguments": "{\"order_id\":\"A1\"}"},
            {"type": "function_call_output", "call_id": "own", "output": "{\"status\":\"pending\"}"},
            {"type": "function_call", "call_id": "ask", "name": "find_user", "arguments": "{}"},
            {"type": "reasoning", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking."}]}
        ], "usage": {"input_tokens": 7, "output_tokens": 3}}))
        .unwrap();
        assert_eq!(s.records.len(), 1);
        assert_eq!(s.records[0].call.name, "get_order_status");
        assert_eq!(s.records[0].output, "{\"status\":\"pending\"}");
        assert_eq!(s.asks.len(), 1);
        assert_eq!(s.asks[0].id, "ask");
        assert_eq!(s.text, "Looking.");
        assert!(s.answered && !s.incomplete);
        assert_eq!(
            s.usage,
            Usage {
                prompt_tokens: 7,
                completion_tokens: 3
            }
        );
    }

    #[test]
    fn what_is_not_a_responses_object_is_an_error_saying_why() {
        assert!(read(b"<html>").unwrap_err().contains("not JSON"));
        assert!(step(json!([1])).unwrap_err().contains("JSON object"));
        assert!(step(json!({"id": "r"})).unwrap_err().contains("`output`"));
        assert!(step(json!({"output": [{"name": "x"}]}))
            .unwrap_err()
            .contains("no `type`"));
        assert!(
            step(json!({"output": [{"type": "function_call", "call_id": "a"}]}))
                .unwrap_err()
                .contains("`name`")
        );
        assert!(step(
            json!({"output": [{"type": "function_call_output", "call_id": "z", "output": "o"}]})
        )
        .unwrap_err()
        .contains("\"z\""));
        assert!(step(json!({"output": [], "error": {"message": "boom"}}))
            .unwrap_err()
            .contains("boom"));
    }

    proptest! {
        #[test]
        fn any_json_reply_is_read_or_refused_without_a_panic(s in "\\PC{0,200}") {
            let _ = read(s.as_bytes());
            let wrapped = format!("{{\"output\": [{s}]}}");
            let _ = read(wrapped.as_bytes());
        }
    }
}
