//! A Responses API request body, borrowing everything it sends from the
//! `ChatRequest` (no copy per call, as the chat wire format).
//!
//! - The leading system message becomes `instructions`; any later one stays
//!   an input message with role `system`.
//! - An assistant message is its reasoning items (as the server returned
//!   them), then its text as a `message` item (when it has text, or nothing
//!   else), then one `function_call` item per tool call.
//! - A tool result is a `function_call_output` item naming its `call_id`.
//! - Tools are flat `{"type": "function", "name", ...}` with `strict: false`
//!   (the Responses API makes function tools strict by default, which refuses
//!   schemas that do not list every property as required).
//! - No `seed`: the Responses API has none, and OpenAI and NeMo Gym refuse
//!   unknown fields. The scenario id, sent to the mock in a header, also goes
//!   in `metadata.sparring_scenario`, the one place a proxy such as NeMo Gym's
//!   `vllm_model` passes on to the server behind it.

use serde::Serialize;
use serde_json::value::RawValue;

use crate::llm::chat::ChatRequest;
use crate::llm::message::{Message, Role, ToolSpec};
use crate::llm::wire::Sampling;

/// The metadata key holding the scenario id.
pub const SCENARIO_METADATA_KEY: &str = "sparring_scenario";

/// OpenAI's limit on a metadata value; a longer scenario id is not sent there.
const METADATA_VALUE_MAX: usize = 512;

#[derive(Debug, Serialize)]
pub struct ResponsesRequest<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: Vec<InputItem<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    /// Only with tools, as for chat completions.
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<Metadata<'a>>,
}

#[derive(Debug, Serialize)]
struct Metadata<'a> {
    sparring_scenario: &'a str,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum InputItem<'a> {
    Message {
        #[serde(rename = "type")]
        kind: &'static str,
        role: &'static str,
        content: &'a str,
    },
    FunctionCall {
        #[serde(rename = "type")]
        kind: &'static str,
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    FunctionCallOutput {
        #[serde(rename = "type")]
        kind: &'static str,
        call_id: &'a str,
        output: &'a str,
    },
    /// A reasoning item, as the server wrote it.
    Kept(&'a RawValue),
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::Value,
    strict: bool,
}

pub fn to_request<'a>(
    model: &'a str,
    sampling: &Sampling,
    req: &'a ChatRequest,
) -> ResponsesRequest<'a> {
    let (instructions, rest) = match req.messages.split_first() {
        Some((first, rest)) if first.role == Role::System => (Some(&*first.content), rest),
        _ => (None, &req.messages[..]),
    };
    let mut input = Vec::with_capacity(rest.len() + 1);
    for message in rest {
        push_items(message, &mut input);
    }
    ResponsesRequest {
        model,
        instructions,
        input,
        tools: req.tools.iter().map(to_tool).collect(),
        temperature: req.temperature.or(sampling.temperature),
        top_p: sampling.top_p,
        max_output_tokens: sampling.max_tokens_for(req),
        parallel_tool_calls: req.parallel_tool_calls.filter(|_| !req.tools.is_empty()),
        metadata: req
            .scenario
            .as_deref()
            .filter(|s| s.len() <= METADATA_VALUE_MAX)
            .map(|sparring_scenario| Metadata { sparring_scenario }),
    }
}

fn to_tool(t: &ToolSpec) -> Tool<'_> {
    Tool {
        kind: "function",
        name: &t.name,
        description: &t.description,
        parameters: &t.parameters,
        strict: false,
    }
}

fn message<'a>(role: &'static str, content: &'a str) -> InputItem<'a> {
    InputItem::Message {
        kind: "message",
        role,
        content,
    }
}

fn push_items<'a>(m: &'a Message, input: &mut Vec<InputItem<'a>>) {
    match m.role {
        Role::System => input.push(message("system", &m.content)),
        Role::User | Role::Assistant => {
            if let Some(reasoning) = &m.reasoning {
                input.extend(reasoning.items().iter().map(|item| InputItem::Kept(item)));
            }
            let role = if m.role == Role::User {
                "user"
            } else {
                "assistant"
            };
            if !m.content.is_empty() || (m.tool_calls.is_empty() && m.reasoning.is_none()) {
                input.push(message(role, &m.content));
            }
            input.extend(m.tool_calls.iter().map(|c| InputItem::FunctionCall {
                kind: "function_call",
                call_id: &c.id,
                name: &c.name,
                arguments: &c.arguments,
            }));
        }
        Role::Tool => input.push(InputItem::FunctionCallOutput {
            kind: "function_call_output",
            call_id: m.tool_call_id.as_deref().unwrap_or(""),
            output: &m.content,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::ToolCall;
    use crate::llm::reasoning::Reasoning;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_string()).unwrap()
    }

    #[test]
    fn a_conversation_becomes_instructions_and_input_items_with_reasoning_before_its_calls() {
        let mut call = Message::assistant("");
        call.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "get_order".into(),
            arguments: "{\"order_id\":\"#1\"}".into(),
        });
        call.reasoning = Some(Reasoning::new(vec![raw(
            r#"{"id":"rs_1","type":"reasoning","summary":[]}"#,
        )]));
        let req = ChatRequest {
            messages: vec![
                Message::system("be kind"),
                Message::user("where is my order?"),
                call,
                Message::tool_result("c1", "{\"status\":\"shipped\"}"),
                Message::assistant("It has shipped."),
            ],
            tools: vec![ToolSpec {
                name: "get_order".into(),
                description: "d".into(),
                parameters: serde_json::json!({"type": "object"}),
            }]
            .into(),
            seed: Some(7),
            scenario: Some("retail_001".into()),
            parallel_tool_calls: Some(false),
            ..ChatRequest::default()
        };
        let sampling = Sampling {
            temperature: Some(0.5),
            max_tokens: Some(64),
            ..Sampling::default()
        };
        let body = serde_json::to_value(to_request("m", &sampling, &req)).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "model": "m",
                "instructions": "be kind",
                "input": [
                    {"type": "message", "role": "user", "content": "where is my order?"},
                    {"id": "rs_1", "type": "reasoning", "summary": []},
                    {"type": "function_call", "call_id": "c1", "name": "get_order",
                     "arguments": "{\"order_id\":\"#1\"}"},
                    {"type": "function_call_output", "call_id": "c1",
                     "output": "{\"status\":\"shipped\"}"},
                    {"type": "message", "role": "assistant", "content": "It has shipped."}
                ],
                "tools": [{"type": "function", "name": "get_order", "description": "d",
                           "parameters": {"type": "object"}, "strict": false}],
                "temperature": 0.5,
                "max_output_tokens": 64,
                "parallel_tool_calls": false,
                "metadata": {"sparring_scenario": "retail_001"}
            })
        );
    }

    #[test]
    fn without_tools_no_parallel_tool_calls_and_without_a_leading_system_message_no_instructions() {
        let req = ChatRequest {
            messages: vec![Message::user("hi"), Message::system("later rule")],
            parallel_tool_calls: Some(false),
            ..ChatRequest::default()
        };
        let body = serde_json::to_value(to_request("m", &Sampling::default(), &req)).unwrap();
        assert!(body.get("instructions").is_none(), "{body}");
        assert!(body.get("parallel_tool_calls").is_none(), "{body}");
        assert!(body.get("seed").is_none(), "{body}");
        assert_eq!(body["input"][1]["role"], "system");
    }
}
