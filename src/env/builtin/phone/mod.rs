//! `builtin:phone`: Pocket Mobile's support desk, a dual-control domain. The
//! agent acts on the carrier's side (accounts, lines, roaming, data); the
//! customer acts on their own phone (airplane mode, mobile data, data
//! roaming) through the user tools, which the agent cannot call. Success
//! often needs the customer's own call: the agent must get them to make it.

mod records;
mod specs;
mod state;
mod tools;

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::Value;

use crate::env::{
    Caller, EnvError, Environment, InitialState, Message, Session, ToolCall, ToolOutput, ToolSpec,
};
use crate::verify::{communicate, Component, ComponentScore, Criteria, Verification};

use super::patch::merge_patch;
pub use specs::{agent_tools, user_tools};
pub use state::PhoneState;

/// The name a job config uses for this environment.
pub const NAME: &str = "builtin:phone";

/// The seed state (`data/phone/db.json`).
pub const SEED_JSON: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/data/phone/db.json"));
const SEED_PATH: &str = "data/phone/db.json";

/// The agent policy (`data/phone/policy.md`).
pub const POLICY_TEXT: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/data/phone/policy.md"));

/// The shipped scenario set (`data/phone/scenarios.jsonl`).
pub const SCENARIOS_JSONL: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/data/phone/scenarios.jsonl"
));

#[derive(Debug)]
pub struct PhoneEnvironment {
    agent_tools: Vec<ToolSpec>,
    user_tools: Vec<ToolSpec>,
    seed: Value,
}

impl PhoneEnvironment {
    pub fn new() -> Result<Self, EnvError> {
        let data_error = |message: String| EnvError::Data {
            path: SEED_PATH.to_string(),
            message,
        };
        let seed: Value = serde_json::from_str(SEED_JSON).map_err(|e| data_error(e.to_string()))?;
        PhoneState::from_value(seed.clone()).map_err(data_error)?;
        Ok(PhoneEnvironment {
            agent_tools: agent_tools(),
            user_tools: user_tools(),
            seed,
        })
    }

    /// The seed with the scenario's `initial_state` applied as a JSON merge-patch.
    fn initial_state(&self, data: &Value) -> Result<PhoneState, EnvError> {
        let mut value = self.seed.clone();
        if !data.is_null() {
            merge_patch(&mut value, data);
        }
        PhoneState::from_value(value).map_err(|e| {
            EnvError::InitialState(format!(
                "applied as a merge-patch to the phone seed state, it gives an invalid state: {e}"
            ))
        })
    }

    /// A session, typed (tests read its state).
    pub fn open_session(&self, init: &InitialState) -> Result<PhoneSession, EnvError> {
        let initial = self.initial_state(&init.data)?;
        Ok(PhoneSession {
            agent_tools: self.agent_tools.clone(),
            user_tools: self.user_tools.clone(),
            state: initial.clone(),
            initial,
        })
    }
}

#[async_trait]
impl Environment for PhoneEnvironment {
    fn name(&self) -> &str {
        NAME
    }

    fn policy_text(&self) -> &str {
        POLICY_TEXT
    }

    fn tools(&self) -> &[ToolSpec] {
        &self.agent_tools
    }

    fn user_tools(&self) -> &[ToolSpec] {
        &self.user_tools
    }

    async fn open(&self, init: &InitialState) -> Result<Box<dyn Session>, EnvError> {
        Ok(Box::new(self.open_session(init)?))
    }

    async fn sample_records(&self, seed: u64, n: usize) -> Result<Value, EnvError> {
        let state = self.initial_state(&Value::Null)?;
        Ok(records::sample(&state, seed, n))
    }
}

/// One conversation: the carrier's records and the customer's phone.
#[derive(Debug)]
pub struct PhoneSession {
    agent_tools: Vec<ToolSpec>,
    user_tools: Vec<ToolSpec>,
    initial: PhoneState,
    state: PhoneState,
}

impl PhoneSession {
    pub fn state(&self) -> &PhoneState {
        &self.state
    }

    fn run(&mut self, caller: Caller, call: &ToolCall) -> ToolOutput {
        let tools = match caller {
            Caller::Policy => &self.agent_tools,
            Caller::User => &self.user_tools,
        };
        tools::run_call(tools, caller, &mut self.state, call)
    }

    /// The gold actions, each by its caller, replayed on the starting state.
    fn gold_state(&self, criteria: &Criteria) -> Result<PhoneState, EnvError> {
        let mut gold = PhoneSession {
            agent_tools: self.agent_tools.clone(),
            user_tools: self.user_tools.clone(),
            initial: self.initial.clone(),
            state: self.initial.clone(),
        };
        for (index, action) in criteria.actions.iter().enumerate() {
            let call = ToolCall {
                id: format!("gold-{index}"),
                name: action.name.clone(),
                arguments: match &action.arguments {
                    Value::Null => "{}".to_string(),
                    other => other.to_string(),
                },
            };
            let output = gold.run(action.caller, &call);
            if output.is_error {
                return Err(EnvError::Verification(format!(
                    "the scenario's gold action evaluation.actions[{index}] ({} by the {}) fails on a fresh session: {}",
                    action.name,
                    action.caller.as_str(),
                    output.content
                )));
            }
        }
        Ok(gold.state)
    }
}

#[async_trait]
impl Session for PhoneSession {
    async fn call(&mut self, call: &ToolCall) -> Result<ToolOutput, EnvError> {
        Ok(self.run(Caller::Policy, call))
    }

    async fn call_by(&mut self, caller: Caller, call: &ToolCall) -> Result<ToolOutput, EnvError> {
        Ok(self.run(caller, call))
    }

    /// `db`: the state both sides left (the customer's phone included)
    /// equals the gold actions' state, so a fix the customer was never
    /// asked to make scores 0; `communicate`: the facts were said.
    async fn verify(
        &mut self,
        messages: &[Message],
        criteria: &Criteria,
    ) -> Result<Verification, EnvError> {
        let gold = self.gold_state(criteria)?;
        let differences = self.state.differences(&gold);
        let db = if differences.is_empty() {
            ComponentScore {
                score: 1.0,
                detail: "state matches gold (carrier records and the customer's phone)".into(),
            }
        } else {
            ComponentScore {
                score: 0.0,
                detail: format!("state differs from gold: {}", differences.join("; ")),
            }
        };
        let mut parts = BTreeMap::new();
        parts.insert(Component::Db, db);
        parts.insert(
            Component::Communicate,
            communicate::score(messages, &criteria.communicate),
        );
        Ok(Verification::combine(&criteria.reward_basis, parts))
    }

    /// Both sides: the carrier's records and the customer's phone.
    async fn state(&mut self) -> Result<Option<Value>, EnvError> {
        serde_json::to_value(&self.state)
            .map(Some)
            .map_err(|e| EnvError::Verification(format!("cannot show the phone state: {e}")))
    }
}

#[cfg(test)]
mod tests;
