//! Reading what an agent reports of its own tool use, in the shapes agents
//! write it: OpenAI chat messages (an assistant message's `tool_calls`, then
//! `tool` messages with `tool_call_id`), LangChain messages (`type: "ai"` with
//! `tool_calls: [{name, args, id}]`, then `type: "tool"`), and Responses API
//! items (`function_call` and `function_call_output` of one `call_id`), and
//! flat records a hand-written agent reports, each call with its own output
//! (`{"name", "arguments" or "args", "output", "id"}`, no `role` or `type`
//! but `tool_call`). Calls are paired with their outputs by id; a call
//! without an output is kept with an empty one (the agent did not report it).

use serde_json::Value;

use crate::env::ToolCall;
use crate::sim::policy::AgentToolRecord;

/// The tool calls `items` report, in order, each with its output.
pub fn tool_records(items: &[Value]) -> Vec<AgentToolRecord> {
    let mut records: Vec<AgentToolRecord> = Vec::new();
    let mut outputs: Vec<(String, String)> = Vec::new();
    for item in items {
        if let Some(record) = flat_record(item) {
            records.push(record);
            continue;
        }
        for call in calls_of(item) {
            records.push(AgentToolRecord {
                call,
                output: String::new(),
            });
        }
        if let Some(output) = output_of(item) {
            outputs.push(output);
        }
    }
    for (id, output) in outputs {
        if let Some(record) = records
            .iter_mut()
            .find(|r| r.call.id == id && r.output.is_empty())
        {
            record.output = output;
        }
    }
    records
}

/// A flat record: a call and its output in one object, neither a message
/// (no `role`, no `tool_calls`) nor an item of another kind.
fn flat_record(item: &Value) -> Option<AgentToolRecord> {
    let kind = item.get("type").and_then(Value::as_str);
    if item.get("role").is_some()
        || item.get("tool_calls").is_some()
        || !matches!(kind, None | Some("tool_call"))
    {
        return None;
    }
    let call = call(
        item.get("id").or_else(|| item.get("call_id")),
        item.get("name"),
        item.get("arguments").or_else(|| item.get("args")),
    )?;
    Some(AgentToolRecord {
        call,
        output: item.get("output").map(text_of).unwrap_or_default(),
    })
}

/// The calls one item makes.
fn calls_of(item: &Value) -> Vec<ToolCall> {
    let kind = item.get("type").and_then(Value::as_str);
    if kind == Some("function_call") {
        return call(
            item.get("call_id").or_else(|| item.get("id")),
            item.get("name"),
            item.get("arguments"),
        )
        .into_iter()
        .collect();
    }
    let Some(calls) = item.get("tool_calls").and_then(Value::as_array) else {
        return Vec::new();
    };
    calls
        .iter()
        .filter_map(|c| match c.get("function") {
            // OpenAI: {id, type: "function", function: {name, arguments}}
            Some(function) => call(c.get("id"), function.get("name"), function.get("arguments")),
            // LangChain: {id, name, args}
            None => call(
                c.get("id"),
                c.get("name"),
                c.get("args").or_else(|| c.get("arguments")),
            ),
        })
        .collect()
}

fn call(id: Option<&Value>, name: Option<&Value>, arguments: Option<&Value>) -> Option<ToolCall> {
    let name = name?.as_str()?.to_string();
    let arguments = match arguments {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    Some(ToolCall {
        id: id.map(text_of).unwrap_or_default(),
        name,
        arguments,
    })
}

/// A tool output: `(call id, text)`.
fn output_of(item: &Value) -> Option<(String, String)> {
    let kind = item.get("type").and_then(Value::as_str);
    let role = item.get("role").and_then(Value::as_str);
    if kind == Some("function_call_output") {
        let id = item.get("call_id").map(text_of)?;
        return Some((id, item.get("output").map(text_of).unwrap_or_default()));
    }
    if kind == Some("tool") || role == Some("tool") {
        let id = item.get("tool_call_id").map(text_of)?;
        return Some((id, item.get("content").map(text_of).unwrap_or_default()));
    }
    None
}

/// A string as it is, content parts joined, anything else as JSON.
pub fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(parts)
            if parts
                .iter()
                .all(|p| p.get("text").is_some() || p.is_string()) =>
        {
            parts
                .iter()
                .map(|p| match p.get("text") {
                    Some(t) => text_of(t),
                    None => text_of(p),
                })
                .collect::<Vec<_>>()
                .join("")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pairs(items: Value) -> Vec<(String, String, String, String)> {
        tool_records(items.as_array().unwrap())
            .into_iter()
            .map(|r| (r.call.id, r.call.name, r.call.arguments, r.output))
            .collect()
    }

    #[test]
    fn openai_chat_messages_pair_calls_with_their_tool_messages() {
        let got = pairs(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get", "arguments": "{\"a\":1}"}},
                {"id": "c2", "type": "function", "function": {"name": "put", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c2", "content": "ok2"},
            {"role": "tool", "tool_call_id": "c1", "content": "ok1"},
            {"role": "assistant", "content": "done"}
        ]));
        assert_eq!(
            got,
            vec![
                ("c1".into(), "get".into(), "{\"a\":1}".into(), "ok1".into()),
                ("c2".into(), "put".into(), "{}".into(), "ok2".into())
            ]
        );
    }

    #[test]
    fn langchain_messages_give_args_as_json_text() {
        let got = pairs(json!([
            {"type": "human", "content": "hi"},
            {"type": "ai", "content": "", "tool_calls": [{"name": "get", "args": {"id": "#1"}, "id": "t1"}]},
            {"type": "tool", "tool_call_id": "t1", "content": [{"type": "text", "text": "shipped"}]},
            {"type": "ai", "content": "It shipped."}
        ]));
        assert_eq!(
            got,
            vec![(
                "t1".into(),
                "get".into(),
                "{\"id\":\"#1\"}".into(),
                "shipped".into()
            )]
        );
    }

    #[test]
    fn flat_records_carry_their_own_output_and_messages_are_not_records() {
        let got = pairs(json!([
            {"id": "c1", "name": "get", "arguments": {"id": "#1"}, "output": "shipped"},
            {"name": "put", "args": {}, "type": "tool_call"},
            {"name": "get", "type": "tool", "tool_call_id": "zz", "content": "not a call"},
            {"role": "assistant", "name": "bot", "content": "hi"}
        ]));
        assert_eq!(
            got,
            vec![
                (
                    "c1".into(),
                    "get".into(),
                    "{\"id\":\"#1\"}".into(),
                    "shipped".into()
                ),
                (String::new(), "put".into(), "{}".into(), String::new())
            ]
        );
    }

    #[test]
    fn responses_items_pair_by_call_id_and_an_unanswered_call_keeps_an_empty_output() {
        let got = pairs(json!([
            {"type": "function_call", "call_id": "a", "name": "get", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "a", "output": "x"},
            {"type": "function_call", "call_id": "b", "name": "put", "arguments": "{}"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}
        ]));
        assert_eq!(got[0], ("a".into(), "get".into(), "{}".into(), "x".into()));
        assert_eq!(
            got[1],
            ("b".into(), "put".into(), "{}".into(), String::new())
        );
    }
}
