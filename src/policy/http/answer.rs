//! Reading an agent's answer as `[policy.http]` describes it: a JSON
//! document, the reply's text at the `reply` pointer (a string, or content
//! parts whose texts are joined), and at the optional `trace` pointer a list
//! of what the agent did (OpenAI chat messages, LangChain messages or
//! Responses items, read by [`crate::policy::reply::tool_records`]). A trace
//! that is absent or `null` is no tool use; anything else that does not fit
//! is a malformed answer, with the pointer and what was found there.

use serde_json::Value;

use crate::config::policy::resolve;
use crate::policy::reply::{text_of, tool_records};
use crate::sim::policy::AgentToolRecord;

/// What one answer said and did.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub trace: Vec<AgentToolRecord>,
}

/// Read `body` with the `reply` and `trace` pointers; an error is why the
/// answer is malformed, in words for the item's error.
pub fn read(body: &[u8], reply: &str, trace: Option<&str>) -> Result<Answer, String> {
    let document: Value = serde_json::from_slice(body).map_err(|e| {
        format!(
            "the agent's answer ({} bytes) is not JSON: {e}; [policy.http] reads a JSON answer",
            body.len()
        )
    })?;
    let Some(at_reply) = resolve(&document, reply).filter(|v| !v.is_null()) else {
        return Err(format!(
            "the agent's answer has no reply at policy.http.reply = {reply:?}: {}",
            where_missing(&document, reply)
        ));
    };
    let text = reply_text(at_reply).ok_or_else(|| {
        format!(
            "policy.http.reply = {reply:?} points at {}, not text (a string or a list of \
             content parts with text)",
            kind_of(at_reply)
        )
    })?;
    let trace = match trace.and_then(|pointer| resolve(&document, pointer).map(|v| (pointer, v))) {
        None | Some((_, Value::Null)) => Vec::new(),
        Some((_, Value::Array(items))) => tool_records(items),
        Some((pointer, other)) => {
            return Err(format!(
                "policy.http.trace = {pointer:?} points at {}, not a list of messages or items",
                kind_of(other)
            ))
        }
    };
    Ok(Answer { text, trace })
}

/// A string, or content parts: strings and objects, each object's `text`
/// kept (a part without text, such as a tool-use part, adds nothing).
fn reply_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let mut text = String::new();
            for part in parts {
                match part {
                    Value::String(s) => text.push_str(s),
                    Value::Object(fields) => {
                        if let Some(t) = fields.get("text").filter(|t| !t.is_object()) {
                            text.push_str(&text_of(t));
                        }
                    }
                    _ => return None,
                }
            }
            Some(text)
        }
        _ => None,
    }
}

/// What a value is, for messages.
fn kind_of(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(_) => "a number".into(),
        Value::String(_) => "a string".into(),
        Value::Array(items) => format!("a list of {} items", items.len()),
        Value::Object(_) => "an object".into(),
    }
}

/// Where `pointer` stops in `document`, and what is there instead.
fn where_missing(document: &Value, pointer: &str) -> String {
    let mut at = document;
    let mut walked = String::new();
    for token in pointer.split('/').skip(1) {
        let Some(next) = resolve(at, &format!("/{token}")) else {
            let shown = if walked.is_empty() {
                "the answer".to_string()
            } else {
                format!("{walked:?}")
            };
            let there = match at {
                Value::Object(fields) if fields.is_empty() => "an empty object".to_string(),
                Value::Object(fields) => {
                    let keys: Vec<&str> = fields.keys().take(12).map(String::as_str).collect();
                    let more = if fields.len() > keys.len() {
                        ", ..."
                    } else {
                        ""
                    };
                    format!("an object with keys {}{more}", keys.join(", "))
                }
                other => kind_of(other),
            };
            return format!("{shown} is {there}, with nothing at {token:?}");
        };
        walked.push('/');
        walked.push_str(token);
        at = next;
    }
    format!("{pointer:?} is null")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn read_json(v: Value, reply: &str, trace: Option<&str>) -> Result<Answer, String> {
        read(v.to_string().as_bytes(), reply, trace)
    }

    #[test]
    fn a_langgraph_threads_last_message_is_the_reply_and_its_messages_the_trace() {
        let answer = read_json(
            json!({"messages": [
                {"type": "human", "content": "where is W1?"},
                {"type": "ai", "content": "", "tool_calls": [{"id": "t1", "name": "get_order", "args": {"id": "W1"}}]},
                {"type": "tool", "tool_call_id": "t1", "content": "shipped"},
                {"type": "ai", "content": [{"type": "text", "text": "It "}, {"type": "text", "text": "shipped."}]}
            ]}),
            "/messages/-1/content",
            Some("/messages"),
        )
        .unwrap();
        assert_eq!(answer.text, "It shipped.");
        assert_eq!(answer.trace.len(), 1);
        assert_eq!(answer.trace[0].call.name, "get_order");
        assert_eq!(answer.trace[0].call.arguments, "{\"id\":\"W1\"}");
        assert_eq!(answer.trace[0].output, "shipped");
    }

    #[test]
    fn a_missing_or_null_trace_is_no_tool_use_and_a_trace_of_another_shape_is_malformed() {
        let answer = read_json(json!({"reply": "hi"}), "/reply", Some("/calls")).unwrap();
        assert!(answer.trace.is_empty());
        let answer = read_json(
            json!({"reply": "hi", "calls": null}),
            "/reply",
            Some("/calls"),
        )
        .unwrap();
        assert!(answer.trace.is_empty());
        let error = read_json(
            json!({"reply": "hi", "calls": {"a": 1}}),
            "/reply",
            Some("/calls"),
        )
        .unwrap_err();
        assert!(
            error.contains("policy.http.trace = \"/calls\" points at an object"),
            "{error}"
        );
    }

    #[test]
    fn an_answer_that_is_not_json_or_has_no_reply_says_where_it_looked() {
        let error = read(b"<html>oops</html>", "/reply", None).unwrap_err();
        assert!(
            error.starts_with("the agent's answer (17 bytes) is not JSON"),
            "{error}"
        );
        let error = read_json(json!({"output": "x", "id": 1}), "/reply", None).unwrap_err();
        assert!(error.contains("policy.http.reply = \"/reply\""), "{error}");
        assert!(
            error.contains(
                "the answer is an object with keys id, output, with nothing at \"reply\""
            ),
            "{error}"
        );
        let error = read_json(json!({"messages": []}), "/messages/-1/content", None).unwrap_err();
        assert!(
            error.contains("\"/messages\" is a list of 0 items, with nothing at \"-1\""),
            "{error}"
        );
        let error = read_json(json!({"reply": null}), "/reply", None).unwrap_err();
        assert!(error.contains("\"/reply\" is null"), "{error}");
        let error = read_json(json!({"reply": 3}), "/reply", None).unwrap_err();
        assert!(error.contains("points at a number, not text"), "{error}");
        let error = read_json(json!({"reply": [1]}), "/reply", None).unwrap_err();
        assert!(error.contains("points at a list of 1 items"), "{error}");
    }

    #[test]
    fn content_parts_without_text_add_nothing() {
        let answer = read_json(
            json!({"reply": ["a", {"type": "tool_use", "id": "x"}, {"text": "b"}]}),
            "/reply",
            None,
        )
        .unwrap();
        assert_eq!(answer.text, "ab");
    }

    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            "[a-z~/ ]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("messages".to_string()),
                        Just("content".to_string()),
                        Just("text".to_string()),
                        Just("tool_calls".to_string()),
                        Just("type".to_string()),
                        Just("id".to_string()),
                        "[a-z]{1,4}"
                    ],
                    inner,
                    0..5
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn reading_any_json_answer_never_panics(
            document in any_json(),
            reply in prop_oneof![Just("/messages/-1/content".to_string()), Just(String::new()), "(/[a-z0-9~-]{0,5}){0,4}"],
            trace in proptest::option::of(prop_oneof![Just("/messages".to_string()), "(/[a-z0-9-]{0,4}){0,3}"]),
        ) {
            let _ = read_json(document, &reply, trace.as_deref());
        }

        #[test]
        fn reading_any_bytes_never_panics(body in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = read(&body, "/a/-1", Some("/b"));
        }
    }
}
