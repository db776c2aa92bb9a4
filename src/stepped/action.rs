//! A step's action: one assistant message as chat completions write it
//! (`content`, `tool_calls` with `function.name` and `function.arguments`),
//! with the generation's token fields and usage when the caller has them.
//! Every wrong field is named; a wrong action changes nothing.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::llm::message::{Message, Role, ToolCall};
use crate::llm::wire::arguments_text;
use crate::llm::Usage;
use crate::token_ids::TokenIds;

use super::error::Invalid;

/// The fields an action may have (`metadata` is OpenEnv's `Action` field,
/// read and ignored).
pub const ACTION_FIELDS: &[&str] = &[
    "role",
    "content",
    "tool_calls",
    "prompt_token_ids",
    "generation_token_ids",
    "generation_log_probs",
    "usage",
    "metadata",
];

/// Largest action, in bytes of its JSON text: 2 MiB, the service's body
/// limit (about half a million tokens of text).
pub const MAX_ACTION_BYTES: usize = 2 * 1024 * 1024;
/// Most tool calls in one message.
pub const MAX_TOOL_CALLS: usize = 64;
/// Longest tool name or call id.
const MAX_NAME_CHARS: usize = 256;

/// An action, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub message: Message,
    pub tokens: Option<Arc<TokenIds>>,
    pub usage: Option<Usage>,
}

/// The action too large to read, said in its field's words.
pub fn too_large(bytes: usize) -> Invalid {
    Invalid::at(
        "action",
        format!(
            "is {bytes} bytes; an action is at most {MAX_ACTION_BYTES} bytes (2 MiB) of JSON; \
             nothing was done, and the session goes on"
        ),
    )
}

impl Action {
    /// Read `value`, an assistant message object. `step` numbers the
    /// generated ids of calls that come without one.
    pub fn read(value: &Value, step: u32) -> Result<Action, Invalid> {
        let Value::Object(object) = value else {
            return Err(Invalid::at(
                "",
                "is not a JSON object; send an assistant message: {\"content\": \"...\", \
                 \"tool_calls\": [...]}",
            ));
        };
        if let Some(unknown) = object.keys().find(|k| !ACTION_FIELDS.contains(&k.as_str())) {
            return Err(Invalid::at(
                unknown.as_str(),
                format!(
                    "is not a field of an action; known: {}",
                    ACTION_FIELDS.join(", ")
                ),
            ));
        }
        match object.get("role") {
            None | Some(Value::Null) => {}
            Some(Value::String(r)) if r == "assistant" => {}
            Some(other) => {
                return Err(Invalid::at(
                    "role",
                    format!("is {other}; an action is the policy's message: \"assistant\""),
                ))
            }
        }
        let content = match object.get("content") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(Invalid::at(
                    "content",
                    format!("is {}; give the message's text as a string", kind(other)),
                ))
            }
        };
        let tool_calls = tool_calls(object.get("tool_calls"), step)?;
        let size = content.len()
            + tool_calls
                .iter()
                .map(|c| c.arguments.len() + c.name.len() + c.id.len())
                .sum::<usize>();
        if size > MAX_ACTION_BYTES {
            return Err(too_large(size));
        }
        let mut message = Message::assistant(content);
        message.role = Role::Assistant;
        message.tool_calls = tool_calls;
        Ok(Action {
            message,
            tokens: tokens(object)?,
            usage: usage(object.get("usage"))?,
        })
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn tool_calls(value: Option<&Value>, step: u32) -> Result<Vec<ToolCall>, Invalid> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(Invalid::at(
                "tool_calls",
                format!("is {}; give a list of tool calls", kind(other)),
            ))
        }
    };
    if items.len() > MAX_TOOL_CALLS {
        return Err(Invalid::at(
            "tool_calls",
            format!(
                "has {} calls; one message makes at most {MAX_TOOL_CALLS}",
                items.len()
            ),
        ));
    }
    let mut ids = HashSet::new();
    let mut calls = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let call = tool_call(item, step, i).map_err(|e| e.under(&format!("tool_calls[{i}]")))?;
        if !ids.insert(call.id.clone()) {
            return Err(Invalid::at(
                format!("tool_calls[{i}].id"),
                format!(
                    "'{}' is the id of an earlier call of this message; each call's result \
                     answers its id",
                    call.id
                ),
            ));
        }
        calls.push(call);
    }
    Ok(calls)
}

/// One call: chat completions' `{"id", "type": "function", "function":
/// {"name", "arguments"}}`, or flat `{"id", "name", "arguments"}`.
fn tool_call(value: &Value, step: u32, index: usize) -> Result<ToolCall, Invalid> {
    let Value::Object(call) = value else {
        return Err(Invalid::at(
            "",
            format!(
                "is {}; give {{\"id\": ..., \"type\": \"function\", \"function\": {{\"name\": \
                 ..., \"arguments\": ...}}}}",
                kind(value)
            ),
        ));
    };
    match call.get("type") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "function" => {}
        Some(other) => {
            return Err(Invalid::at(
                "type",
                format!("is {other}; only \"function\" calls are made"),
            ))
        }
    }
    let (function, prefix): (&Map<String, Value>, &str) = match call.get("function") {
        Some(Value::Object(f)) => (f, "function."),
        Some(other) => {
            return Err(Invalid::at(
                "function",
                format!(
                    "is {}; give {{\"name\": ..., \"arguments\": ...}}",
                    kind(other)
                ),
            ))
        }
        None => (call, ""),
    };
    let name = match function.get("name") {
        Some(Value::String(n)) if !n.trim().is_empty() && n.chars().count() <= MAX_NAME_CHARS => {
            n.clone()
        }
        Some(Value::String(n)) if n.trim().is_empty() => {
            return Err(Invalid::at(
                format!("{prefix}name"),
                "is blank; name a tool",
            ))
        }
        Some(Value::String(_)) => {
            return Err(Invalid::at(
                format!("{prefix}name"),
                format!("is longer than {MAX_NAME_CHARS} characters"),
            ))
        }
        Some(other) => {
            return Err(Invalid::at(
                format!("{prefix}name"),
                format!("is {}; give the tool's name as a string", kind(other)),
            ))
        }
        None => {
            return Err(Invalid::at(
                format!("{prefix}name"),
                "is missing; name a tool",
            ))
        }
    };
    let arguments = match function.get("arguments") {
        None | Some(Value::Null) => arguments_text(None),
        Some(v @ (Value::String(_) | Value::Object(_))) => arguments_text(Some(v.clone())),
        Some(other) => {
            return Err(Invalid::at(
                format!("{prefix}arguments"),
                format!(
                    "is {}; give the arguments as a JSON object or its text",
                    kind(other)
                ),
            ))
        }
    };
    let id = match call.get("id") {
        None | Some(Value::Null) => format!("call_{step}_{index}"),
        Some(Value::String(id)) if !id.is_empty() && id.chars().count() <= MAX_NAME_CHARS => {
            id.clone()
        }
        Some(other) => {
            return Err(Invalid::at(
                "id",
                format!(
                    "is {other}; give a non-empty string of at most {MAX_NAME_CHARS} characters"
                ),
            ))
        }
    };
    Ok(ToolCall {
        id,
        name,
        arguments,
    })
}

/// The generation's token fields, as NeMo Gym's `TokenIDLogProbMixin`
/// names them; all three or none.
fn tokens(object: &Map<String, Value>) -> Result<Option<Arc<TokenIds>>, Invalid> {
    let fields = [
        "prompt_token_ids",
        "generation_token_ids",
        "generation_log_probs",
    ];
    let given: Vec<&str> = fields
        .iter()
        .copied()
        .filter(|f| object.get(*f).is_some_and(|v| !v.is_null()))
        .collect();
    if given.is_empty() {
        return Ok(None);
    }
    if let Some(missing) = fields.iter().find(|f| !given.contains(f)) {
        return Err(Invalid::at(
            *missing,
            format!(
                "is missing while {} is given; send prompt_token_ids, generation_token_ids and \
                 generation_log_probs together, or none of them",
                given.join(" and ")
            ),
        ));
    }
    let ids = |field: &str| -> Result<Vec<u32>, Invalid> {
        let list = object
            .get(field)
            .and_then(Value::as_array)
            .ok_or_else(|| Invalid::at(field, "is not a list of token ids"))?;
        list.iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        Invalid::at(
                            format!("{field}[{i}]"),
                            format!(
                                "is {v}; a token id is a whole number from 0 to {}",
                                u32::MAX
                            ),
                        )
                    })
            })
            .collect()
    };
    let prompt_token_ids = ids("prompt_token_ids")?;
    let generation_token_ids = ids("generation_token_ids")?;
    let log_probs = object
        .get("generation_log_probs")
        .and_then(Value::as_array)
        .ok_or_else(|| Invalid::at("generation_log_probs", "is not a list of numbers"))?;
    let generation_log_probs = log_probs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_f64().ok_or_else(|| {
                Invalid::at(
                    format!("generation_log_probs[{i}]"),
                    format!("is {v}; give a number"),
                )
            })
        })
        .collect::<Result<Vec<f64>, Invalid>>()?;
    if generation_log_probs.len() != generation_token_ids.len() {
        return Err(Invalid::at(
            "generation_log_probs",
            format!(
                "has {} numbers for {} generated tokens; give one log probability per token",
                generation_log_probs.len(),
                generation_token_ids.len()
            ),
        ));
    }
    Ok(Some(Arc::new(TokenIds {
        prompt_token_ids,
        generation_token_ids,
        generation_log_probs,
    })))
}

fn usage(value: Option<&Value>) -> Result<Option<Usage>, Invalid> {
    let object = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(o)) => o,
        Some(other) => {
            return Err(Invalid::at(
                "usage",
                format!(
                    "is {}; give {{\"prompt_tokens\": N, \"completion_tokens\": N}}",
                    kind(other)
                ),
            ))
        }
    };
    let count = |field: &str| -> Result<u64, Invalid> {
        match object.get(field) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v.as_u64().ok_or_else(|| {
                Invalid::at(
                    format!("usage.{field}"),
                    format!("is {v}; give a whole number of tokens"),
                )
            }),
        }
    };
    Ok(Some(Usage {
        prompt_tokens: count("prompt_tokens")?,
        completion_tokens: count("completion_tokens")?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(v: Value) -> String {
        Action::read(&v, 0).unwrap_err().field
    }

    #[test]
    fn a_chat_completions_message_is_an_action() {
        let a = Action::read(
            &json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "get_order", "arguments": "{\"order_id\": \"#1\"}"}},
                {"function": {"name": "find_user", "arguments": {"email": "a@b.c"}}}]}),
            3,
        )
        .unwrap();
        assert_eq!(&*a.message.content, "");
        assert_eq!(a.message.tool_calls[0].id, "c1");
        assert_eq!(a.message.tool_calls[1].id, "call_3_1");
        assert_eq!(a.message.tool_calls[1].arguments, r#"{"email":"a@b.c"}"#);
        assert!(a.tokens.is_none() && a.usage.is_none());
    }

    #[test]
    fn flat_calls_and_text_read_too() {
        let a = Action::read(
            &json!({"content": "Done.", "tool_calls": [{"name": "t", "arguments": "not json"}]}),
            0,
        )
        .unwrap();
        assert_eq!(&*a.message.content, "Done.");
        // Bad arguments are the tool's to report, as a batch episode's are.
        assert_eq!(a.message.tool_calls[0].arguments, "not json");
    }

    #[test]
    fn each_wrong_field_is_named_with_its_path() {
        assert_eq!(field(json!("hi")), "");
        assert_eq!(field(json!({"role": "user", "content": "x"})), "role");
        assert_eq!(field(json!({"content": 3})), "content");
        assert_eq!(field(json!({"contents": "x"})), "contents");
        assert_eq!(field(json!({"tool_calls": {}})), "tool_calls");
        assert_eq!(
            field(json!({"tool_calls": [{"function": {"arguments": "{}"}}]})),
            "tool_calls[0].function.name"
        );
        assert_eq!(
            field(json!({"tool_calls": [{"function": {"name": "a", "arguments": [1]}}]})),
            "tool_calls[0].function.arguments"
        );
        assert_eq!(
            field(json!({"tool_calls": [{"id": "a", "name": "x"}, {"id": "a", "name": "y"}]})),
            "tool_calls[1].id"
        );
        assert_eq!(
            field(json!({"tool_calls": [{"type": "code", "name": "x"}]})),
            "tool_calls[0].type"
        );
        assert_eq!(
            field(json!({"content": "x", "prompt_token_ids": [1]})),
            "generation_token_ids"
        );
        assert_eq!(
            field(
                json!({"content": "x", "prompt_token_ids": [1], "generation_token_ids": [2, -1],
                         "generation_log_probs": [0.0, 0.0]})
            ),
            "generation_token_ids[1]"
        );
        assert_eq!(
            field(
                json!({"content": "x", "prompt_token_ids": [1], "generation_token_ids": [2],
                         "generation_log_probs": []})
            ),
            "generation_log_probs"
        );
        assert_eq!(
            field(json!({"content": "x", "usage": {"prompt_tokens": -3}})),
            "usage.prompt_tokens"
        );
        let calls: Vec<Value> = (0..65).map(|i| json!({"name": format!("t{i}")})).collect();
        assert_eq!(field(json!({"tool_calls": calls})), "tool_calls");
    }

    #[test]
    fn token_fields_pass_through_untouched() {
        let a = Action::read(
            &json!({"content": "ok", "prompt_token_ids": [1, 2], "generation_token_ids": [3],
                    "generation_log_probs": [-0.125], "usage": {"prompt_tokens": 2, "completion_tokens": 1}}),
            0,
        )
        .unwrap();
        let t = a.tokens.unwrap();
        assert_eq!(
            (
                t.prompt_token_ids.clone(),
                t.generation_token_ids.clone(),
                t.generation_log_probs.clone()
            ),
            (vec![1, 2], vec![3], vec![-0.125])
        );
        assert_eq!(a.usage.unwrap().completion_tokens, 1);
    }

    #[test]
    fn an_action_over_two_mebibytes_is_refused_by_its_size() {
        let e = Action::read(&json!({"content": "x".repeat(MAX_ACTION_BYTES + 1)}), 0).unwrap_err();
        assert_eq!(e.field, "action");
        assert!(e.message.contains("2 MiB"), "{}", e.message);
    }
}
