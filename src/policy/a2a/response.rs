//! Reading an A2A server's JSON-RPC 2.0 response to a message or to an ask
//! after a task: its `error` object, or its `result`, a `Task` or a
//! `Message` ([`super::reply`] puts the answer together). A2A 0.3 answers
//! `{"result": {"kind": "task", ...}}` or `{"kind": "message", ...}`; A2A
//! 1.0 `{"result": {"task": {...}}}` or `{"message": {...}}`, or a bare task
//! to `GetTask`. A stream's events are responses of the same envelope
//! ([`super::stream`]).

use serde_json::Value;

use super::reply::{excerpt, AgentReply};

/// A response that is not an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseError {
    /// Not a JSON-RPC 2.0 response of a Task or a Message.
    Malformed(String),
    /// A JSON-RPC `error` object.
    Rpc { code: i64, message: String },
}

fn malformed(m: impl Into<String>) -> ResponseError {
    ResponseError::Malformed(m.into())
}

/// Read a response body.
pub fn read(body: &[u8]) -> Result<AgentReply, ResponseError> {
    let mut reply = AgentReply::default();
    read_into(body, &mut reply)?;
    Ok(reply)
}

/// Read a response body into what the turn's answers said so far.
pub fn read_into(body: &[u8], reply: &mut AgentReply) -> Result<(), ResponseError> {
    let value: Value = serde_json::from_slice(body).map_err(|_| {
        malformed("the agent's answer is not JSON; an A2A server answers a JSON-RPC 2.0 response")
    })?;
    apply(&value, reply)
}

/// The `result` of one JSON-RPC response, or its error.
pub fn result_of(value: &Value) -> Result<&Value, ResponseError> {
    let Some(object) = value.as_object() else {
        return Err(malformed(
            "the agent's answer is JSON but not an object; a JSON-RPC 2.0 response is one",
        ));
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(malformed(
            "the agent's answer has no \"jsonrpc\": \"2.0\"; it is not a JSON-RPC 2.0 response",
        ));
    }
    if let Some(error) = object.get("error").filter(|e| !e.is_null()) {
        let code = error.get("code").and_then(Value::as_i64);
        let Some(code) = code else {
            return Err(malformed("the agent's JSON-RPC error has no integer code"));
        };
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        return Err(ResponseError::Rpc { code, message });
    }
    object
        .get("result")
        .filter(|r| r.is_object())
        .ok_or_else(|| {
            malformed("the agent's JSON-RPC response has neither an error nor a result object")
        })
}

/// Put one JSON-RPC response (a whole answer, or a stream's event) into
/// `reply`.
pub fn apply(value: &Value, reply: &mut AgentReply) -> Result<(), ResponseError> {
    let result = result_of(value)?;
    let applied = match result.get("kind").and_then(Value::as_str) {
        Some("task") => reply.apply_task(result),
        Some("message") => reply.apply_message(result),
        Some("status-update") => reply.apply_status_update(result),
        Some("artifact-update") => reply.apply_artifact_update(result),
        Some(other) => {
            return Err(malformed(format!(
                "the agent's result is of kind {:?}; a message is answered with a \"task\" or a \
                 \"message\" (a stream also with \"status-update\" and \"artifact-update\")",
                excerpt(other)
            )))
        }
        None => {
            if let Some(t) = result.get("task").filter(|t| t.is_object()) {
                reply.apply_task(t)
            } else if let Some(m) = result.get("message").filter(|m| m.is_object()) {
                reply.apply_message(m)
            } else if let Some(u) = result.get("statusUpdate").filter(|u| u.is_object()) {
                reply.apply_status_update(u)
            } else if let Some(u) = result.get("artifactUpdate").filter(|u| u.is_object()) {
                reply.apply_artifact_update(u)
            } else if result.get("status").is_some() {
                reply.apply_task(result)
            } else if result.get("parts").is_some() {
                reply.apply_message(result)
            } else {
                return Err(malformed(
                    "the agent's result is neither a Task (with a status) nor a Message \
                     (with parts)",
                ));
            }
        }
    };
    applied.map_err(ResponseError::Malformed)
}

/// What a JSON-RPC error code means (JSON-RPC 2.0's and A2A's own codes).
pub fn rpc_meaning(code: i64) -> &'static str {
    match code {
        -32700 => "parse error: the agent could not read the request as JSON",
        -32600 => "invalid request",
        -32601 => {
            "method not found: the agent does not speak this version's method (A2A 0.3 \
                   message/send, 1.0 SendMessage)"
        }
        -32602 => "invalid params",
        -32603 => "internal error",
        -32001 => "task not found",
        -32002 => "task not cancelable",
        -32003 => "push notifications not supported",
        -32004 => "unsupported operation",
        -32005 => "content type not supported",
        -32006 => "invalid agent response",
        -32007 => "authenticated extended card not configured",
        -32009 => "version not supported",
        -32099..=-32000 => "a server error of the agent's own",
        _ => "an error of the agent's own",
    }
}

#[cfg(test)]
mod tests {
    use super::super::state::TaskState;
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn read_json(v: Value) -> Result<AgentReply, ResponseError> {
        read(v.to_string().as_bytes())
    }

    #[test]
    fn a_task_gives_its_status_message_text_ids_and_the_artifacts_data() {
        let reply = read_json(json!({"jsonrpc": "2.0", "id": 1, "result": {
            "kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": "input-required", "message": {"kind": "message", "role": "agent",
                "parts": [{"kind": "text", "text": "Which order?"}, {"kind": "text", "text": "Its id, please."}]}},
            "artifacts": [{"name": "tool_calls", "parts": [{"kind": "data", "data": {"tool_calls": []}},
                {"kind": "text", "text": "not the answer"}]}]
        }}))
        .unwrap();
        assert_eq!(reply.state, Some(TaskState::InputRequired));
        assert_eq!(reply.task_id.as_deref(), Some("t1"));
        assert_eq!(reply.context_id.as_deref(), Some("c1"));
        let taken = reply.take(&[]);
        assert_eq!(taken.text, "Which order?\nIts id, please.");
        assert_eq!(
            taken.parts,
            vec![json!({"kind": "data", "data": {"tool_calls": []}})]
        );
    }

    #[test]
    fn a_task_without_a_status_message_answers_with_its_artifacts_text() {
        let reply = read_json(json!({"jsonrpc": "2.0", "id": 1, "result": {
            "kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"},
            "artifacts": [{"parts": [{"kind": "text", "text": "Shipped."}]},
                          {"parts": [{"kind": "file", "file": {"uri": "x"}}, {"kind": "text", "text": "PL1"}]}]
        }}))
        .unwrap();
        assert_eq!(reply.take(&[]).text, "Shipped.\nPL1");
        assert_eq!(reply.state, Some(TaskState::Completed));
    }

    #[test]
    fn a_message_answers_with_its_parts_and_no_state() {
        let reply = read_json(json!({"jsonrpc": "2.0", "id": "x", "result": {
            "kind": "message", "role": "agent", "messageId": "m", "contextId": "c9",
            "parts": [{"kind": "text", "text": "Hello"}, {"kind": "data", "data": [1]}]
        }}))
        .unwrap();
        assert_eq!(reply.state, None);
        let taken = reply.take(&[]);
        assert_eq!(taken.text, "Hello");
        assert_eq!(taken.parts, vec![json!({"kind": "data", "data": [1]})]);
        assert_eq!(reply.context_id.as_deref(), Some("c9"));
    }

    #[test]
    fn a2a_1_0_json_reads_the_same() {
        let reply = read_json(json!({"jsonrpc": "2.0", "id": 1, "result": {"task": {
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED", "message": {"role": "ROLE_AGENT",
                "parts": [{"text": "Done."}, {"data": {"tool_calls": [{"name": "x"}]}}]}}
        }}}))
        .unwrap();
        assert_eq!(reply.state, Some(TaskState::Completed));
        assert_eq!(reply.take(&[]).text, "Done.");
        assert_eq!(reply.take(&[]).parts.len(), 1);
        // GetTask answers the task itself.
        let got = read_json(json!({"jsonrpc": "2.0", "id": 2, "result": {
            "id": "t", "status": {"state": "TASK_STATE_WORKING"}}}))
        .unwrap();
        assert_eq!(got.state, Some(TaskState::Working));
    }

    #[test]
    fn an_error_object_gives_its_code_and_a_non_answer_is_malformed() {
        let got = read_json(json!({"jsonrpc": "2.0", "id": 1,
            "error": {"code": -32601, "message": "Method not found"}}));
        assert_eq!(
            got,
            Err(ResponseError::Rpc {
                code: -32601,
                message: "Method not found".into()
            })
        );
        assert!(rpc_meaning(-32601).contains("SendMessage"));
        for (body, says) in [
            ("<html>502</html>", "not JSON"),
            ("[1]", "not an object"),
            ("{\"result\": {}}", "\"jsonrpc\""),
            ("{\"jsonrpc\": \"2.0\", \"id\": 1}", "neither an error nor a result"),
            (
                "{\"jsonrpc\": \"2.0\", \"error\": {\"code\": \"x\"}}",
                "integer code",
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"result\": {\"kind\": \"task\", \"status\": {\"state\": \"done\"}}}",
                "not an A2A task state",
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"result\": {\"kind\": \"task\"}}",
                "no status",
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"result\": {\"kind\": \"artifact\"}}",
                "of kind",
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"result\": {\"answer\": 1}}",
                "neither a Task",
            ),
        ] {
            match read(body.as_bytes()) {
                Err(ResponseError::Malformed(m)) => assert!(m.contains(says), "{body}: {m}"),
                other => panic!("{body}: {other:?}"),
            }
        }
    }

    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            prop::sample::select(vec![
                "task",
                "message",
                "text",
                "data",
                "completed",
                "working",
                "2.0",
                "",
                "x"
            ])
            .prop_map(|s| json!(s)),
            ".{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        prop::sample::select(vec![
                            "jsonrpc",
                            "result",
                            "error",
                            "code",
                            "kind",
                            "task",
                            "message",
                            "status",
                            "state",
                            "parts",
                            "text",
                            "data",
                            "artifacts",
                            "id",
                            "contextId",
                            "taskId"
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

    proptest! {
        #[test]
        fn reading_never_panics_and_answers_only_from_a_result_object(value in any_json()) {
            let bare = read(value.to_string().as_bytes());
            if bare.is_ok() {
                prop_assert_eq!(value.get("jsonrpc"), Some(&json!("2.0")));
                prop_assert!(value.get("result").is_some_and(Value::is_object));
            }
            let wrapped = json!({"jsonrpc": "2.0", "id": 1, "result": value});
            if read(wrapped.to_string().as_bytes()).is_ok() {
                prop_assert!(value.is_object());
            }
        }

        #[test]
        fn reading_never_panics_on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            if read(&bytes).is_ok() {
                prop_assert!(serde_json::from_slice::<Value>(&bytes).is_ok());
            }
        }
    }
}
