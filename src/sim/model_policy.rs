//! The `model` policy kind: model calls with tool use until it answers in
//! text or runs out of steps; sparring runs every tool call on the session.
//! Tool errors and bad arguments go back as tool output.

use std::sync::Arc;

use async_trait::async_trait;

use crate::env::ToolSpec;
use crate::llm::{ChatModel, ChatRequest, Role};

use super::episode_error::EpisodeError;
use super::policy::{run_tool_calls, Policy, PolicyTurn, TurnEnd};
use super::transcript::Author;

pub struct ModelPolicy {
    model: Arc<dyn ChatModel>,
    tools: Arc<[ToolSpec]>,
    max_steps: u32,
    parallel_tool_calls: bool,
}

impl ModelPolicy {
    /// `parallel_tool_calls: false` asks the model for one tool call per step.
    pub fn new(
        model: Arc<dyn ChatModel>,
        tools: Arc<[ToolSpec]>,
        max_steps: u32,
        parallel_tool_calls: bool,
    ) -> Self {
        ModelPolicy {
            model,
            tools,
            max_steps,
            parallel_tool_calls,
        }
    }
}

#[async_trait]
impl Policy for ModelPolicy {
    fn name(&self) -> &str {
        self.model.model()
    }

    /// Run one policy turn, appending its messages and tool results.
    async fn turn(&self, turn: PolicyTurn<'_>) -> Result<TurnEnd, EpisodeError> {
        let PolicyTurn {
            transcript,
            session,
            tools,
            seed,
            scenario,
            ..
        } = turn;
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
            run_tool_calls(transcript, session, &calls).await?;
        }
        Ok(TurnEnd::OutOfSteps)
    }
}
