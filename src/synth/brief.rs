//! What one proposal is asked to be, drawn from the synthesis job's diversity
//! knobs. The generator's prompt shows it; coverage is counted against it.

use serde::{Deserialize, Serialize};

/// How the task a blueprint describes is meant to end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The agent does what the user asks (reads, writes).
    #[default]
    Resolve,
    /// The policy forbids the request: the agent refuses and the state stays
    /// unchanged.
    Refusal,
    /// The agent must hand the user over to a human.
    Transfer,
}

/// The targets of one proposal: the generator is asked to meet them, and the
/// synthesis job's coverage is counted against them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProposalBrief {
    /// e.g. `easy`, `medium`, `hard`; `None` leaves it to the generator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<String>,
    /// Tags the scenario should carry (e.g. `returns`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Tools its gold actions must call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Whether the user comes with more than one request.
    #[serde(default)]
    pub multi_intent: bool,
    #[serde(default)]
    pub outcome: Outcome,
}
