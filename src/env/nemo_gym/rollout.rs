//! A conversation as a NeMo Gym rollout: the row's fields, its
//! `responses_create_params` and a Responses-API `response`.
//!
//! What goes where: the row's input (the conversation's prelude) stays as
//! written. In a conversation with a simulated user, everything up to the
//! user's last answered message joins the input (Responses input items:
//! messages, function calls and their outputs), and the policy's last turn is
//! the response's `output`, as in NeMo Gym's multi-turn rows; with no later
//! user message the whole of the policy's work is the output. A user message
//! nobody answered (a goodbye) is left out.

use serde_json::{json, Map, Value};

use crate::llm::message::{Message, Role};
use crate::persona::nemo_gym::REQUEST_FIELD;

use super::tool_name::normalize_tool_name;

/// How many messages the row's input makes (a string input is one).
pub fn prelude_len(request: &Map<String, Value>) -> usize {
    match request.get("input") {
        Some(Value::Array(items)) => items.len(),
        Some(Value::String(_)) => 1,
        _ => 0,
    }
}

/// The verify request for `row` after the conversation `messages` (the
/// policy's view, starting with the row's prelude).
pub fn verify_request(row: &Map<String, Value>, messages: &[Message], model: &str) -> Value {
    let empty = Map::new();
    let request = row
        .get(REQUEST_FIELD)
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let parts = Parts::of(prelude_len(request), messages);
    let (more_input, output) = (&messages[parts.more_input], &messages[parts.output]);

    let mut request = request.clone();
    if !more_input.is_empty() {
        let mut input = match request.remove("input") {
            Some(Value::Array(items)) => items,
            Some(Value::String(text)) => vec![json!({"role": "user", "content": text})],
            _ => Vec::new(),
        };
        input.extend(more_input.iter().flat_map(input_items));
        request.insert("input".into(), Value::Array(input));
    }
    let tools = request.get("tools").cloned().unwrap_or_else(|| json!([]));
    let request = drop_nulls(Value::Object(request));

    let mut output_items = Vec::new();
    for (i, message) in output.iter().enumerate() {
        output_items.extend(output_items_of(message, i));
    }
    let response = json!({
        "id": format!("resp_sparring_{}", messages.len()),
        "object": "response",
        "created_at": std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        "model": model,
        "output": output_items,
        "parallel_tool_calls": request.get("parallel_tool_calls").and_then(Value::as_bool).unwrap_or(true),
        "tool_choice": "auto",
        "tools": response_tools(&tools),
    });

    let mut body = row.clone();
    body.insert(REQUEST_FIELD.into(), request);
    body.insert("response".into(), response);
    Value::Object(body)
}

/// Where the messages after a row's prelude go in its rollout (indices into
/// the conversation's messages, the policy's view): `more_input` joins the
/// request's input, `output` is the response's output; user messages after
/// the policy's last reply are in neither.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts {
    pub more_input: std::ops::Range<usize>,
    pub output: std::ops::Range<usize>,
}

impl Parts {
    /// The parts of `messages` after a prelude of `prelude` messages (the
    /// row's input items, one message each).
    pub fn of(prelude: usize, messages: &[Message]) -> Parts {
        let start = prelude.min(messages.len());
        let rest = &messages[start..];
        // Leave out user messages after the policy's last reply.
        let end = rest
            .iter()
            .rposition(|m| m.role != Role::User)
            .map_or(0, |i| i + 1);
        let rest = &rest[..end];
        match rest.iter().rposition(|m| m.role == Role::User) {
            Some(last_user) => Parts {
                more_input: start..start + last_user + 1,
                output: start + last_user + 1..start + end,
            },
            None => Parts {
                more_input: start..start,
                output: start..start + end,
            },
        }
    }
}

/// NeMo Gym's `/verify` answers 422 to nulls its models do not allow
/// (recorded rollouts carry `"tool_choice": null` and the like).
pub fn drop_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, drop_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(drop_nulls).collect()),
        other => other,
    }
}

/// Response tools are in the Responses shape; Chat Completions tools are
/// converted.
pub fn response_tools(tools: &Value) -> Value {
    let Some(list) = tools.as_array() else {
        return json!([]);
    };
    Value::Array(
        list.iter()
            .map(|tool| match tool.get("function") {
                Some(f) => json!({
                    "type": "function",
                    "name": f.get("name").cloned().unwrap_or(Value::Null),
                    "description": f.get("description").cloned().unwrap_or(Value::Null),
                    "parameters": f.get("parameters").cloned().unwrap_or_else(|| json!({})),
                    "strict": f.get("strict").and_then(Value::as_bool).unwrap_or(false),
                }),
                None => tool.clone(),
            })
            .map(drop_nulls)
            .collect(),
    )
}

/// A message as Responses input items.
pub(super) fn input_items(message: &Message) -> Vec<Value> {
    match message.role {
        Role::System => vec![json!({"role": "system", "content": &*message.content})],
        Role::User => vec![json!({"role": "user", "content": &*message.content})],
        Role::Assistant => {
            let mut items = Vec::new();
            if !message.content.trim().is_empty() {
                items.push(json!({"role": "assistant", "content": &*message.content}));
            }
            for call in &message.tool_calls {
                items.push(json!({
                    "type": "function_call",
                    "call_id": call.id,
                    "name": normalize_tool_name(&call.name),
                    "arguments": call.arguments,
                }));
            }
            items
        }
        Role::Tool => vec![json!({
            "type": "function_call_output",
            "call_id": message.tool_call_id.clone().unwrap_or_default(),
            "output": &*message.content,
        })],
    }
}

/// A message of the policy's last turn as Responses output items.
pub(super) fn output_items_of(message: &Message, index: usize) -> Vec<Value> {
    match message.role {
        Role::Assistant => {
            let mut items = Vec::new();
            if !message.content.trim().is_empty() {
                items.push(json!({
                    "type": "message",
                    "id": format!("msg_{index}"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": &*message.content, "annotations": []}],
                }));
            }
            for (k, call) in message.tool_calls.iter().enumerate() {
                items.push(json!({
                    "type": "function_call",
                    "id": format!("fc_{index}_{k}"),
                    "call_id": call.id,
                    "name": normalize_tool_name(&call.name),
                    "arguments": call.arguments,
                    "status": "completed",
                }));
            }
            items
        }
        Role::Tool => vec![json!({
            "type": "function_call_output",
            "call_id": message.tool_call_id.clone().unwrap_or_default(),
            "output": &*message.content,
        })],
        // The output holds the policy's turn only.
        Role::System | Role::User => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::ToolCall;

    fn row(input: Value) -> Map<String, Value> {
        json!({
            "id": 3,
            REQUEST_FIELD: {"input": input, "tool_choice": null, "parallel_tool_calls": false},
            "ground_truth": "x",
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    fn call(id: &str, name: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: "".into(),
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: "{\"a\": 1}".into(),
            }],
            tool_call_id: None,
            reasoning: None,
        }
    }

    #[test]
    fn a_single_step_conversation_keeps_the_input_and_puts_the_policys_work_in_the_output() {
        let row =
            row(json!([{"role": "system", "content": "S"}, {"role": "user", "content": "do it"}]));
        let messages = vec![
            Message::system("S"),
            Message::user("do it"),
            call("c1", "mcp__workplace__email_send"),
            Message::tool_result("c1", "{\"output\": \"sent\"}"),
            Message::assistant("Done."),
        ];
        let body = verify_request(&row, &messages, "m");
        assert_eq!(body["id"], 3);
        assert_eq!(body["ground_truth"], "x");
        let request = &body[REQUEST_FIELD];
        assert_eq!(request["input"].as_array().unwrap().len(), 2);
        assert!(request.get("tool_choice").is_none(), "nulls are dropped");
        let output = body["response"]["output"].as_array().unwrap();
        let types: Vec<&str> = output.iter().map(|o| o["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["function_call", "function_call_output", "message"]);
        assert_eq!(
            output[0]["name"], "email_send",
            "mcp__server__ prefix removed"
        );
        assert_eq!(output[2]["content"][0]["text"], "Done.");
        assert_eq!(body["response"]["parallel_tool_calls"], false);
    }

    #[test]
    fn with_later_user_turns_the_history_joins_the_input_and_the_last_turn_is_the_output() {
        let row = row(json!("add lunch"));
        let messages = vec![
            Message::user("add lunch"),
            Message::assistant("[lunch at 12]"),
            Message::user("move it to 1pm"),
            Message::assistant("[lunch at 13]"),
            Message::user("thanks, bye"),
        ];
        let body = verify_request(&row, &messages, "m");
        let input = body[REQUEST_FIELD]["input"].as_array().unwrap();
        let roles: Vec<&str> = input.iter().map(|i| i["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        let output = body["response"]["output"].as_array().unwrap();
        assert_eq!(output.len(), 1);
        assert_eq!(output[0]["content"][0]["text"], "[lunch at 13]");
    }
}
