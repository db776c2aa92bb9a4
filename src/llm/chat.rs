//! The `ChatModel` trait: one chat-completion call, already rate-limited and
//! retried. The engine knows this trait, not HTTP.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::error::LlmError;
use super::message::{Message, ToolSpec};
use super::raw::{RawReply, RawRequest};

/// What a call is for. Several roles may share one endpoint (and its limits);
/// the role is known by the caller only, so it travels with the request, for
/// telemetry and logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Role {
    Policy,
    User,
    Judge,
    /// The model that plays a `simulated` environment's tools.
    Tools,
    /// A caller that did not say (a test, a one-off check).
    #[default]
    Unspecified,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Policy,
        Role::User,
        Role::Judge,
        Role::Tools,
        Role::Unspecified,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Policy => "policy",
            Role::User => "user",
            Role::Judge => "judge",
            Role::Tools => "tools",
            Role::Unspecified => "unspecified",
        }
    }

    /// The position in [`Role::ALL`].
    pub fn index(self) -> usize {
        match self {
            Role::Policy => 0,
            Role::User => 1,
            Role::Judge => 2,
            Role::Tools => 3,
            Role::Unspecified => 4,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ChatRequest {
    /// Who is calling; the endpoint counts its calls by role.
    pub role: Role,
    pub messages: Vec<Message>,
    /// Tools offered (empty: none).
    pub tools: Arc<[ToolSpec]>,
    /// Sent as the request's `seed`.
    pub seed: Option<u64>,
    /// The scenario being played, sent in the `X-Sparring-Scenario` header. Real
    /// servers ignore it; the mock model server uses it to script its replies.
    pub scenario: Option<String>,
    /// This request's temperature instead of the endpoint's (e.g. a judge's own).
    pub temperature: Option<f32>,
    /// A lower `max_tokens` than the endpoint's for this request. It can only
    /// lower it: the endpoint's tpm limit charges every request for its own
    /// `max_tokens`, so a higher one would overrun the limit.
    pub max_tokens: Option<u32>,
    /// Sent as `parallel_tool_calls` when there are tools: `Some(false)` asks
    /// for one tool call per reply; `None` leaves the server's default.
    pub parallel_tool_calls: Option<bool>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Debug, Clone)]
pub struct ChatResponse {
    /// The assistant message: text (possibly empty) and tool calls.
    pub message: Message,
    /// As the server said it (`stop`, `tool_calls`, `length`, `eos`, or none).
    pub finish_reason: Option<String>,
    pub usage: Usage,
    /// Wall time of the call including retries and their backoff, but not the
    /// time spent waiting for the endpoint's limits or a pause, milliseconds.
    pub latency_ms: u64,
    /// The generation's token ids and log probabilities, where the server
    /// returned them (see [`super::tokens`]); `None` otherwise.
    pub tokens: Option<Box<super::tokens::TokenIds>>,
}

#[async_trait]
pub trait ChatModel: Send + Sync {
    /// The model name, for records.
    fn model(&self) -> &str;
    async fn complete(&self, req: ChatRequest) -> Result<ChatResponse, LlmError>;

    /// A raw JSON call of a black-box agent ([`super::raw`]) through this
    /// model's endpoint, its limits and retries. Only an [`super::Endpoint`]
    /// carries them; any other model refuses.
    async fn call_raw(&self, _req: RawRequest) -> Result<RawReply, LlmError> {
        Err(LlmError::InvalidRequest(format!(
            "model '{}' is not an endpoint an agent can be reached through",
            self.model()
        )))
    }
}
