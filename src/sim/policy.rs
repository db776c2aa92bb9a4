//! The policy side of a turn: model calls with tool use until it answers in text
//! or runs out of steps. Tool errors and bad arguments go back as tool output.

use std::sync::Arc;

use crate::env::{Session, ToolSpec};
use crate::llm::message::{Caller, Message};
use crate::llm::{ChatModel, ChatRequest, Role};

use super::episode::EpisodeError;
use super::transcript::{Author, Transcript};

/// How a policy turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnEnd {
    /// The policy answered the user in text.
    Answered,
    /// `max_steps_per_turn` model calls without a text answer.
    OutOfSteps,
    /// Neither text nor tool calls.
    Empty,
}

pub struct PolicyAgent {
    model: Arc<dyn ChatModel>,
    tools: Arc<[ToolSpec]>,
    max_steps: u32,
    parallel_tool_calls: bool,
}

impl PolicyAgent {
    /// `parallel_tool_calls: false` asks the model for one tool call per step.
    pub fn new(
        model: Arc<dyn ChatModel>,
        tools: Arc<[ToolSpec]>,
        max_steps: u32,
        parallel_tool_calls: bool,
    ) -> Self {
        PolicyAgent {
            model,
            tools,
            max_steps,
            parallel_tool_calls,
        }
    }

    pub fn model_name(&self) -> &str {
        self.model.model()
    }

    /// Run one policy turn, appending its messages and tool results. `tools`
    /// are the scenario's own, when it brings them, instead of the job's.
    pub async fn turn(
        &self,
        transcript: &mut Transcript,
        session: &mut dyn Session,
        tools: Option<&Arc<[ToolSpec]>>,
        seed: u64,
        scenario: &str,
    ) -> Result<TurnEnd, EpisodeError> {
        let tools = tools.unwrap_or(&self.tools);
        for _ in 0..self.max_steps {
            let response = self
                .model
                .complete(ChatRequest {
                    role: Role::Policy,
                    messages: transcript.policy_view(),
                    tools: tools.clone(),
                    seed: Some(seed),
                    scenario: Some(scenario.to_string()),
                    parallel_tool_calls: (!self.parallel_tool_calls).then_some(false),
                    ..ChatRequest::default()
                })
                .await
                .map_err(|error| EpisodeError::Model {
                    role: "policy",
                    error,
                })?;
            let calls = response.message.tool_calls.clone();
            let has_text = !response.message.content.trim().is_empty();
            transcript.push_generated(
                response.message,
                Author::Policy,
                response.usage,
                response.latency_ms,
                // Moved out of the response's box, not copied.
                response.tokens.map(Arc::from),
            );
            if calls.is_empty() {
                return Ok(if has_text {
                    TurnEnd::Answered
                } else {
                    TurnEnd::Empty
                });
            }
            // Calls of one step run in order against the one session state.
            for call in &calls {
                let output = session
                    .call_by(Caller::Policy, call)
                    .await
                    .map_err(|error| EpisodeError::ToolCall {
                        caller: Caller::Policy,
                        tool: call.name.clone(),
                        error,
                    })?;
                transcript.push(
                    Message::tool_result(call.id.clone(), output.content),
                    Author::Env,
                );
            }
        }
        Ok(TurnEnd::OutOfSteps)
    }
}
