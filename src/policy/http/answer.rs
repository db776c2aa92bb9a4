//! Reading an agent's answer as `[policy.http]` describes it: a JSON
//! document (or Server-Sent Events, `text/event-stream`: the list of their
//! events' JSON, as ADK's `/run_sse` answers), the reply's text at the
//! `reply` pointer (a string, or content parts whose texts are joined), at
//! the optional `trace` pointer what the agent did, read in the named shape
//! ([`crate::policy::trace`]), and its token usage at the `usage` pointer or
//! where the answer's shape puts it ([`crate::policy::usage`]). A trace that
//! is absent or `null` is no tool use; anything else that does not fit is a
//! malformed answer, with the pointer and what was found there.

use serde_json::Value;

use super::pointer::resolve;
use crate::config::policy::http::TraceAt;
use crate::llm::Usage;
use crate::policy::reply::text_of;
use crate::policy::trace::unread;
use crate::policy::{sse, trace, usage};
use crate::sim::policy::AgentToolRecord;

/// What one answer said and did.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub trace: Vec<AgentToolRecord>,
    pub usage: Option<Usage>,
    /// Where the answer holds tool use of a shape an agent reports it in
    /// (`functionCall`, `tool_calls`, ...), if anywhere: a trace that reads
    /// none while the answer holds some is worth a warning.
    pub tool_use_at: Option<String>,
}

/// How to read an answer.
#[derive(Debug, Clone, Copy)]
pub struct Pointers<'a> {
    pub reply: &'a str,
    pub trace: Option<&'a TraceAt>,
    pub usage: Option<&'a str>,
}

/// The answer's JSON: the body, or the list of its events' JSON when it is
/// an event stream (a `[DONE]` event ends one and is not an event).
pub fn document(body: &[u8], content_type: Option<&str>) -> Result<Value, String> {
    if sse::is_event_stream(content_type) {
        let text = String::from_utf8_lossy(body);
        let mut events = Vec::new();
        for (i, data) in sse::event_data(&text).into_iter().enumerate() {
            if data.trim() == "[DONE]" {
                continue;
            }
            events.push(serde_json::from_str(&data).map_err(|e| {
                format!(
                    "event {} of the agent's event stream is not JSON: {e}; [policy.http] reads \
                     events of JSON",
                    i + 1
                )
            })?);
        }
        return Ok(Value::Array(events));
    }
    serde_json::from_slice(body).map_err(|e| {
        format!(
            "the agent's answer ({} bytes) is not JSON: {e}; [policy.http] reads a JSON answer",
            body.len()
        )
    })
}

/// Read `body` (of `content_type`) with `pointers`; an error is why the
/// answer is malformed, in words for the item's error.
pub fn read(
    body: &[u8],
    content_type: Option<&str>,
    pointers: Pointers<'_>,
) -> Result<Answer, String> {
    let document = document(body, content_type)?;
    let reply = pointers.reply;
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
    let at = pointers
        .trace
        .and_then(|t| resolve(&document, &t.pointer).map(|v| (t, v)));
    let trace = match at {
        None | Some((_, Value::Null)) => Vec::new(),
        Some((t, Value::Array(items))) => trace::read(items, t.format),
        // One event, message or state (`{"messages": [...]}`).
        Some((t, object @ Value::Object(_))) => trace::read(std::slice::from_ref(object), t.format),
        Some((t, other)) => {
            return Err(format!(
                "policy.http.trace = {:?} points at {}, not a list of messages or items (nor \
                 one of them)",
                t.pointer,
                kind_of(other)
            ))
        }
    };
    let usage = match pointers.usage {
        Some(pointer) => match resolve(&document, pointer) {
            Some(Value::Array(items)) => {
                items.iter().filter_map(usage::of_object).reduce(usage::add)
            }
            Some(found) => usage::of_object(found),
            None => None,
        },
        None => usage::of_answer(&document),
    };
    Ok(Answer {
        text,
        trace,
        usage,
        tool_use_at: unread::tool_use_at(&document),
    })
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
        let trace = trace.map(|pointer| TraceAt {
            pointer: pointer.to_string(),
            format: Default::default(),
        });
        read(
            v.to_string().as_bytes(),
            None,
            Pointers {
                reply,
                trace: trace.as_ref(),
                usage: None,
            },
        )
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
            json!({"reply": "hi", "calls": "get_order"}),
            "/reply",
            Some("/calls"),
        )
        .unwrap_err();
        assert!(
            error.contains("policy.http.trace = \"/calls\" points at a string"),
            "{error}"
        );
        // An object is one item: a state of messages reads as its messages.
        let state = json!({"reply": "hi", "state": {"messages": [
            {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "get", "arguments": "{}"}}]}]}});
        assert_eq!(
            read_json(state, "/reply", Some("/state"))
                .unwrap()
                .trace
                .len(),
            1
        );
    }

    #[test]
    fn an_answer_that_is_not_json_or_has_no_reply_says_where_it_looked() {
        let error = read(
            b"<html>oops</html>",
            None,
            Pointers {
                reply: "/reply",
                trace: None,
                usage: None,
            },
        )
        .unwrap_err();
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
    fn adks_run_events_give_the_last_events_text_the_calls_the_usage_and_where_tool_use_is() {
        let events = json!([
            {"content": {"parts": [{"functionCall": {"id": "c", "args": {"order_id": "#A1002"},
                "name": "get_order_status"}}], "role": "model"},
             "usageMetadata": {"candidatesTokenCount": 10, "promptTokenCount": 167}, "invocationId": "e"},
            {"content": {"parts": [{"functionResponse": {"id": "c", "name": "get_order_status",
                "response": {"result": "shipped"}}}], "role": "user"}, "invocationId": "e"},
            {"content": {"parts": [{"text": "All done."}], "role": "model"},
             "usageMetadata": {"candidatesTokenCount": 17, "promptTokenCount": 228}, "invocationId": "e"}
        ]);
        let whole = TraceAt {
            pointer: String::new(),
            format: crate::config::policy::TraceFormat::AdkEvents,
        };
        let pointers = Pointers {
            reply: "/-1/content/parts",
            trace: Some(&whole),
            usage: None,
        };
        let answer = read(events.to_string().as_bytes(), None, pointers).unwrap();
        assert_eq!(answer.text, "All done.");
        assert_eq!(answer.trace.len(), 1);
        assert_eq!(answer.trace[0].output, "shipped");
        assert_eq!(
            answer.usage,
            Some(Usage {
                prompt_tokens: 395,
                completion_tokens: 27
            })
        );
        assert_eq!(
            answer.tool_use_at.as_deref(),
            Some("/0/content/parts/0/functionCall")
        );
        // The same events streamed.
        let stream: String = events
            .as_array()
            .unwrap()
            .iter()
            .map(|e| format!("data: {e}\n\n"))
            .collect();
        let streamed = read(stream.as_bytes(), Some("text/event-stream"), pointers).unwrap();
        assert_eq!(streamed, answer);
        let bad = read(
            b"data: {\"a\": 1}\n\ndata: oops\n\n",
            Some("text/event-stream"),
            pointers,
        );
        assert!(bad.unwrap_err().contains("event 2"));
    }

    #[test]
    fn a_usage_pointer_reads_an_object_or_sums_a_list() {
        let doc = json!({"reply": "hi", "calls": [{"usage_metadata": {}}],
            "u": [{"input_tokens": 1, "output_tokens": 2}, {"input_tokens": 3}]});
        let answer = read(
            doc.to_string().as_bytes(),
            None,
            Pointers {
                reply: "/reply",
                trace: None,
                usage: Some("/u"),
            },
        )
        .unwrap();
        assert_eq!(
            answer.usage,
            Some(Usage {
                prompt_tokens: 4,
                completion_tokens: 2
            })
        );
        assert_eq!(answer.tool_use_at, None);
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
            let trace = TraceAt { pointer: "/b".into(), format: Default::default() };
            for content_type in [None, Some("text/event-stream")] {
                let _ = read(&body, content_type, Pointers { reply: "/a/-1", trace: Some(&trace), usage: Some("/u") });
            }
        }
    }
}
