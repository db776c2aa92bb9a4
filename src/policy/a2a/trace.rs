//! The tool calls an A2A agent reports, from the data parts of its answer.
//!
//! A2A has no tool-call part of its own; an agent that tells what it ran puts
//! it in a data part. Read here, in any of these shapes (a list of any of them
//! too):
//! - `{"tool_calls": [{"id", "name", "arguments", "output"}]}`: calls with
//!   their outputs inline (the shape of `tests/agents/a2a_agent.py`, an
//!   artifact named `tool_calls`); `arguments` an object or JSON text;
//! - an OpenAI chat message with `tool_calls` (`function: {name, arguments}`)
//!   and `tool` messages, LangChain messages (`type: "ai"` / `"tool"`), or
//!   Responses items (`function_call` / `function_call_output`), as
//!   [`crate::policy::reply::tool_records`] reads them;
//! - `{"messages": [...]}` of such messages (a LangGraph state).
//!
//! Data that looks like none of these is the agent's business, not a trace.

use serde_json::{json, Value};

use crate::policy::reply;
use crate::sim::policy::AgentToolRecord;

/// How deep lists and `messages` are looked into.
const MAX_DEPTH: usize = 4;

/// The tool records of an answer's data parts.
pub fn tool_records(data: &[Value]) -> Vec<AgentToolRecord> {
    let mut items = Vec::new();
    for value in data {
        collect(value, 0, &mut items);
    }
    reply::tool_records(&items)
}

/// The items of `value` that [`reply::tool_records`] reads, an inline output
/// becoming a `tool` message of its call's id.
fn collect(value: &Value, depth: usize, items: &mut Vec<Value>) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Array(values) => {
            for v in values {
                collect(v, depth + 1, items);
            }
        }
        Value::Object(object) => {
            if let Some(calls) = object.get("tool_calls").and_then(Value::as_array) {
                items.push(value.clone());
                for call in calls {
                    let output = call.get("output").or_else(|| call.get("result"));
                    if let Some(output) = output.filter(|o| !o.is_null()) {
                        let id = call.get("id").cloned().unwrap_or(json!(""));
                        items.push(json!({"role": "tool", "tool_call_id": id, "content": output}));
                    }
                }
                return;
            }
            let kind = object.get("type").and_then(Value::as_str);
            let role = object.get("role").and_then(Value::as_str);
            if matches!(
                kind,
                Some("function_call" | "function_call_output" | "tool")
            ) || role == Some("tool")
            {
                items.push(value.clone());
                return;
            }
            if let Some(messages) = object.get("messages") {
                collect(messages, depth + 1, items);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn any_trace() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<i64>().prop_map(|n| json!(n)),
            prop::sample::select(vec![
                "tool",
                "function_call",
                "function_call_output",
                "get",
                "c1",
                ""
            ])
            .prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(6, 64, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        prop::sample::select(vec![
                            "tool_calls",
                            "id",
                            "name",
                            "arguments",
                            "args",
                            "output",
                            "type",
                            "role",
                            "call_id",
                            "tool_call_id",
                            "content",
                            "messages",
                            "function"
                        ]),
                        inner
                    ),
                    0..5
                )
                .prop_map(|kv| Value::Object(
                    kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
                )),
            ]
        })
    }

    /// Objects in `value`, itself included.
    fn objects(value: &Value) -> usize {
        match value {
            Value::Object(map) => 1 + map.values().map(objects).sum::<usize>(),
            Value::Array(items) => items.iter().map(objects).sum(),
            _ => 0,
        }
    }

    proptest! {
        #[test]
        fn any_data_reads_without_panicking_and_each_record_is_an_object_of_it(
            data in prop::collection::vec(any_trace(), 0..3)
        ) {
            let records = tool_records(&data);
            prop_assert!(records.len() <= data.iter().map(objects).sum::<usize>());
        }
    }

    fn rows(data: Value) -> Vec<(String, String, String, String)> {
        tool_records(&[data])
            .into_iter()
            .map(|r| (r.call.id, r.call.name, r.call.arguments, r.output))
            .collect()
    }

    #[test]
    fn inline_outputs_pair_with_their_calls() {
        let got = rows(json!({"tool_calls": [
            {"id": "c1", "name": "get_order_status", "arguments": {"order_id": "#A1002"},
             "output": "{\"status\": \"shipped\"}"},
            {"id": "c2", "name": "cancel_order", "arguments": "{\"order_id\":\"#A1001\"}", "output": "ok"}
        ]}));
        assert_eq!(
            got,
            vec![
                (
                    "c1".into(),
                    "get_order_status".into(),
                    "{\"order_id\":\"#A1002\"}".into(),
                    "{\"status\": \"shipped\"}".into()
                ),
                (
                    "c2".into(),
                    "cancel_order".into(),
                    "{\"order_id\":\"#A1001\"}".into(),
                    "ok".into()
                )
            ]
        );
    }

    #[test]
    fn calls_without_ids_pair_in_order_and_structured_outputs_are_json_text() {
        let got = rows(json!({"tool_calls": [
            {"name": "a", "arguments": null, "output": {"x": 1}},
            {"name": "b", "output": "second"}
        ]}));
        assert_eq!(
            got[0],
            ("".into(), "a".into(), "{}".into(), "{\"x\":1}".into())
        );
        assert_eq!(
            got[1],
            ("".into(), "b".into(), "{}".into(), "second".into())
        );
    }

    #[test]
    fn message_lists_and_langgraph_states_are_read_and_other_data_is_not_a_trace() {
        let messages = json!([
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
                "function": {"name": "get", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "got"}
        ]);
        let expected = vec![("c".into(), "get".into(), "{}".into(), "got".into())];
        assert_eq!(rows(messages.clone()), expected);
        assert_eq!(rows(json!({"messages": messages})), expected);
        let items = json!([
            {"type": "function_call", "call_id": "r", "name": "put", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "r", "output": "done"}
        ]);
        assert_eq!(
            rows(items),
            vec![("r".into(), "put".into(), "{}".into(), "done".into())]
        );
        assert!(rows(json!({"order": {"status": "shipped"}, "tool": "x"})).is_empty());
        assert!(rows(json!([[[[[[{"tool_calls": [{"name": "deep"}]}]]]]]])).is_empty());
    }
}
