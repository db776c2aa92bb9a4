//! The LLM-simulated user: asks its model for the next message from the flipped
//! transcript and reads the control tokens it may end with.

use std::sync::Arc;

use crate::env::{Session, ToolSpec};
use crate::llm::message::{Caller, Message};
use crate::llm::{ChatModel, ChatRequest, Role, Usage};

use super::episode_error::EpisodeError;
use super::transcript::{Author, Transcript};

pub use crate::prompt::{OUT_OF_SCOPE_TOKEN, STOP_TOKEN, TRANSFER_TOKEN};

/// A control token the user ended a message with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Stop,
    Transfer,
    OutOfScope,
}

/// The user's next message, the control token removed.
#[derive(Debug, Clone, PartialEq)]
pub struct UserReply {
    /// The text before the token (trimmed); may be empty when the user only stopped.
    pub text: String,
    pub signal: Option<Signal>,
    /// The model's text as it came, token and all (the fidelity checks read
    /// what followed a token).
    pub raw: String,
    /// As the server said it: `length` when the reply hit `max_tokens`.
    pub finish_reason: Option<String>,
    pub usage: Usage,
    pub latency_ms: u64,
}

/// Outcome of asking the simulator for a message.
#[derive(Debug)]
pub enum UserTurn {
    Reply(UserReply),
    /// Empty twice in a row: the conversation ends with `user_error`.
    Empty {
        usage: Usage,
        latency_ms: u64,
    },
    /// Tool calls for [`MAX_USER_TOOL_STEPS`] model calls without a message:
    /// the conversation ends with `user_error` too.
    OutOfSteps,
}

/// Split a message at the first control token: the text before it is kept and
/// anything after it is dropped (a model sometimes keeps talking past the token).
pub fn parse_signal(raw: &str) -> (String, Option<Signal>) {
    let found = [
        (STOP_TOKEN, Signal::Stop),
        (TRANSFER_TOKEN, Signal::Transfer),
        (OUT_OF_SCOPE_TOKEN, Signal::OutOfScope),
    ]
    .into_iter()
    .filter_map(|(token, signal)| raw.find(token).map(|at| (at, signal)))
    .min_by_key(|(at, _)| *at);
    match found {
        Some((at, signal)) => (raw[..at].trim().to_string(), Some(signal)),
        None => (raw.trim().to_string(), None),
    }
}

pub struct UserSimulator {
    model: Arc<dyn ChatModel>,
    /// Rendered once per conversation and shared by each of its calls.
    system_prompt: Arc<str>,
    /// The environment's user tools (dual control); empty for most.
    tools: Arc<[ToolSpec]>,
}

/// Model calls a user turn may spend on tool calls before it must write to
/// the agent; past it the conversation ends with `user_error`.
pub const MAX_USER_TOOL_STEPS: u32 = 8;

/// Usage of the calls of one user turn that made tool calls (not the
/// message to the agent, whose usage is the reply's).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ToolStepUsage {
    pub calls: u64,
    pub usage: Usage,
    pub latency_ms: u64,
}

impl UserSimulator {
    pub fn new(model: Arc<dyn ChatModel>, system_prompt: impl Into<Arc<str>>) -> Self {
        UserSimulator {
            model,
            system_prompt: system_prompt.into(),
            tools: Arc::from([]),
        }
    }

    /// The same simulator, able to call `tools` on its side of the session.
    pub fn with_tools(mut self, tools: Arc<[ToolSpec]>) -> Self {
        self.tools = tools;
        self
    }

    pub fn model_name(&self) -> &str {
        self.model.model()
    }

    /// The next user message. Tool calls the user makes on the way run
    /// against `session` as the user's and are added to `transcript` (with
    /// their results); the usage of those steps comes back with the turn.
    /// An empty reply is asked for once more before giving up; model
    /// failures (after the endpoint's retries) and the environment failing
    /// are errors.
    pub async fn next(
        &self,
        transcript: &mut Transcript,
        session: &mut dyn Session,
        seed: u64,
        scenario: &str,
    ) -> Result<(UserTurn, ToolStepUsage), EpisodeError> {
        let mut steps = ToolStepUsage::default();
        let mut usage = Usage::default();
        let mut latency_ms = 0;
        let mut empty = 0u64;
        let model_error = |error| EpisodeError::Model {
            role: "user",
            error,
        };
        for step in 0..MAX_USER_TOOL_STEPS + 2 {
            let response = self
                .model
                .complete(ChatRequest {
                    role: Role::User,
                    messages: transcript.user_view(&self.system_prompt),
                    tools: self.tools.clone(),
                    seed: Some(seed.wrapping_add(u64::from(step))),
                    scenario: Some(scenario.to_string()),
                    ..ChatRequest::default()
                })
                .await
                .map_err(model_error)?;
            let calls = response.message.tool_calls.clone();
            if !calls.is_empty() {
                if steps.calls >= u64::from(MAX_USER_TOOL_STEPS) {
                    tracing::debug!(scenario, "user simulator out of tool steps");
                    return Ok((UserTurn::OutOfSteps, steps));
                }
                steps.calls += 1;
                steps.usage.prompt_tokens += response.usage.prompt_tokens;
                steps.usage.completion_tokens += response.usage.completion_tokens;
                steps.latency_ms += response.latency_ms;
                let mut message = response.message;
                message.role = crate::llm::message::Role::User;
                transcript.push_generated(
                    message,
                    Author::User,
                    response.usage,
                    response.latency_ms,
                    // The simulated user's words are never trained on.
                    None,
                );
                for call in &calls {
                    let output = session.call_by(Caller::User, call).await.map_err(|error| {
                        EpisodeError::ToolCall {
                            caller: Caller::User,
                            tool: call.name.clone(),
                            error,
                        }
                    })?;
                    transcript.push(
                        Message::tool_result(call.id.clone(), output.content),
                        Author::UserTool,
                    );
                }
                continue;
            }
            usage.prompt_tokens += response.usage.prompt_tokens;
            usage.completion_tokens += response.usage.completion_tokens;
            latency_ms += response.latency_ms;
            let (text, signal) = parse_signal(&response.message.content);
            if !text.is_empty() || signal.is_some() {
                let reply = UserReply {
                    text,
                    signal,
                    raw: response.message.content.to_string(),
                    finish_reason: response.finish_reason,
                    usage,
                    latency_ms,
                };
                return Ok((UserTurn::Reply(reply), steps));
            }
            tracing::debug!(
                scenario,
                attempt = empty,
                "user simulator returned an empty message"
            );
            empty += 1;
            if empty == 2 {
                break;
            }
        }
        Ok((UserTurn::Empty { usage, latency_ms }, steps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_token_is_removed_and_the_text_before_it_kept() {
        assert_eq!(
            parse_signal("Thanks, that's all!###STOP###"),
            ("Thanks, that's all!".to_string(), Some(Signal::Stop))
        );
        assert_eq!(
            parse_signal(" ###STOP### "),
            (String::new(), Some(Signal::Stop))
        );
    }

    #[test]
    fn text_after_a_token_is_dropped_and_the_first_token_wins() {
        assert_eq!(
            parse_signal("ok ###TRANSFER### bye ###STOP###"),
            ("ok".to_string(), Some(Signal::Transfer))
        );
        assert_eq!(
            parse_signal("I can't go on. ###OUT-OF-SCOPE###"),
            ("I can't go on.".to_string(), Some(Signal::OutOfScope))
        );
        assert_eq!(parse_signal("plain"), ("plain".to_string(), None));
    }
}
