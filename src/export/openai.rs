//! OpenAI chat fine-tuning JSONL: one line per conversation with `messages`
//! (system/user/assistant/tool; assistant `tool_calls` with `id`, `type`,
//! `function.name`, `function.arguments` as a JSON string; tool messages with
//! `tool_call_id`) and the `tools` offered. Every assistant message has a
//! `weight`: 1 for a reply the policy wrote, 0 for one it did not (the
//! scripted greeting, a dataset's prelude), which OpenAI then does not train
//! on. The messages end on the policy's last reply ([`super::trim`]).
//! Nothing else is on the line: its metadata goes to a sidecar file, so each
//! line is exactly what OpenAI's fine-tuning takes. The simulated user's own
//! tool calls (dual control) have no place in it (a user message cannot
//! carry `tool_calls`) and are always left out.

use serde_json::{json, Map, Value};

use crate::store::{MessageRow, StoredConversation};

use super::{trim, ExportError, Skip};

pub fn line(c: &StoredConversation) -> Result<Result<Value, Skip>, ExportError> {
    let messages = messages(c)?;
    let messages = trim::to_last_policy_reply(&messages);
    if messages.is_empty() {
        return Ok(Err(Skip::NoPolicyReply));
    }
    let mut line = json!({ "messages": messages });
    let tools = tools(c);
    if !tools.is_empty() {
        line["tools"] = Value::Array(tools);
    }
    Ok(Ok(line))
}

/// The metadata key of a conversation's user tool specs (dual control).
pub const USER_TOOLS_KEY: &str = "user_tools";

/// The user's own tools (dual control) of `c`, as chat-completion function
/// tools (none without).
pub fn user_tools(c: &StoredConversation) -> Vec<Value> {
    c.conversation
        .metadata
        .get(USER_TOOLS_KEY)
        .map(function_tools)
        .unwrap_or_default()
}

/// A stored message that is the user's own tool call or its result: part of
/// the user's side, never the policy's training data.
pub fn is_user_tool_use(m: &MessageRow) -> bool {
    (m.author == "user" && m.tool_calls.is_some()) || m.author == "user_tool"
}

/// The conversation's messages in the chat format, the policy's tool calls
/// included, the user's own (dual control) left out; all of them (untrimmed).
/// Assistant messages carry their `weight`.
pub fn messages(c: &StoredConversation) -> Result<Vec<Value>, ExportError> {
    chat_messages(c, false)
}

/// [`messages`] with the user's own tool calls (user messages with
/// `tool_calls`) and the tool messages answering them kept.
pub fn messages_with_user_tools(c: &StoredConversation) -> Result<Vec<Value>, ExportError> {
    chat_messages(c, true)
}

/// The `weight` of an assistant message stored with `author`: 1 when the
/// policy wrote it, 0 otherwise (the scripted greeting, a prelude's).
fn weight(author: &str) -> u8 {
    u8::from(author == "policy")
}

fn chat_messages(c: &StoredConversation, user_tools: bool) -> Result<Vec<Value>, ExportError> {
    let id = c.conversation.id;
    let mut messages = Vec::with_capacity(c.messages.len());
    for m in c
        .messages
        .iter()
        .filter(|m| user_tools || !is_user_tool_use(m))
    {
        let mut out = Map::new();
        out.insert("role".into(), json!(m.role));
        match m.role.as_str() {
            "assistant" => {
                let calls = tool_calls(id, m.idx, m.tool_calls.as_ref())?;
                if !m.content.is_empty() || calls.is_empty() {
                    out.insert("content".into(), json!(m.content));
                }
                if !calls.is_empty() {
                    out.insert("tool_calls".into(), Value::Array(calls));
                }
                out.insert(trim::WEIGHT.into(), json!(weight(&m.author)));
            }
            "tool" => {
                let call_id = m.tool_call_id.clone().ok_or_else(|| ExportError::Corrupt {
                    conversation: id,
                    message: format!("tool message {} has no tool_call_id", m.idx),
                })?;
                out.insert("tool_call_id".into(), json!(call_id));
                out.insert("content".into(), json!(m.content));
            }
            "user" => {
                out.insert("content".into(), json!(m.content));
                let calls = tool_calls(id, m.idx, m.tool_calls.as_ref())?;
                if !calls.is_empty() {
                    out.insert("tool_calls".into(), Value::Array(calls));
                }
            }
            "system" => {
                out.insert("content".into(), json!(m.content));
            }
            other => {
                return Err(ExportError::Corrupt {
                    conversation: id,
                    message: format!("message {} has unknown role '{other}'", m.idx),
                })
            }
        }
        messages.push(Value::Object(out));
    }
    Ok(messages)
}

/// The tools offered to the policy, as chat-completion function tools.
pub fn tools(c: &StoredConversation) -> Vec<Value> {
    function_tools(&c.conversation.tools)
}

/// Stored tool specs as chat-completion function tools.
pub(super) fn function_tools(specs: &Value) -> Vec<Value> {
    specs
        .as_array()
        .map(|specs| {
            specs
                .iter()
                .map(|spec| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": spec.get("name"),
                            "description": spec.get("description"),
                            "parameters": spec.get("parameters"),
                        }
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

fn tool_calls(
    conversation: i64,
    idx: i64,
    stored: Option<&Value>,
) -> Result<Vec<Value>, ExportError> {
    let Some(stored) = stored else {
        return Ok(Vec::new());
    };
    let corrupt = |what: &str| ExportError::Corrupt {
        conversation,
        message: format!("message {idx}: {what}"),
    };
    let calls = stored
        .as_array()
        .ok_or_else(|| corrupt("tool_calls is not an array"))?;
    calls
        .iter()
        .map(|call| {
            let field = |name: &str| {
                call.get(name)
                    .and_then(Value::as_str)
                    .ok_or_else(|| corrupt(&format!("a tool call has no {name}")))
            };
            Ok(json!({
                "id": field("id")?,
                "type": "function",
                "function": {"name": field("name")?, "arguments": field("arguments")?},
            }))
        })
        .collect()
}
