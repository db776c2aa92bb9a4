//! Why an episode failed: a type the policies and the user simulator return,
//! apart from the episode loop that reads it.

use crate::env::EnvError;
use crate::llm::message::Caller;
use crate::llm::LlmError;

/// A failure that makes the item fail (retryable), never a reward of 0.
#[derive(Debug, thiserror::Error)]
pub enum EpisodeError {
    #[error("{role} model call failed ({}): {error}", error.class())]
    Model {
        role: &'static str,
        #[source]
        error: LlmError,
    },
    #[error("environment failed: {0}")]
    Env(#[from] EnvError),
    /// The environment failed on a tool call: who called which tool says
    /// whose side of a dual-control conversation broke.
    #[error("environment failed on the {}'s call to '{tool}': {error}", caller.as_str())]
    ToolCall {
        caller: Caller,
        tool: String,
        #[source]
        error: EnvError,
    },
}

impl EpisodeError {
    pub fn class(&self) -> &'static str {
        match self {
            EpisodeError::Model { error, .. } => error.class(),
            EpisodeError::Env(_) | EpisodeError::ToolCall { .. } => "env_error",
        }
    }
}
