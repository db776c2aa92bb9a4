//! The JSON-RPC 2.0 requests sparring sends an A2A server, in the version
//! the card chose: a message with the user's newest words (A2A 0.3's
//! `message/send` or `message/stream`, 1.0's `SendMessage` or
//! `SendStreamingMessage`), and the ask after a task the agent left
//! `submitted` or `working` (`tasks/get`, `GetTask`).
//!
//! Each message sends what the specification makes required, and what
//! servers hold to: a `messageId`, the user's role, the parts, and a
//! `configuration` naming the output modes sparring accepts
//! (`acceptedOutputModes`: fasta2a refuses a message without them) and that
//! it waits for the answer (0.3's `blocking: true`; 1.0 waits unless
//! `returnImmediately`). A 1.0 request goes with the `A2A-Version: 1.0`
//! header (a2a-sdk takes a request without it for 0.3).

use serde_json::{json, Value};

use crate::config::policy::a2a::A2aVersion;
use crate::llm::message::Role;
use crate::sim::transcript::{Author, Transcript};

/// The header a 1.0 request names its version in.
pub const VERSION_HEADER: &str = "a2a-version";

/// The output modes sparring reads: text, and data parts (tool traces).
pub const ACCEPTED_OUTPUT_MODES: [&str; 2] = ["text/plain", "application/json"];

/// One message of the user's words, as sent.
#[derive(Debug, Clone, Copy)]
pub struct Send<'a> {
    pub version: A2aVersion,
    /// `message/stream` / `SendStreamingMessage` rather than a plain send.
    pub stream: bool,
    pub id: u64,
    pub message_id: &'a str,
    pub texts: &'a [String],
    pub context_id: Option<&'a str>,
    pub task_id: Option<&'a str>,
}

/// What the agent has not heard yet: the user's messages after the agent's
/// last reply (an A2A agent keeps the conversation per `contextId`, so it is
/// told each message once). On the first turn that is every user message so
/// far (a dataset's prelude, the scripted opening); assistant lines that are
/// not the agent's own (a prelude's, the configured greeting) are not sent.
pub fn unheard_user_texts(transcript: &Transcript) -> Vec<String> {
    let since = transcript
        .messages
        .iter()
        .rposition(|r| r.author == Author::Policy)
        .map_or(0, |i| i + 1);
    transcript.messages[since..]
        .iter()
        .filter(|r| r.message.role == Role::User && !r.is_user_tool_use())
        .map(|r| r.message.content.trim().to_string())
        .filter(|text| !text.is_empty())
        .collect()
}

/// The method of a message in `version`.
pub fn send_method(version: A2aVersion, stream: bool) -> &'static str {
    match (version, stream) {
        (A2aVersion::V03, false) => "message/send",
        (A2aVersion::V03, true) => "message/stream",
        (A2aVersion::V10, false) => "SendMessage",
        (A2aVersion::V10, true) => "SendStreamingMessage",
    }
}

/// The body of `send`: its texts as one text part each, in its context and
/// task when given.
pub fn message_send(send: &Send<'_>) -> String {
    let v1 = send.version == A2aVersion::V10;
    let parts: Vec<Value> = send
        .texts
        .iter()
        .map(|text| {
            if v1 {
                json!({"text": text})
            } else {
                json!({"kind": "text", "text": text})
            }
        })
        .collect();
    let mut message = if v1 {
        json!({"role": "ROLE_USER", "messageId": send.message_id, "parts": parts})
    } else {
        json!({"kind": "message", "role": "user", "messageId": send.message_id, "parts": parts})
    };
    if let Some(context) = send.context_id {
        message["contextId"] = json!(context);
    }
    if let Some(task) = send.task_id {
        message["taskId"] = json!(task);
    }
    let configuration = if v1 {
        json!({"acceptedOutputModes": ACCEPTED_OUTPUT_MODES, "returnImmediately": false})
    } else {
        json!({"acceptedOutputModes": ACCEPTED_OUTPUT_MODES, "blocking": true})
    };
    json!({
        "jsonrpc": "2.0",
        "id": send.id,
        "method": send_method(send.version, send.stream),
        "params": {"message": message, "configuration": configuration},
    })
    .to_string()
}

/// The ask after task `task_id`.
pub fn tasks_get(version: A2aVersion, id: u64, task_id: &str) -> String {
    let method = match version {
        A2aVersion::V03 => "tasks/get",
        A2aVersion::V10 => "GetTask",
    };
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": method,
        "params": {"id": task_id},
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::{Message, ToolCall};

    #[test]
    fn the_first_turn_sends_every_user_message_and_later_turns_only_the_new_ones() {
        let mut t = Transcript::default();
        t.push(Message::system("prompt"), Author::System);
        t.push(Message::assistant("Hello, how can I help?"), Author::System);
        t.push(Message::user("Where is my lantern?"), Author::System);
        t.push(Message::user("  "), Author::User);
        assert_eq!(unheard_user_texts(&t), vec!["Where is my lantern?"]);
        t.push(Message::assistant("Which order?"), Author::Policy);
        assert!(unheard_user_texts(&t).is_empty());
        let mut own_call = Message::user("");
        own_call.tool_calls = vec![ToolCall {
            id: "u".into(),
            name: "check".into(),
            arguments: "{}".into(),
        }];
        t.push(own_call, Author::User);
        t.push(Message::tool_result("u", "ok"), Author::UserTool);
        t.push(Message::user("#A1002"), Author::User);
        t.push(Message::user("and quickly"), Author::User);
        assert_eq!(unheard_user_texts(&t), vec!["#A1002", "and quickly"]);
    }

    fn send<'a>(
        version: A2aVersion,
        texts: &'a [String],
        context: Option<&'a str>,
        task: Option<&'a str>,
    ) -> Value {
        let body = message_send(&Send {
            version,
            stream: false,
            id: 2,
            message_id: "m1",
            texts,
            context_id: context,
            task_id: task,
        });
        serde_json::from_str(&body).unwrap()
    }

    #[test]
    fn a_0_3_message_names_the_context_and_task_only_when_known() {
        let first = send(A2aVersion::V03, &["hi".into()], None, None);
        assert_eq!(first["jsonrpc"], "2.0");
        assert_eq!(first["method"], "message/send");
        let message = &first["params"]["message"];
        assert_eq!(message["role"], "user");
        assert_eq!(message["kind"], "message");
        assert_eq!(message["messageId"], "m1");
        assert_eq!(message["parts"], json!([{"kind": "text", "text": "hi"}]));
        assert!(message.get("contextId").is_none() && message.get("taskId").is_none());
        assert_eq!(
            first["params"]["configuration"],
            json!({"acceptedOutputModes": ["text/plain", "application/json"], "blocking": true})
        );
        let later = send(
            A2aVersion::V03,
            &["a".into(), "b".into()],
            Some("c"),
            Some("t"),
        );
        assert_eq!(later["id"], 2);
        assert_eq!(later["params"]["message"]["contextId"], "c");
        assert_eq!(later["params"]["message"]["taskId"], "t");
        assert_eq!(
            later["params"]["message"]["parts"][1],
            json!({"kind": "text", "text": "b"})
        );
        let get: Value = serde_json::from_str(&tasks_get(A2aVersion::V03, 3, "t")).unwrap();
        assert_eq!(get["method"], "tasks/get");
        assert_eq!(get["params"], json!({"id": "t"}));
    }

    #[test]
    fn a_1_0_message_has_1_0_names_and_no_kinds() {
        let body = send(A2aVersion::V10, &["hi".into()], Some("c"), None);
        assert_eq!(body["method"], "SendMessage");
        let message = &body["params"]["message"];
        assert_eq!(message["role"], "ROLE_USER");
        assert!(message.get("kind").is_none());
        assert_eq!(message["parts"], json!([{"text": "hi"}]));
        assert_eq!(message["contextId"], "c");
        assert_eq!(
            body["params"]["configuration"]["acceptedOutputModes"],
            json!(["text/plain", "application/json"])
        );
        assert_eq!(send_method(A2aVersion::V10, true), "SendStreamingMessage");
        assert_eq!(send_method(A2aVersion::V03, true), "message/stream");
        let get: Value = serde_json::from_str(&tasks_get(A2aVersion::V10, 3, "t")).unwrap();
        assert_eq!(get["method"], "GetTask");
    }
}
