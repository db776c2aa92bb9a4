//! Why a conversation ended.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// The user said the goal is done (`###STOP###`).
    UserStop,
    /// The user was transferred to a human (`###TRANSFER###`).
    UserTransfer,
    /// The scenario gave the user no way to continue (`###OUT-OF-SCOPE###`).
    UserOutOfScope,
    MaxTurns,
    /// Without a simulated user: the policy answered the dataset's request
    /// (a single-step conversation ends there).
    PolicyAnswered,
    /// The policy used all its model calls in one turn without answering.
    MaxSteps,
    /// The policy produced neither text nor tool calls.
    PolicyError,
    /// The user simulator produced an empty message twice.
    UserError,
    EnvError,
    Timeout,
    Cancelled,
}

impl Termination {
    pub const ALL: [Termination; 11] = [
        Termination::UserStop,
        Termination::UserTransfer,
        Termination::UserOutOfScope,
        Termination::MaxTurns,
        Termination::PolicyAnswered,
        Termination::MaxSteps,
        Termination::PolicyError,
        Termination::UserError,
        Termination::EnvError,
        Termination::Timeout,
        Termination::Cancelled,
    ];

    /// The termination of this name (as stored and as `as_str` writes it).
    pub fn parse(name: &str) -> Option<Termination> {
        Termination::ALL.into_iter().find(|t| t.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Termination::UserStop => "user_stop",
            Termination::UserTransfer => "user_transfer",
            Termination::UserOutOfScope => "user_out_of_scope",
            Termination::MaxTurns => "max_turns",
            Termination::PolicyAnswered => "policy_answered",
            Termination::MaxSteps => "max_steps",
            Termination::PolicyError => "policy_error",
            Termination::UserError => "user_error",
            Termination::EnvError => "env_error",
            Termination::Timeout => "timeout",
            Termination::Cancelled => "cancelled",
        }
    }

    /// Whether the outcome says something about the policy, so the conversation
    /// is verified. A broken user simulator says nothing about the policy.
    pub fn is_scored(self) -> bool {
        match self {
            Termination::UserStop
            | Termination::UserTransfer
            | Termination::UserOutOfScope
            | Termination::MaxTurns
            | Termination::PolicyAnswered
            | Termination::MaxSteps
            | Termination::PolicyError => true,
            Termination::UserError
            | Termination::EnvError
            | Termination::Timeout
            | Termination::Cancelled => false,
        }
    }
}
