//! tau2-bench messages as sparring messages. Roles system, user, assistant
//! and tool; a user's or assistant's `tool_calls` (`id`, `name`,
//! `arguments` object, `requestor`) stay on the message that made them, so
//! a user's calls in a dual-control domain (telecom: the user acts on their
//! own phone) are a user message with tool calls, as sparring keeps its own
//! simulated user's calls; each tool message (`id` of the call it answers,
//! `requestor`, `error`) is a tool result, and a `MultiToolMessage`
//! (`tool_messages`) one result per message in it. A call without an id
//! (tau2's default is empty) gets one, and the first result without an id
//! answers the earliest such call. Audio messages are not read.

use std::collections::VecDeque;

use serde_json::Value;

use crate::llm::message::{Message, Role, ToolCall};

/// The messages, and the ids of the calls whose result was an error.
#[derive(Debug, Default)]
pub(super) struct Read {
    pub messages: Vec<Message>,
    pub tool_errors: Vec<String>,
    /// Ids given to calls without one, not answered yet.
    unnamed: VecDeque<String>,
    given: usize,
}

pub(super) fn read(list: &[Value]) -> Result<Read, String> {
    let mut read = Read::default();
    for (i, m) in list.iter().enumerate() {
        read.message(m)
            .map_err(|why| format!("message {}: {why}", i + 1))?;
    }
    Ok(read)
}

impl Read {
    fn message(&mut self, m: &Value) -> Result<(), String> {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        let role = match role {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => {
                return match m.get("tool_messages") {
                    None | Some(Value::Null) => self.result(m),
                    Some(Value::Array(results)) => results.iter().try_for_each(|r| self.result(r)),
                    Some(_) => Err("`tool_messages` is not a list".into()),
                }
            }
            other => {
                return Err(format!(
                    "role `{other}` is not one of system, user, assistant, tool"
                ))
            }
        };
        if m.get("is_audio") == Some(&Value::Bool(true)) {
            return Err(
                "an audio message (its content is audio, not text): voice runs are not read".into(),
            );
        }
        let content = match m.get("content") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err("`content` is not text".into()),
        };
        let tool_calls = match (role, m.get("tool_calls")) {
            (_, None | Some(Value::Null)) => Vec::new(),
            (Role::System, Some(_)) => return Err("a system message has `tool_calls`".into()),
            (_, Some(Value::Array(calls))) => calls
                .iter()
                .map(|c| self.call(c))
                .collect::<Result<_, _>>()?,
            (_, Some(_)) => return Err("`tool_calls` is not a list".into()),
        };
        self.messages.push(Message {
            role,
            content: content.into(),
            tool_calls,
            tool_call_id: None,
            reasoning: None,
        });
        Ok(())
    }

    fn call(&mut self, call: &Value) -> Result<ToolCall, String> {
        let name = call
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a tool call has no `name`")?;
        let id = match call.get("id") {
            None | Some(Value::Null) => "",
            Some(Value::String(id)) => id.as_str(),
            Some(_) => return Err("a tool call's `id` is not text".into()),
        };
        let id = if id.is_empty() {
            self.given += 1;
            let id = format!("tau2-call-{}", self.given);
            self.unnamed.push_back(id.clone());
            id
        } else {
            id.to_string()
        };
        let arguments = match call.get("arguments") {
            None | Some(Value::Null) => "{}".to_string(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
        };
        Ok(ToolCall {
            id,
            name: name.to_string(),
            arguments,
        })
    }

    fn result(&mut self, result: &Value) -> Result<(), String> {
        let id = match result.get("id") {
            None | Some(Value::Null) => "",
            Some(Value::String(id)) => id.as_str(),
            Some(_) => return Err("a tool message's `id` is not text".into()),
        };
        let id = if id.is_empty() {
            self.unnamed
                .pop_front()
                .ok_or("a tool message without `id` answers no call without one")?
        } else {
            id.to_string()
        };
        let content = match result.get("content") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        if result.get("error") == Some(&Value::Bool(true)) {
            self.tool_errors.push(id.clone());
        }
        self.messages.push(Message::tool_result(id, content));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_json(v: Value) -> Result<Read, String> {
        read(v.as_array().unwrap())
    }

    #[test]
    fn calls_stay_with_who_made_them_and_results_answer_them() {
        let r = read_json(json!([
            {"role": "assistant", "content": "Hi", "tool_calls": null},
            {"role": "user", "content": null, "tool_calls": [
                {"id": "u1", "name": "toggle_roaming", "arguments": {}, "requestor": "user"}]},
            {"role": "tool", "id": "u1", "content": "ON", "requestor": "user", "error": false},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "a1", "name": "get", "arguments": {"x": 1}, "requestor": "assistant"},
                {"id": "a2", "name": "set", "arguments": {}, "requestor": "assistant"}]},
            {"role": "tool", "tool_messages": [
                {"id": "a1", "role": "tool", "content": "1", "requestor": "assistant"},
                {"id": "a2", "role": "tool", "content": "Error: no", "requestor": "assistant", "error": true}]}
        ]))
        .unwrap();
        let roles: Vec<_> = r.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(
            roles,
            ["assistant", "user", "tool", "assistant", "tool", "tool"]
        );
        assert_eq!(r.messages[1].tool_calls[0].name, "toggle_roaming");
        assert_eq!(r.messages[2].tool_call_id.as_deref(), Some("u1"));
        assert_eq!(r.messages[3].tool_calls[0].arguments, r#"{"x":1}"#);
        assert_eq!(r.messages[5].tool_call_id.as_deref(), Some("a2"));
        assert_eq!(r.tool_errors, ["a2"]);
    }

    #[test]
    fn calls_without_ids_are_answered_in_order() {
        let r = read_json(json!([
            {"role": "assistant", "tool_calls": [
                {"id": "", "name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]},
            {"role": "tool", "id": "", "content": "A"},
            {"role": "tool", "content": "B"}
        ]))
        .unwrap();
        let calls = &r.messages[0].tool_calls;
        assert_ne!(calls[0].id, calls[1].id);
        assert_eq!(r.messages[1].tool_call_id.as_ref(), Some(&calls[0].id));
        assert_eq!(r.messages[2].tool_call_id.as_ref(), Some(&calls[1].id));
        let orphan = read_json(json!([{"role": "tool", "content": "?"}])).unwrap_err();
        assert!(
            orphan.contains("message 1: a tool message without `id`"),
            "{orphan}"
        );
    }

    #[test]
    fn each_message_that_does_not_fit_says_which_and_why() {
        let why = |v: Value| read_json(json!([{"role": "user", "content": "hi"}, v])).unwrap_err();
        assert!(why(json!({"role": "human"})).starts_with("message 2: role `human`"));
        assert!(why(json!({"role": "user", "content": 3})).contains("`content` is not text"));
        assert!(
            why(json!({"role": "user", "is_audio": true, "content": "UklGR"})).contains("audio")
        );
        assert!(
            why(json!({"role": "assistant", "tool_calls": [{"id": "x"}]})).contains("no `name`")
        );
        assert!(why(json!({"role": "assistant", "tool_calls": {}})).contains("not a list"));
        assert!(why(json!({"role": "tool", "tool_messages": 1})).contains("not a list"));
    }
}
