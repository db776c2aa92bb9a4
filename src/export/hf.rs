//! `--format hf`: the chat format Hugging Face chat templates and TRL read.
//! One line per conversation with `messages` and `tools`, like `openai`, but
//!
//! - tool-call `arguments` are JSON objects, not strings (the templates
//!   serialise them themselves: a string would be encoded twice, and TRL's
//!   tool-calling checks expect objects);
//! - every message has the same keys, `role`, `content`, `tool_calls` and
//!   `tool_call_id`, `null` where absent (`content` is `null` beside tool
//!   calls without text), so `datasets` gives the column one type, and
//!   `Dataset.map` writes values back as they were;
//! - `tools` is always there (`[]` without tools), and so is `metadata`,
//!   whose `assistant_weights` says, per assistant message in order, 1 for a
//!   reply the policy wrote and 0 for one it did not (the scripted greeting);
//! - with `--user-tools`, the simulated user's own tool calls stay (user
//!   messages with `tool_calls`, tool messages answering them) and the
//!   user's tools are in a `user_tools` column (`[]` without).
//!
//! The messages end on the policy's last reply. A conversation whose tool
//! calls have arguments that are not a JSON object is left out: no template
//! can render it.

use serde_json::{json, Value};

use super::{openai, trim, ExportError, Skip};
use crate::store::StoredConversation;

pub fn line(
    c: &StoredConversation,
    mut metadata: Value,
    user_tools: bool,
) -> Result<Result<Value, Skip>, ExportError> {
    let chat = if user_tools {
        openai::messages_with_user_tools(c)?
    } else {
        openai::messages(c)?
    };
    let messages = match messages(&chat) {
        Ok(messages) => messages,
        Err(skip) => return Ok(Err(skip)),
    };
    let mut messages = trim::to_last_policy_reply(&messages).to_vec();
    if messages.is_empty() {
        return Ok(Err(Skip::NoPolicyReply));
    }
    metadata["assistant_weights"] = json!(trim::take_weights(&mut messages));
    let mut line = json!({
        "messages": messages,
        "tools": openai::tools(c),
        "metadata": metadata,
    });
    if user_tools {
        line["user_tools"] = Value::Array(openai::user_tools(c));
    }
    Ok(Ok(line))
}

/// Chat-format messages (as [`openai::messages`] makes them) with uniform
/// keys and object arguments, assistant messages keeping their `weight`
/// (see [`trim::take_weights`]); `Err(ArgumentsNotAnObject)` when a call's
/// arguments are not a JSON object.
pub fn messages(chat: &[Value]) -> Result<Vec<Value>, Skip> {
    chat.iter().map(message).collect()
}

fn message(m: &Value) -> Result<Value, Skip> {
    let calls = match m.get("tool_calls").and_then(Value::as_array) {
        Some(calls) => Value::Array(calls.iter().map(call).collect::<Result<_, _>>()?),
        None => Value::Null,
    };
    let content = match m.get("content") {
        Some(Value::String(text)) => json!(text),
        _ => Value::Null,
    };
    let mut out = json!({
        "role": trim::role(m),
        "content": content,
        "tool_calls": calls,
        "tool_call_id": m.get("tool_call_id").cloned().unwrap_or(Value::Null),
    });
    if let Some(weight) = m.get(trim::WEIGHT) {
        out[trim::WEIGHT] = weight.clone();
    }
    Ok(out)
}

fn call(c: &Value) -> Result<Value, Skip> {
    let function = &c["function"];
    let arguments = function["arguments"]
        .as_str()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .filter(Value::is_object)
        .ok_or(Skip::ArgumentsNotAnObject)?;
    Ok(json!({
        "id": c["id"],
        "type": "function",
        "function": {"name": function["name"], "arguments": arguments},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call_message(arguments: &str) -> Value {
        json!({"role": "assistant", "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "get_order", "arguments": arguments},
        }]})
    }

    #[test]
    fn every_message_has_the_same_keys_with_null_where_absent() {
        let chat = [
            json!({"role": "user", "content": "hi"}),
            call_message(r##"{"order_id": "#1"}"##),
            json!({"role": "tool", "tool_call_id": "call_1", "content": "ok"}),
        ];
        let mut out = messages(&chat).unwrap();
        trim::take_weights(&mut out);
        for m in &out {
            let keys: Vec<&String> = m.as_object().unwrap().keys().collect();
            assert_eq!(keys, ["content", "role", "tool_call_id", "tool_calls"]);
        }
        assert_eq!(out[0]["tool_calls"], Value::Null);
        assert_eq!(out[1]["content"], Value::Null);
        assert_eq!(
            out[1]["tool_calls"][0]["function"]["arguments"],
            json!({"order_id": "#1"})
        );
        assert_eq!(out[2]["tool_call_id"], "call_1");
    }

    #[test]
    fn arguments_that_are_not_a_json_object_leave_the_conversation_out() {
        for bad in ["{\"oops\": ", "[1, 2]", "\"text\""] {
            assert_eq!(
                messages(&[call_message(bad)]),
                Err(Skip::ArgumentsNotAnObject),
                "{bad}"
            );
        }
    }
}
