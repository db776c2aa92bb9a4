//! `POST /v1/responses`: the Responses API, answered by the same scripted
//! turn as chat completions (`server::script_turn`). The input items become
//! the conversation (`instructions` its system message, `function_call`
//! items the assistant's tool calls, `function_call_output` items tool
//! results); the reply is `output` items.
//!
//! Two modifiers play what real servers do:
//! - `+reasoning`: each reply starts with a `reasoning` item, and, as OpenAI
//!   does, a request holding an earlier `function_call` without the reasoning
//!   item its turn began with is refused (400, `missing_reasoning_item`);
//! - `+tokens`: the last output item carries `prompt_token_ids`,
//!   `generation_token_ids` and `generation_log_probs`, as NeMo Gym's
//!   `vllm_model` with `return_token_id_information: true` writes them.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::faults::openai_error as error;
use super::server::{
    read_body, scenario_id, script_turn, with_announced, Answered, Asked, MockState,
};
use super::tokens;
use crate::llm::message::{Message, Role, ToolCall};
use crate::llm::responses::WireItem;

#[derive(Deserialize)]
struct IncomingResponsesRequest {
    model: String,
    #[serde(default)]
    instructions: Option<String>,
    input: Input,
    #[serde(default)]
    tools: Vec<IncomingTool>,
    #[serde(default)]
    parallel_tool_calls: Option<bool>,
    #[serde(default)]
    metadata: Option<HashMap<String, serde_json::Value>>,
    /// `true`: the reply as Server-Sent Events.
    #[serde(default)]
    stream: Option<bool>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Input {
    Text(String),
    Items(Vec<serde_json::Value>),
}

#[derive(Deserialize)]
struct IncomingTool {
    #[serde(default)]
    name: Option<String>,
}

fn text_of(content: Option<serde_json::Value>) -> String {
    match content {
        Some(serde_json::Value::String(s)) => s,
        Some(serde_json::Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
            .collect(),
        _ => String::new(),
    }
}

/// The conversation of the input items; `Err` names the item that cannot be
/// read. With `reasoning_required`, an assistant turn with tool calls must
/// begin with a reasoning item.
fn conversation(
    instructions: Option<String>,
    input: Input,
    reasoning_required: bool,
) -> Result<Vec<Message>, (String, &'static str)> {
    let mut messages: Vec<Message> = instructions.map(Message::system).into_iter().collect();
    let items = match input {
        Input::Text(text) => {
            messages.push(Message::user(text));
            return Ok(messages);
        }
        Input::Items(items) => items,
    };
    // Whether the previous item was assistant output (or its reasoning).
    let mut in_assistant_turn = false;
    for (i, value) in items.into_iter().enumerate() {
        let item: WireItem = serde_json::from_value(value)
            .map_err(|e| (format!("input item {i}: {e}"), "invalid_request_error"))?;
        let kind = item.kind.as_deref().unwrap_or("message");
        let assistant_output = kind == "function_call"
            || (kind == "message" && item.role.as_deref() == Some("assistant"));
        let continuing = in_assistant_turn;
        if kind == "function_call" && !continuing && reasoning_required {
            return Err((
                format!("input item {i} was provided without its required reasoning item"),
                "missing_reasoning_item",
            ));
        }
        in_assistant_turn = assistant_output || kind == "reasoning";
        match kind {
            "reasoning" => {}
            "message" => {
                let role = match item.role.as_deref() {
                    Some("developer") => Some(Role::System),
                    other => other.and_then(Role::parse),
                };
                let role = role.ok_or_else(|| {
                    (
                        format!("input item {i} has no known role"),
                        "invalid_request_error",
                    )
                })?;
                messages.push(Message::text(role, text_of(item.content)));
            }
            "function_call" => {
                let call = ToolCall {
                    id: item.call_id.unwrap_or_default(),
                    name: item.name.unwrap_or_default(),
                    arguments: crate::llm::wire::arguments_text(item.arguments),
                };
                match messages.last_mut() {
                    Some(last) if last.role == Role::Assistant && continuing => {
                        last.tool_calls.push(call)
                    }
                    _ => {
                        let mut m = Message::assistant("");
                        m.tool_calls.push(call);
                        messages.push(m);
                    }
                }
            }
            "function_call_output" => messages.push(Message::tool_result(
                item.call_id.unwrap_or_default(),
                text_of(item.output),
            )),
            other => {
                return Err((
                    format!("input item {i} has type {other:?}, which the mock does not read"),
                    "invalid_request_error",
                ))
            }
        }
    }
    Ok(messages)
}

pub(super) async fn responses(
    State(state): State<Arc<MockState>>,
    version: axum::http::Version,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let handler_started = std::time::Instant::now();
    let request: IncomingResponsesRequest = match read_body(&body) {
        Ok(r) => r,
        Err(response) => return *response,
    };
    let reasoning = request.model.split('+').any(|m| m == "reasoning");
    let stream = request.stream.unwrap_or(false);
    let messages = match conversation(request.instructions, request.input, reasoning) {
        Ok(messages) => messages,
        Err((message, code)) => return error(StatusCode::BAD_REQUEST, &message, code),
    };
    let asked = Asked {
        scenario: scenario_id(&headers, request.metadata.as_ref()),
        model: request.model,
        seed: 0,
        parallel: request.parallel_tool_calls.unwrap_or(true),
        messages,
        offered: request.tools.into_iter().filter_map(|t| t.name).collect(),
    };
    let answered = match script_turn(&state, version, &headers, asked, handler_started).await {
        Ok(answered) => answered,
        Err(response) => return response,
    };
    let announced = answered.announced;
    let body = reply_body(answered);
    if stream {
        return super::stream::sse(super::stream::response_events(&body));
    }
    with_announced(Json(body), announced)
}

/// The Responses API reply of a scripted turn.
fn reply_body(answered: Answered) -> serde_json::Value {
    let Answered {
        reply,
        model,
        behaviour,
        seen,
        prompt_tokens,
        completion_tokens,
        prompt_text,
        ..
    } = answered;
    let mut output = Vec::new();
    if behaviour.modifiers.reasoning {
        output.push(
            json!({"type": "reasoning", "id": format!("rs_{seen}"), "status": "completed",
            "summary": [{"type": "summary_text", "text": "The mock thinks before it answers."}]}),
        );
    }
    if !reply.content.is_empty() || reply.tool_calls.is_empty() {
        output.push(
            json!({"type": "message", "id": format!("msg_{seen}"), "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": reply.content, "annotations": []}]}),
        );
    }
    for call in &reply.tool_calls {
        output.push(
            json!({"type": "function_call", "id": format!("fc_{}", call.id),
            "call_id": call.id, "name": call.name, "arguments": call.arguments,
            "status": "completed"}),
        );
    }
    if behaviour.modifiers.tokens {
        let generation = tokens::token_ids(&tokens::generated_text(&reply));
        let log_probs: Vec<f64> = generation.iter().map(|id| tokens::log_prob(*id)).collect();
        if let Some(last) = output.last_mut() {
            last["prompt_token_ids"] = json!(tokens::token_ids(&prompt_text));
            last["generation_token_ids"] = json!(generation);
            last["generation_log_probs"] = json!(log_probs);
        }
    }
    json!({
        "id": format!("resp_mock_{seen}"),
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "completed",
        "error": null,
        "incomplete_details": null,
        "output": output,
        "usage": {
            "input_tokens": prompt_tokens,
            "output_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(json: serde_json::Value) -> Input {
        Input::Items(json.as_array().unwrap().clone())
    }

    #[test]
    fn input_items_become_the_conversation_with_calls_on_the_assistant_message() {
        let m = conversation(
            Some("rules".into()),
            items(json!([
                {"type": "message", "role": "user", "content": "hi"},
                {"type": "message", "role": "assistant", "content": "Let me look."},
                {"type": "function_call", "call_id": "c1", "name": "get", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "{\"ok\":1}"},
                {"role": "user", "content": [{"type": "input_text", "text": "thanks"}]}
            ])),
            false,
        )
        .unwrap();
        let roles: Vec<Role> = m.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::System,
                Role::User,
                Role::Assistant,
                Role::Tool,
                Role::User
            ]
        );
        assert_eq!(m[2].tool_calls[0].id, "c1");
        assert_eq!(&*m[4].content, "thanks");
    }

    #[test]
    fn with_reasoning_required_an_assistant_turn_without_its_reasoning_item_is_refused() {
        let turn = json!([
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "c1", "name": "get", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "{}"}
        ]);
        let (_, code) = conversation(None, items(turn.clone()), true).unwrap_err();
        assert_eq!(code, "missing_reasoning_item");
        let mut with = turn.as_array().unwrap().clone();
        with.insert(1, json!({"type": "reasoning", "id": "rs_1", "summary": []}));
        assert!(conversation(None, Input::Items(with), true).is_ok());
    }
}
