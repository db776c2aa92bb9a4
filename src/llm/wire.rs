//! Translation between our messages and the Chat Completions wire format.
//! Requests are serialized straight from our messages and tool specs (borrowed,
//! no copy per call; async-openai sends any `Serialize` body); responses are read
//! leniently, because real servers (llama.cpp, vLLM, Ollama) differ: odd or
//! missing `finish_reason`, missing `id`/`usage`, arguments as objects, content as
//! parts, extra fields such as `reasoning_content`.

use serde::{Deserialize, Serialize};

use super::chat::{ChatRequest, Usage};
use super::error::LlmError;
use super::message::{Message, Role, ToolCall, ToolSpec};

/// Sampling parameters of an endpoint.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sampling {
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub max_tokens: Option<u32>,
}

impl Sampling {
    /// The request's own `max_tokens`, which may only lower the endpoint's.
    pub fn max_tokens_for(&self, req: &ChatRequest) -> Option<u32> {
        match (req.max_tokens, self.max_tokens) {
            (Some(asked), Some(endpoint)) => Some(asked.min(endpoint)),
            (asked, endpoint) => asked.or(endpoint),
        }
    }
}

/// A chat completion request body, borrowing everything it sends.
#[derive(Debug, Serialize)]
pub struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessageOut<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    /// `max_tokens` rather than `max_completion_tokens`: what llama.cpp, vLLM and
    /// Ollama read (OpenAI accepts both for chat models).
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
    /// Only with tools: OpenAI refuses it on a request without any.
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    /// `capture_tokens = true`: what asks vLLM for token ids.
    #[serde(flatten)]
    capture: Option<super::token_fields::CaptureFields>,
}

impl WireRequest<'_> {
    /// Ask for the generation's token ids and log probabilities.
    pub fn capturing_tokens(self) -> Self {
        WireRequest {
            capture: Some(super::token_fields::CaptureFields::VLLM),
            ..self
        }
    }
}

#[derive(Debug, Serialize)]
struct WireMessageOut<'a> {
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCallOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct WireCallOut<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionOut<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunctionOut<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireToolFunction<'a>,
}

#[derive(Debug, Serialize)]
struct WireToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::Value,
}

pub fn to_request<'a>(
    model: &'a str,
    sampling: &Sampling,
    req: &'a ChatRequest,
) -> WireRequest<'a> {
    WireRequest {
        model,
        messages: req.messages.iter().map(to_wire_message).collect(),
        tools: req.tools.iter().map(to_wire_tool).collect(),
        temperature: req.temperature.or(sampling.temperature),
        top_p: sampling.top_p,
        max_tokens: sampling.max_tokens_for(req),
        // llama.cpp and others take a 32-bit seed; keep it in range everywhere.
        seed: req.seed.map(|s| (s & 0x7fff_ffff) as i64),
        parallel_tool_calls: req.parallel_tool_calls.filter(|_| !req.tools.is_empty()),
        capture: None,
    }
}

fn to_wire_tool(t: &ToolSpec) -> WireTool<'_> {
    WireTool {
        kind: "function",
        function: WireToolFunction {
            name: &t.name,
            description: &t.description,
            parameters: &t.parameters,
        },
    }
}

fn to_wire_message(m: &Message) -> WireMessageOut<'_> {
    let tool_calls: Vec<WireCallOut<'_>> = m
        .tool_calls
        .iter()
        .map(|c| WireCallOut {
            id: &c.id,
            kind: "function",
            function: WireFunctionOut {
                name: &c.name,
                arguments: &c.arguments,
            },
        })
        .collect();
    // An assistant message that only calls tools has no content field.
    let content = (m.role != Role::Assistant || !m.content.is_empty() || tool_calls.is_empty())
        .then_some(&*m.content);
    WireMessageOut {
        role: m.role.as_str(),
        content,
        tool_calls,
        tool_call_id: if m.role == Role::Tool {
            Some(m.tool_call_id.as_deref().unwrap_or(""))
        } else {
            None
        },
    }
}

/// A message as chat completions write it (`tool_calls` with `type` and
/// `function`, no content on an assistant message that only calls tools):
/// what a stepped session shows its caller.
pub fn message_json(m: &Message) -> serde_json::Value {
    serde_json::to_value(to_wire_message(m)).unwrap_or(serde_json::Value::Null)
}

/// A tool spec as chat completions take it (`{"type": "function", "function": ...}`).
pub fn tool_json(t: &ToolSpec) -> serde_json::Value {
    serde_json::to_value(to_wire_tool(t)).unwrap_or(serde_json::Value::Null)
}

/// A chat completion response as real servers send it, every field optional.
#[derive(Debug, Deserialize)]
pub struct WireResponse {
    #[serde(default)]
    pub(super) choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// vLLM's, with `return_token_ids`.
    #[serde(default)]
    pub(super) prompt_token_ids: Option<Vec<u32>>,
}

impl WireResponse {
    /// The prompt and completion tokens the server reported, if it reported both.
    pub fn reported_usage(&self) -> Option<(u64, u64)> {
        let usage = self.usage.as_ref()?;
        Some((usage.prompt_tokens?, usage.completion_tokens?))
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct WireChoice {
    #[serde(default)]
    pub(super) message: Option<WireMessage>,
    #[serde(default)]
    finish_reason: Option<serde_json::Value>,
    /// vLLM's, with `return_token_ids`.
    #[serde(default)]
    pub(super) token_ids: Option<Vec<u32>>,
    #[serde(default)]
    pub(super) logprobs: Option<super::token_fields::ChoiceLogprobs>,
}

#[derive(Debug, Deserialize)]
pub(super) struct WireMessage {
    #[serde(default)]
    content: Option<serde_json::Value>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
    /// NeMo Gym's model servers put the whole token bundle on the message.
    #[serde(default)]
    pub(super) prompt_token_ids: Option<Vec<u32>>,
    #[serde(default)]
    pub(super) generation_token_ids: Option<Vec<u32>>,
    #[serde(default)]
    pub(super) generation_log_probs: Option<Vec<f64>>,
}

#[derive(Debug, Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Debug, Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

/// A tool call's arguments as text: as sent when a string (valid JSON or
/// not: the environment reports that), as JSON text when an object, `{}`
/// when absent.
pub fn arguments_text(arguments: Option<serde_json::Value>) -> String {
    match arguments {
        None | Some(serde_json::Value::Null) => "{}".to_string(),
        Some(serde_json::Value::String(s)) => s,
        Some(object) => object.to_string(),
    }
}

/// The assistant message, finish reason and usage of a response.
pub fn from_response(
    resp: WireResponse,
    call_id_prefix: &str,
) -> Result<(Message, Option<String>, Usage), LlmError> {
    let choice = resp
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| LlmError::Malformed("the response has no choices".into()))?;
    let wire = choice
        .message
        .ok_or_else(|| LlmError::Malformed("the first choice has no message".into()))?;
    let content = match wire.content {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::String(s)) => s,
        // Content parts: keep the text parts in order.
        Some(serde_json::Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
            .collect::<Vec<_>>()
            .join(""),
        Some(other) => {
            return Err(LlmError::Malformed(format!(
                "message content is neither text nor parts: {other}"
            )))
        }
    };
    let mut tool_calls = Vec::new();
    for (i, call) in wire.tool_calls.unwrap_or_default().into_iter().enumerate() {
        let Some(function) = call.function else {
            return Err(LlmError::Malformed(format!(
                "tool call {i} has no function"
            )));
        };
        let name = function.name.unwrap_or_default();
        if name.is_empty() {
            return Err(LlmError::Malformed(format!(
                "tool call {i} has no function name"
            )));
        }
        let arguments = arguments_text(function.arguments);
        let id = call
            .id
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("{call_id_prefix}_{i}"));
        tool_calls.push(ToolCall {
            id,
            name,
            arguments,
        });
    }
    let finish_reason = match choice.finish_reason {
        Some(serde_json::Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    };
    let usage = resp.usage.map_or(Usage::default(), |u| Usage {
        prompt_tokens: u.prompt_tokens.unwrap_or(0),
        completion_tokens: u.completion_tokens.unwrap_or(0),
    });
    let message = Message {
        role: Role::Assistant,
        content: content.into(),
        tool_calls,
        tool_call_id: None,
        reasoning: None,
    };
    Ok((message, finish_reason, usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<(Message, Option<String>, Usage), LlmError> {
        let resp: WireResponse = serde_json::from_str(json).unwrap();
        from_response(resp, "call")
    }

    #[test]
    fn odd_finish_reasons_extra_fields_and_missing_usage_are_tolerated() {
        let (m, finish, usage) = parse(
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi","reasoning_content":"thinking"},"finish_reason":""}],"timings":{}}"#,
        )
        .unwrap();
        assert_eq!(&*m.content, "hi");
        assert_eq!(finish, None);
        assert_eq!(usage, Usage::default());
        let (_, finish, _) =
            parse(r#"{"choices":[{"message":{"content":"x"},"finish_reason":"eos"}]}"#).unwrap();
        assert_eq!(finish.as_deref(), Some("eos"));
    }

    #[test]
    fn tool_calls_without_ids_and_with_object_arguments_are_normalised() {
        let (m, _, _) = parse(
            r##"{"choices":[{"message":{"content":null,"tool_calls":[{"type":"function","function":{"name":"get_order","arguments":{"order_id":"#1"}}}]}}]}"##,
        )
        .unwrap();
        assert_eq!(m.tool_calls.len(), 1);
        assert_eq!(m.tool_calls[0].id, "call_0");
        assert_eq!(m.tool_calls[0].arguments, r##"{"order_id":"#1"}"##);
        assert_eq!(&*m.content, "");
    }

    #[test]
    fn a_response_without_choices_is_malformed() {
        let e = parse(r#"{"object":"chat.completion"}"#).unwrap_err();
        assert_eq!(e.class(), "malformed_response");
    }

    #[test]
    fn requests_carry_tool_calls_tool_results_and_tools_in_the_openai_shape() {
        let mut call = Message::assistant("");
        call.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "get_order".into(),
            arguments: "{\"order_id\":\"#1\"}".into(),
        });
        let req = ChatRequest {
            role: crate::llm::Role::Policy,
            messages: vec![
                Message::system("s"),
                Message::user("u"),
                call,
                Message::tool_result("c1", "{}"),
            ],
            tools: vec![ToolSpec {
                name: "get_order".into(),
                description: "d".into(),
                parameters: serde_json::json!({"type": "object"}),
            }]
            .into(),
            seed: Some(u64::MAX),
            scenario: None,
            temperature: None,
            max_tokens: None,
            parallel_tool_calls: Some(false),
        };
        let sampling = Sampling {
            max_tokens: Some(64),
            ..Sampling::default()
        };
        let body = serde_json::to_value(to_request("m", &sampling, &req)).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "s"},
                    {"role": "user", "content": "u"},
                    {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "get_order", "arguments": "{\"order_id\":\"#1\"}"}}]},
                    {"role": "tool", "content": "{}", "tool_call_id": "c1"}
                ],
                "tools": [{"type": "function", "function": {"name": "get_order", "description": "d",
                    "parameters": {"type": "object"}}}],
                "max_tokens": 64,
                "seed": 0x7fff_ffff,
                "parallel_tool_calls": false
            })
        );
        // Without tools, OpenAI refuses `parallel_tool_calls`: it is not sent.
        let no_tools = ChatRequest {
            tools: Vec::new().into(),
            ..req
        };
        let body = serde_json::to_value(to_request("m", &sampling, &no_tools)).unwrap();
        assert!(body.get("parallel_tool_calls").is_none(), "{body}");
    }

    #[test]
    fn a_request_may_set_its_temperature_and_lower_but_not_raise_max_tokens() {
        let sampling = Sampling {
            temperature: Some(0.7),
            max_tokens: Some(100),
            ..Sampling::default()
        };
        let body = |temperature, max_tokens| {
            let req = ChatRequest {
                temperature,
                max_tokens,
                ..ChatRequest::default()
            };
            serde_json::to_value(to_request("m", &sampling, &req)).unwrap()
        };
        let plain = body(None, None);
        assert_eq!(plain["max_tokens"], 100);
        assert_eq!(plain["temperature"].as_f64().map(|t| t as f32), Some(0.7));
        let judge = body(Some(0.0), Some(40));
        assert_eq!(judge["max_tokens"], 40);
        assert_eq!(judge["temperature"], 0.0);
        assert_eq!(body(None, Some(4000))["max_tokens"], 100);
    }

    #[test]
    fn content_parts_are_joined() {
        let (m, _, _) = parse(
            r#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}"#,
        )
        .unwrap();
        assert_eq!(&*m.content, "ab");
    }
}
