//! What one proposal is asked to be, drawn from the synthesis job's diversity
//! knobs. The generator's prompt shows it; coverage is counted against it.

use serde::{Deserialize, Serialize};

use crate::config::synth::diversity::{MULTI_INTENT_TAG, REFUSAL_TAG, TRANSFER_TAG};

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

impl Outcome {
    pub const ALL: [Outcome; 3] = [Outcome::Resolve, Outcome::Refusal, Outcome::Transfer];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Resolve => "resolve",
            Outcome::Refusal => "refusal",
            Outcome::Transfer => "transfer",
        }
    }
}

/// The targets of one proposal: the generator is asked to meet them, and the
/// synthesis job's coverage is counted against them. The default asks for
/// nothing in particular.
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
    /// `None` leaves it to the generator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
}

impl ProposalBrief {
    /// The brief as sentences a generator can follow, one a line; the
    /// checks of `brief_check` hold it to exactly these. `transfer_tools`
    /// are the environment's tools that hand the user to a human.
    pub fn in_words(&self, transfer_tools: &[&str]) -> Vec<String> {
        let mut lines = Vec::new();
        let transfer = match transfer_tools {
            [] => "the tool that transfers to a human agent".to_string(),
            tools => tools.join(" or "),
        };
        match self.outcome {
            None => {}
            Some(Outcome::Resolve) => lines.push(format!(
                "The agent can and does complete what the user asks, within the policy: no \
                 refusal, no transfer to a human (the gold actions do not call {transfer}, \
                 and the scenario is not tagged \"{REFUSAL_TAG}\" or \"{TRANSFER_TAG}\")."
            )),
            Some(Outcome::Refusal) => lines.push(format!(
                "The user asks for something the policy forbids, so the agent must refuse: \
                 the gold actions only look things up (they change nothing and do not \
                 transfer), and the scenario is tagged \"{REFUSAL_TAG}\"."
            )),
            Some(Outcome::Transfer) => lines.push(format!(
                "The user asks for something the agent cannot handle with its tools and the \
                 policy says to hand over, so the agent must transfer them to a human: the \
                 last gold action is {transfer}, and the scenario is tagged \"{TRANSFER_TAG}\"."
            )),
        }
        if self.multi_intent {
            lines.push(format!(
                "The user comes with two separate requests, each needing its own change: the \
                 gold actions change the state with at least two different tools (e.g. cancel \
                 one order and change the address of another), and the scenario is tagged \
                 \"{MULTI_INTENT_TAG}\"."
            ));
        }
        for tool in &self.tools {
            lines.push(format!("Choose a task whose gold actions call {tool}."));
        }
        if let Some(difficulty) = &self.difficulty {
            lines.push(format!(
                "Make it a {difficulty} task, and set \"difficulty\": \"{difficulty}\"."
            ));
        }
        if !self.tags.is_empty() {
            let tags: Vec<String> = self.tags.iter().map(|t| format!("\"{t}\"")).collect();
            lines.push(format!(
                "The task is about {}: tag the scenario {}.",
                self.tags.join(" and "),
                tags.join(" and ")
            ));
        }
        if lines.is_empty() {
            lines.push("Any task the policy covers: choose one unlike the examples.".to_string());
        }
        lines
    }
}
