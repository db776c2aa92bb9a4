//! The stages a proposal passes through, and why one was rejected.

use serde::{Deserialize, Serialize};

/// Where a proposal was rejected (or, for an accepted one, the last stage).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The reply is not one scenario row.
    Format,
    /// A gold action fails on a fresh session.
    Execution,
    /// A write task leaves the state unchanged, or a read-only one changes it.
    State,
    /// The user is said to know an ID the seed data does not have.
    UnknownId,
    /// A fact to communicate is in no gold action's output.
    Communicate,
    /// A fact to communicate is in what the user knows or says, so the
    /// user holds the answer the agent must give (`answer_leak`).
    AnswerLeak,
    /// `sparring validate`'s own checks.
    Checks,
    /// Not what its brief asked for: a required tool, the outcome, the
    /// difficulty, the tags, or two requests (`brief_check`).
    Brief,
    /// A near-duplicate of an accepted scenario.
    Duplicate,
    /// The review committee said no.
    Committee,
}

impl Stage {
    pub const ALL: [Stage; 10] = [
        Stage::Format,
        Stage::Execution,
        Stage::State,
        Stage::UnknownId,
        Stage::Communicate,
        Stage::AnswerLeak,
        Stage::Checks,
        Stage::Brief,
        Stage::Duplicate,
        Stage::Committee,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Format => "format",
            Stage::Execution => "execution",
            Stage::State => "state",
            Stage::UnknownId => "unknown_id",
            Stage::Communicate => "communicate",
            Stage::AnswerLeak => "answer_leak",
            Stage::Checks => "checks",
            Stage::Brief => "brief",
            Stage::Duplicate => "duplicate",
            Stage::Committee => "committee",
        }
    }
}

/// A proposal's rejection: the stage and the exact reason the generator is
/// shown on its next attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    pub stage: Stage,
    pub reason: String,
}

impl Rejection {
    pub fn new(stage: Stage, reason: impl Into<String>) -> Self {
        Rejection {
            stage,
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.stage.as_str(), self.reason)
    }
}
