//! Reading an A2A server's JSON-RPC 2.0 response to `message/send` or
//! `tasks/get`: its `error` object, or its `result`, a `Task` or a `Message`.
//!
//! A2A 0.3 answers `{"result": {"kind": "task", "id", "contextId", "status":
//! {"state", "message"}, "artifacts": [{"parts"}]}}` or a message `{"kind":
//! "message", "role": "agent", "parts", "contextId"}`; parts are `{"kind":
//! "text", "text"}`, `{"kind": "data", "data"}` or files (not read). A2A 1.0's
//! JSON (`{"result": {"task": {...}}}`, parts without `kind`, states named
//! `TASK_STATE_*`) reads the same. Whatever else a server adds is ignored.
//! A task continued over several messages answers with all its artifacts so
//! far (a2a-sdk's do): [`AgentReply::new_parts`] leaves out those seen.

use serde_json::Value;

use super::state::TaskState;

/// What the agent answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentReply {
    pub context_id: Option<String>,
    pub task_id: Option<String>,
    /// The task's state; `None` when the agent answered with a `Message`.
    pub state: Option<TaskState>,
    /// The text parts of the task's status message, or of the message.
    pub texts: Vec<String>,
    /// The `data` of the status message's (or the message's) data parts.
    pub data: Vec<Value>,
    /// The task's artifacts, in order. A task continued over several
    /// messages keeps the artifacts of its earlier turns.
    pub artifacts: Vec<Artifact>,
}

/// One artifact of a task.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Artifact {
    /// What tells it from the task's other artifacts: its `artifactId`, else
    /// its JSON.
    pub key: String,
    pub texts: Vec<String>,
    pub data: Vec<Value>,
}

impl AgentReply {
    /// The reply's text and data, leaving out the artifacts whose keys are in
    /// `seen` (reported by an earlier answer of the same task): the text of
    /// the status message or message, else of the new artifacts, joined by
    /// new lines; the data of both.
    pub fn new_parts(&self, seen: &[String]) -> (String, Vec<Value>) {
        let fresh: Vec<&Artifact> = self
            .artifacts
            .iter()
            .filter(|a| !seen.contains(&a.key))
            .collect();
        let texts: Vec<&str> = if self.texts.is_empty() {
            fresh
                .iter()
                .flat_map(|a| a.texts.iter().map(String::as_str))
                .collect()
        } else {
            self.texts.iter().map(String::as_str).collect()
        };
        let mut data = self.data.clone();
        data.extend(fresh.iter().flat_map(|a| a.data.iter().cloned()));
        (texts.join("\n"), data)
    }

    /// The keys of its artifacts.
    pub fn artifact_keys(&self) -> impl Iterator<Item = &str> {
        self.artifacts.iter().map(|a| a.key.as_str())
    }
}

/// A response that is not an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseError {
    /// Not a JSON-RPC 2.0 response of a Task or a Message.
    Malformed(String),
    /// A JSON-RPC `error` object.
    Rpc { code: i64, message: String },
}

/// Read a response body.
pub fn read(body: &[u8]) -> Result<AgentReply, ResponseError> {
    let malformed = |m: &str| ResponseError::Malformed(m.to_string());
    let value: Value = serde_json::from_slice(body).map_err(|_| {
        malformed("the agent's answer is not JSON; an A2A server answers a JSON-RPC 2.0 response")
    })?;
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
    let Some(result) = object.get("result").filter(|r| r.is_object()) else {
        return Err(malformed(
            "the agent's JSON-RPC response has neither an error nor a result object",
        ));
    };
    let kind = result.get("kind").and_then(Value::as_str);
    match kind {
        Some("task") => task(result),
        Some("message") => message(result),
        Some(other) => Err(ResponseError::Malformed(format!(
            "the agent's result is of kind {:?}; message/send answers a \"task\" or a \"message\"",
            excerpt(other)
        ))),
        None => {
            if let Some(t) = result.get("task").filter(|t| t.is_object()) {
                task(t)
            } else if let Some(m) = result.get("message").filter(|m| m.is_object()) {
                message(m)
            } else if result.get("status").is_some() {
                task(result)
            } else if result.get("parts").is_some() {
                message(result)
            } else {
                Err(malformed(
                    "the agent's result is neither a Task (with a status) nor a Message \
                     (with parts)",
                ))
            }
        }
    }
}

fn task(task: &Value) -> Result<AgentReply, ResponseError> {
    let Some(status) = task.get("status").filter(|s| s.is_object()) else {
        return Err(ResponseError::Malformed(
            "the agent's task has no status object".into(),
        ));
    };
    let Some(name) = status.get("state").and_then(Value::as_str) else {
        return Err(ResponseError::Malformed(
            "the agent's task status has no state".into(),
        ));
    };
    let Some(state) = TaskState::parse(name) else {
        return Err(ResponseError::Malformed(format!(
            "the agent's task is in state {:?}, which is not an A2A task state (submitted, \
             working, input-required, completed, failed, canceled, rejected, auth-required, \
             unknown)",
            excerpt(name)
        )));
    };
    let mut reply = AgentReply {
        context_id: string(task, "contextId"),
        task_id: string(task, "id"),
        state: Some(state),
        ..AgentReply::default()
    };
    let status_parts = status.get("message").and_then(|m| m.get("parts"));
    read_parts(status_parts, &mut reply.texts, &mut reply.data);
    if let Some(artifacts) = task.get("artifacts").and_then(Value::as_array) {
        for artifact in artifacts {
            let mut read = Artifact {
                key: artifact
                    .get("artifactId")
                    .and_then(Value::as_str)
                    .map_or_else(|| artifact.to_string(), str::to_string),
                ..Artifact::default()
            };
            read_parts(artifact.get("parts"), &mut read.texts, &mut read.data);
            reply.artifacts.push(read);
        }
    }
    Ok(reply)
}

fn message(message: &Value) -> Result<AgentReply, ResponseError> {
    if !message.get("parts").is_some_and(Value::is_array) {
        return Err(ResponseError::Malformed(
            "the agent's message has no parts list".into(),
        ));
    }
    let mut reply = AgentReply {
        context_id: string(message, "contextId"),
        task_id: string(message, "taskId"),
        ..AgentReply::default()
    };
    read_parts(message.get("parts"), &mut reply.texts, &mut reply.data);
    Ok(reply)
}

/// The text and data of `parts` (anything but a list reads as none).
fn read_parts(parts: Option<&Value>, texts: &mut Vec<String>, data: &mut Vec<Value>) {
    let Some(parts) = parts.and_then(Value::as_array) else {
        return;
    };
    for part in parts {
        let kind = part.get("kind").and_then(Value::as_str);
        match kind {
            Some("text") | None if part.get("text").is_some_and(Value::is_string) => {
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    if !text.is_empty() {
                        texts.push(text.to_string());
                    }
                }
            }
            Some("data") | None => {
                if let Some(value) = part.get("data").filter(|d| !d.is_null()) {
                    data.push(value.clone());
                }
            }
            Some(_) => {}
        }
    }
}

fn string(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// At most 64 characters of a name the agent gave, for a message.
fn excerpt(text: &str) -> String {
    text.chars().take(64).collect()
}

/// What a JSON-RPC error code means (JSON-RPC 2.0's and A2A's own codes).
pub fn rpc_meaning(code: i64) -> &'static str {
    match code {
        -32700 => "parse error: the agent could not read the request as JSON",
        -32600 => "invalid request",
        -32601 => "method not found: the agent does not speak message/send (A2A 0.3 JSON-RPC)",
        -32602 => "invalid params",
        -32603 => "internal error",
        -32001 => "task not found",
        -32002 => "task not cancelable",
        -32003 => "push notifications not supported",
        -32004 => "unsupported operation",
        -32005 => "content type not supported",
        -32006 => "invalid agent response",
        -32007 => "authenticated extended card not configured",
        -32099..=-32000 => "a server error of the agent's own",
        _ => "an error of the agent's own",
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(
            reply.new_parts(&[]),
            (
                "Which order?\nIts id, please.".to_string(),
                vec![json!({"tool_calls": []})]
            )
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
        assert_eq!(reply.new_parts(&[]).0, "Shipped.\nPL1");
        assert_eq!(reply.state, Some(TaskState::Completed));
    }

    #[test]
    fn artifacts_seen_in_an_earlier_answer_of_the_task_are_left_out() {
        let reply = read_json(json!({"jsonrpc": "2.0", "id": 1, "result": {
            "kind": "task", "id": "t", "status": {"state": "completed"},
            "artifacts": [
                {"artifactId": "a1", "parts": [{"kind": "data", "data": 1}, {"kind": "text", "text": "old"}]},
                {"parts": [{"kind": "data", "data": 2}, {"kind": "text", "text": "new"}]}]
        }}))
        .unwrap();
        let keys: Vec<String> = reply.artifact_keys().map(str::to_string).collect();
        assert_eq!(keys[0], "a1");
        assert_eq!(
            reply.new_parts(&keys[..1]),
            ("new".to_string(), vec![json!(2)])
        );
        assert_eq!(reply.new_parts(&keys), (String::new(), vec![]));
    }

    #[test]
    fn a_message_answers_with_its_parts_and_no_state() {
        let reply = read_json(json!({"jsonrpc": "2.0", "id": "x", "result": {
            "kind": "message", "role": "agent", "messageId": "m", "contextId": "c9",
            "parts": [{"kind": "text", "text": "Hello"}, {"kind": "data", "data": [1]}]
        }}))
        .unwrap();
        assert_eq!(reply.state, None);
        assert_eq!(
            reply.new_parts(&[]),
            ("Hello".to_string(), vec![json!([1])])
        );
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
        assert_eq!(reply.new_parts(&[]).0, "Done.");
        assert_eq!(reply.new_parts(&[]).1.len(), 1);
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
        assert!(rpc_meaning(-32601).contains("message/send"));
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
