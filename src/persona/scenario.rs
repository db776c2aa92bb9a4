//! Scenarios: what a simulated user wants (hidden from the policy), the
//! environment's initial state, and how the conversation is scored.

use serde::{Deserialize, Serialize};

use crate::verify::Criteria;

/// What the simulated user knows and wants. Never shown to the policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserScenario {
    /// Why the user contacts the agent, in their own terms.
    pub reason_for_contact: String,
    /// Facts the user may reveal when asked (name, zip code, order id ...).
    pub known_info: String,
    /// Facts the user does not know; asked about them, the user says so.
    #[serde(default)]
    pub unknown_info: String,
    /// How the user should behave (what to accept, when to insist, when to stop).
    pub task_instructions: String,
}

/// One scenario of a dataset (a line of a scenarios JSONL file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub id: String,
    /// Short human description for listings.
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub difficulty: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    pub user: UserScenario,
    /// Domain-specific overrides of the environment's seed data.
    #[serde(default)]
    pub initial_state: serde_json::Value,
    #[serde(default)]
    pub evaluation: Criteria,
}
