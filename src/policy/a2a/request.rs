//! The JSON-RPC 2.0 requests sparring sends an A2A server: `message/send`
//! (A2A 0.3) with the user's newest words, and `tasks/get` for a task the
//! agent left `submitted` or `working`.

use serde_json::{json, Value};

use crate::llm::message::Role;
use crate::sim::transcript::{Author, Transcript};

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

/// `message/send` of `texts` (one text part each), in `context_id`'s
/// conversation and `task_id`'s task when given. `blocking: true` asks the
/// server to answer once the task is done or needs the user.
pub fn message_send(
    id: u64,
    message_id: &str,
    texts: &[String],
    context_id: Option<&str>,
    task_id: Option<&str>,
) -> String {
    let parts: Vec<Value> = texts
        .iter()
        .map(|text| json!({"kind": "text", "text": text}))
        .collect();
    let mut message = json!({
        "kind": "message",
        "role": "user",
        "messageId": message_id,
        "parts": parts,
    });
    if let Some(context) = context_id {
        message["contextId"] = json!(context);
    }
    if let Some(task) = task_id {
        message["taskId"] = json!(task);
    }
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "message/send",
        "params": {"message": message, "configuration": {"blocking": true}},
    })
    .to_string()
}

/// `tasks/get` of `task_id`.
pub fn tasks_get(id: u64, task_id: &str) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tasks/get",
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

    #[test]
    fn message_send_names_the_context_and_task_only_when_known() {
        let first: Value =
            serde_json::from_str(&message_send(1, "m1", &["hi".into()], None, None)).unwrap();
        assert_eq!(first["jsonrpc"], "2.0");
        assert_eq!(first["method"], "message/send");
        let message = &first["params"]["message"];
        assert_eq!(message["role"], "user");
        assert_eq!(message["messageId"], "m1");
        assert_eq!(message["parts"], json!([{"kind": "text", "text": "hi"}]));
        assert!(message.get("contextId").is_none() && message.get("taskId").is_none());
        assert_eq!(first["params"]["configuration"]["blocking"], true);
        let later: Value = serde_json::from_str(&message_send(
            2,
            "m2",
            &["a".into(), "b".into()],
            Some("c"),
            Some("t"),
        ))
        .unwrap();
        assert_eq!(later["id"], 2);
        assert_eq!(later["params"]["message"]["contextId"], "c");
        assert_eq!(later["params"]["message"]["taskId"], "t");
        assert_eq!(
            later["params"]["message"]["parts"][1],
            json!({"kind": "text", "text": "b"})
        );
        let get: Value = serde_json::from_str(&tasks_get(3, "t")).unwrap();
        assert_eq!(get["method"], "tasks/get");
        assert_eq!(get["params"], json!({"id": "t"}));
    }
}
