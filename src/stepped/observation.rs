//! What a session answers: the messages the policy has not seen yet (in
//! chat completions' shape), the tools on the first observation, `done`,
//! the reward at the end, and the metadata (ids; at the end the
//! termination, the reward's breakdown, the user checks and the stored
//! conversation's id). Never a hidden field of the scenario: its user's
//! instructions, known facts and gold actions stay on the server.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::env::ToolSpec;
use crate::llm::message::Message;
use crate::llm::wire::{message_json, tool_json};

/// One answer of a session.
#[derive(Debug, Clone)]
pub struct Observation {
    pub messages: Vec<Message>,
    /// The tools the policy may call; on the first observation only.
    pub tools: Option<Arc<[ToolSpec]>>,
    pub done: bool,
    /// The stored reward, at the end; `None` before it, and at the end of
    /// an unscored conversation (never a stand-in 0).
    pub reward: Option<f64>,
    pub metadata: Value,
}

/// How an episode ended, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct End {
    pub termination: String,
    pub reward: Option<f64>,
    pub reward_breakdown: Value,
    pub user_checks: Value,
    pub conversation_id: i64,
    pub job_id: i64,
}

impl End {
    pub fn json(&self) -> Value {
        json!({
            "termination": self.termination,
            "reward": self.reward,
            "reward_breakdown": self.reward_breakdown,
            "user_checks": self.user_checks,
            "conversation_id": self.conversation_id,
            "job_id": self.job_id,
        })
    }
}

impl Observation {
    /// The observation as JSON: `messages`, `tools`, `done`, `reward`,
    /// `metadata`.
    pub fn json(&self) -> Value {
        json!({
            "messages": self.messages.iter().map(message_json).collect::<Vec<_>>(),
            "tools": self.tools.as_ref().map(|t| t.iter().map(tool_json).collect::<Vec<_>>()),
            "done": self.done,
            "reward": self.reward,
            "metadata": self.metadata,
        })
    }

    /// OpenEnv's step and reset result: `{"observation", "reward", "done"}`.
    pub fn openenv_json(&self) -> Value {
        json!({
            "observation": self.json(),
            "reward": self.reward,
            "done": self.done,
        })
    }
}
