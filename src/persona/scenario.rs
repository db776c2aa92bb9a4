//! Scenarios: what a simulated user wants (hidden from the policy), the
//! environment's initial state, and how the conversation is scored.

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::Problem;
use crate::llm::message::{Message, ToolSpec};
use crate::verify::probe_spec::ProbeSpec;
use crate::verify::Criteria;

/// What the simulated user knows and wants. Never shown to the policy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserScenario {
    /// Why the user contacts the agent, in their own terms. Needed unless
    /// `opening` says it.
    #[serde(default)]
    pub reason_for_contact: String,
    /// Facts the user may reveal when asked (name, zip code, order id ...).
    #[serde(default)]
    pub known_info: String,
    /// Facts the user does not know; asked about them, the user says so.
    #[serde(default)]
    pub unknown_info: String,
    /// How the user should behave (what to accept, when to insist, when to stop).
    #[serde(default)]
    pub task_instructions: String,
    /// The user's first message, sent verbatim (not simulated). Without a
    /// simulated user (`[user_simulator] mode = "none"`) it is the whole
    /// request: a single-step task such as a question to answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening: Option<String>,
    /// What the user says after the opening, in order, when a dataset recorded
    /// it (NeMo Gym rows' later user turns). The instructions ask the simulated
    /// user to work through them; the mock user says them verbatim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<String>,
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
    /// Domain-specific overrides of the environment's seed data. For a
    /// `simulated` environment, written `environment_facts`: the hidden facts
    /// of the world its tools describe, which the tool simulator keeps to.
    #[serde(default, alias = "environment_facts")]
    pub initial_state: serde_json::Value,
    #[serde(default)]
    pub evaluation: Criteria,
    /// How the conversation opens, given instead of the job's policy prompt and
    /// greeting: a dataset's system/developer prompt and the user's opening
    /// (NeMo Gym rows). Empty for ordinary scenarios.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prelude: Vec<Message>,
    /// The tools offered to the policy in this scenario, instead of the
    /// environment's (NeMo Gym rows bring their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Arc<[ToolSpec]>>,
    /// A probe: the user pushes back, and the `held` component scores
    /// whether the agent held the line (see `verify::held`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeSpec>,
}

/// A problem for every scenario nothing scores: `reward_basis` left out or
/// empty. (An empty list used to count as a pass: reward 1 for any
/// conversation.) Unscored generation says so: `"reward_basis": "none"`.
/// A scenario with its own tools (a NeMo Gym row) is scored by its
/// environment's own verifier, whatever its `reward_basis`.
pub fn unscored_problems(file: &Path, scenarios: &[Scenario]) -> Vec<Problem> {
    scenarios
        .iter()
        .filter(|s| s.tools.is_none() && s.evaluation.reward_basis.is_missing())
        .map(|s| {
            Problem::at_field(
                file,
                &format!("scenario '{}', evaluation.reward_basis", s.id),
                "names no reward component, so nothing would score this scenario; list what \
                 its reward is made of (e.g. [\"db\", \"communicate\"]), or write \
                 \"reward_basis\": \"none\" to generate its conversations without a reward",
            )
        })
        .collect()
}

/// Without a simulated user, a problem for every scenario that does not say
/// what the user asks (`user.opening`; NeMo Gym rows bring their prelude).
pub fn opening_problems(file: &Path, scenarios: &[Scenario]) -> Vec<Problem> {
    scenarios
        .iter()
        .filter(|s| s.prelude.is_empty() && s.user.opening.is_none())
        .map(|s| {
            Problem::at_field(
                file,
                &format!("scenario '{}', user.opening", s.id),
                "is missing; without a simulated user ([user_simulator] mode = \"none\") the \
                 opening is the whole request: write the user's message, e.g. \"opening\": \
                 \"What is 7 × 8? Put the answer in \\\\boxed{}.\", or use mode = \"llm\"",
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(basis: &str) -> Scenario {
        serde_json::from_str(&format!(
            r#"{{"id": "s", "user": {{"reason_for_contact": "R", "known_info": "K",
                "task_instructions": "T"}}, "evaluation": {{"reward_basis": {basis}}}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn a_scenario_without_a_reward_basis_is_a_problem_and_none_is_not() {
        let file = Path::new("s.jsonl");
        assert_eq!(unscored_problems(file, &[scenario("[]")]).len(), 1);
        assert!(unscored_problems(file, &[scenario("\"none\"")]).is_empty());
        assert!(unscored_problems(file, &[scenario("[\"communicate\"]")]).is_empty());
    }
}
