//! Chat-completion messages, as the `openai` and `hf` formats hold them:
//! `{role, content, tool_calls, tool_call_id}`, roles system, user,
//! assistant and tool. Tool-call `arguments` are JSON text (`openai`) or an
//! object (`hf`); both become text, as sparring stores them.

use serde_json::Value;

use crate::llm::message::{Message, Role, ToolCall};

use super::conversation::text;
use super::LineProblem;

/// The messages of `row["messages"]`, and each assistant message's
/// `weight` (`None` where it has none).
pub(super) fn messages(
    line: usize,
    messages: Option<&Value>,
) -> Result<(Vec<Message>, Vec<Option<u64>>), LineProblem> {
    let list = messages
        .and_then(Value::as_array)
        .ok_or_else(|| LineProblem::new(line, "no `messages` list"))?;
    let mut out = Vec::with_capacity(list.len());
    let mut weights = Vec::new();
    for (i, m) in list.iter().enumerate() {
        let at = |why: String| LineProblem::new(line, format!("message {}: {why}", i + 1));
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        let role = Role::parse(role).ok_or_else(|| {
            at(format!(
                "role `{role}` is not one of system, user, assistant, tool"
            ))
        })?;
        let content = text(line, m.get("content")).map_err(|p| at(p.why))?;
        let tool_calls = match m.get("tool_calls") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(calls)) => calls
                .iter()
                .map(tool_call)
                .collect::<Result<_, _>>()
                .map_err(at)?,
            Some(_) => return Err(at("`tool_calls` is not a list".into())),
        };
        let tool_call_id = match (role, m.get("tool_call_id").and_then(Value::as_str)) {
            (Role::Tool, None) => return Err(at("a tool message has no `tool_call_id`".into())),
            (Role::Tool, Some(id)) => Some(id.to_string()),
            _ => None,
        };
        if role == Role::Assistant {
            weights.push(m.get("weight").and_then(Value::as_u64));
        }
        out.push(Message {
            role,
            content: content.into(),
            tool_calls,
            tool_call_id,
            reasoning: None,
        });
    }
    Ok((out, weights))
}

fn tool_call(call: &Value) -> Result<ToolCall, String> {
    let id = call.get("id").and_then(Value::as_str);
    let function = call.get("function");
    let name = function.and_then(|f| f.get("name")).and_then(Value::as_str);
    let (Some(id), Some(name)) = (id, name) else {
        return Err("a tool call needs `id` and `function.name`".into());
    };
    let arguments = match function.and_then(|f| f.get("arguments")) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    Ok(ToolCall {
        id: id.to_string(),
        name: name.to_string(),
        arguments,
    })
}
