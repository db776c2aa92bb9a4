//! The mock's token information, as vLLM gives it when asked (what NeMo
//! Gym's `vllm_model` asks for with `return_token_id_information: true`):
//! - chat completions with `logprobs` get `choices[0].logprobs.content`, one
//!   entry per generated token, named `token_id:N` with
//!   `return_tokens_as_token_ids`;
//! - with `return_token_ids`, the response's `prompt_token_ids` and the
//!   choice's `token_ids`;
//! - `POST /tokenize` (vLLM's, at the server's root: `vllm_model` calls it for
//!   the prompt's ids when the reply has none) gives `tokens` for the same
//!   messages and tools, the same ids.
//!
//! The ids are fake and deterministic: one token per 4 bytes of text, its id
//! a hash of them, so the same text always gives the same ids; a token's log
//! probability comes from its id.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::faults::openai_error as error;
use super::server::{read_body, MockState};
use crate::llm::message::Message;

/// Ids below this; like a real vocabulary, they fit in a `u32` with room.
const VOCABULARY: u32 = 100_000;

/// The ids of `text`.
pub fn token_ids(text: &str) -> Vec<u32> {
    text.as_bytes()
        .chunks(4)
        .map(|chunk| {
            let hash = chunk.iter().fold(0x811c_9dc5_u32, |h, b| {
                (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
            });
            hash % VOCABULARY
        })
        .collect()
}

/// The log probability of token `id`, in [-5, 0).
pub fn log_prob(id: u32) -> f64 {
    -f64::from(id % 500 + 1) / 100.0
}

/// What the tokenizer reads of a prompt: each message's role, text and tool
/// calls, then the tools offered.
pub fn prompt_text(messages: &[Message], tools: &[String]) -> String {
    let mut text = String::new();
    for m in messages {
        text.push_str(m.role.as_str());
        text.push('\n');
        text.push_str(&m.content);
        for call in &m.tool_calls {
            text.push_str(&call.name);
            text.push_str(&call.arguments);
        }
        text.push('\n');
    }
    for tool in tools {
        text.push_str(tool);
        text.push('\n');
    }
    text
}

/// What a reply generates, as text: its words, then its calls.
pub fn generated_text(reply: &Message) -> String {
    let mut text = reply.content.to_string();
    for call in &reply.tool_calls {
        text.push_str(&call.name);
        text.push_str(&call.arguments);
    }
    text
}

/// What a chat completion request asked for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Capture {
    pub logprobs: bool,
    pub as_token_ids: bool,
    pub token_ids: bool,
}

impl Capture {
    /// Put the token fields asked for on the response `body` and its `choice`.
    pub fn fill(
        &self,
        prompt: &str,
        reply: &Message,
        body: &mut serde_json::Value,
        choice: &mut serde_json::Value,
    ) {
        if !self.logprobs && !self.token_ids {
            return;
        }
        let generated = generated_text(reply);
        let ids = token_ids(&generated);
        if self.logprobs {
            let content: Vec<_> = ids
                .iter()
                .zip(generated.as_bytes().chunks(4))
                .map(|(id, piece)| {
                    let token = if self.as_token_ids {
                        format!("token_id:{id}")
                    } else {
                        String::from_utf8_lossy(piece).into_owned()
                    };
                    json!({"token": token, "logprob": log_prob(*id), "bytes": piece, "top_logprobs": []})
                })
                .collect();
            choice["logprobs"] = json!({"content": content});
        }
        if self.token_ids {
            body["prompt_token_ids"] = json!(token_ids(prompt));
            choice["token_ids"] = json!(ids);
        }
    }
}

#[derive(Deserialize)]
struct TokenizeRequest {
    #[serde(default)]
    messages: Option<Vec<serde_json::Value>>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    tools: Vec<serde_json::Value>,
}

/// `POST /tokenize`: the ids of a chat's messages (and tools) or of a prompt.
pub(super) async fn tokenize(State(_state): State<Arc<MockState>>, body: Bytes) -> Response {
    let request: TokenizeRequest = match read_body(&body) {
        Ok(r) => r,
        Err(response) => return *response,
    };
    let text = match (request.messages, request.prompt) {
        (Some(messages), _) => {
            let messages: Vec<Message> = messages
                .into_iter()
                .filter_map(super::server::message_of_value)
                .collect();
            let tools: Vec<String> = request
                .tools
                .iter()
                .filter_map(|t| t.pointer("/function/name").and_then(|n| n.as_str()))
                .map(str::to_string)
                .collect();
            prompt_text(&messages, &tools)
        }
        (None, Some(prompt)) => prompt,
        (None, None) => {
            return error(
                StatusCode::BAD_REQUEST,
                "give messages or prompt",
                "invalid_request_error",
            )
        }
    };
    let tokens = token_ids(&text);
    use axum::response::IntoResponse;
    Json(json!({"count": tokens.len(), "max_model_len": 131072, "tokens": tokens, "token_strs": null}))
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_gives_the_same_ids_one_per_four_bytes() {
        assert_eq!(token_ids("hello world"), token_ids("hello world"));
        assert_eq!(token_ids("hello world").len(), 3);
        assert_ne!(token_ids("hello"), token_ids("hellp"));
        assert!(token_ids("anything at all")
            .iter()
            .all(|id| *id < VOCABULARY));
        assert!((-5.0..0.0).contains(&log_prob(499)));
    }
}
