//! `builtin:chat`: pure dialogue without tools. A customer asks the Lantern &
//! Loom advice desk for advice; the agent answers from the store facts in its
//! policy text. Verification is by `communicate` facts only (or none).

use async_trait::async_trait;

use crate::env::{
    EnvError, Environment, InitialState, Message, Session, ToolCall, ToolOutput, ToolSpec,
};
use crate::verify::{communicate, Component, Criteria, Verification};

/// The name a job config uses for this environment.
pub const NAME: &str = "builtin:chat";

/// The advice desk's facts and manner (`data/chat/policy.md`).
pub const POLICY_TEXT: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/data/chat/policy.md"));

/// The shipped scenario set (`data/chat/scenarios.jsonl`).
pub const SCENARIOS_JSONL: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/data/chat/scenarios.jsonl"
));

/// An environment without tools or state: a domain's name and policy text
/// (`builtin:chat`, `builtin:qa`).
#[derive(Debug, Clone, Copy)]
pub struct ToolFree {
    pub name: &'static str,
    pub policy_text: &'static str,
}

/// `builtin:chat`.
pub const CHAT: ToolFree = ToolFree {
    name: NAME,
    policy_text: POLICY_TEXT,
};

#[async_trait]
impl Environment for ToolFree {
    fn name(&self) -> &str {
        self.name
    }

    fn policy_text(&self) -> &str {
        self.policy_text
    }

    fn tools(&self) -> &[ToolSpec] {
        &[]
    }

    /// Synthesis proposes gold tool calls and checks them by running them:
    /// a domain without tools has nothing to propose or run.
    async fn sample_records(&self, _seed: u64, _n: usize) -> Result<serde_json::Value, EnvError> {
        Err(EnvError::NotSampleable {
            environment: self.name.to_string(),
            reason: "it has no tools and no state, and synthesis proposes gold tool calls and \
                     checks them by running them; synthesize over an environment with tools \
                     (builtin:retail, builtin:phone, an mcp or nemo_gym environment with \
                     state_probes, a simulated one), or write its scenarios by hand"
                .to_string(),
        })
    }

    async fn open(&self, _init: &InitialState) -> Result<Box<dyn Session>, EnvError> {
        Ok(Box::new(ChatSession {
            environment: self.name,
        }))
    }
}

/// A conversation with no state (also `builtin:qa`'s).
pub struct ChatSession {
    /// The environment's name, for messages.
    pub environment: &'static str,
}

#[async_trait]
impl Session for ChatSession {
    async fn call(&mut self, call: &ToolCall) -> Result<ToolOutput, EnvError> {
        Ok(ToolOutput::error(format!(
            "there are no tools in this conversation ('{}' was called); answer directly",
            call.name
        )))
    }

    async fn verify(
        &mut self,
        messages: &[Message],
        criteria: &Criteria,
    ) -> Result<Verification, EnvError> {
        // Gold actions are scored from the conversation's tool calls (the
        // `actions` component, whoever ran them: a black-box agent runs its
        // own), not from a state this environment does not have.
        if criteria.reward_basis.contains(&Component::Db) {
            return Err(EnvError::Verification(format!(
                "{} has no state: scenarios may not use `db` (reward_basis {:?}); score gold \
                 actions with `actions` instead",
                self.environment, criteria.reward_basis,
            )));
        }
        let mut parts = std::collections::BTreeMap::new();
        if !criteria.communicate.is_empty() {
            parts.insert(
                Component::Communicate,
                communicate::score(messages, &criteria.communicate),
            );
        }
        Ok(Verification::combine(&criteria.reward_basis, parts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persona::Scenario;

    fn scenarios() -> Vec<Scenario> {
        SCENARIOS_JSONL
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn every_fact_a_scenario_asks_for_is_in_the_policy_text() {
        for s in scenarios() {
            assert!(s.evaluation.actions.is_empty(), "{}", s.id);
            for fact in &s.evaluation.communicate {
                assert!(POLICY_TEXT.contains(fact.as_str()), "{}: {fact}", s.id);
            }
        }
    }

    #[tokio::test]
    async fn saying_the_facts_earns_the_reward_and_leaving_them_out_does_not() {
        let s = scenarios()
            .into_iter()
            .find(|s| s.id == "chat-001-free-shipping")
            .unwrap();
        let mut session = CHAT.open(&InitialState::default()).await.unwrap();
        let said = [Message::assistant("Shipping is free on orders over $50.")];
        let v = session.verify(&said, &s.evaluation).await.unwrap();
        assert_eq!(v.reward, 1.0);
        let v = session
            .verify(&[Message::assistant("Soon!")], &s.evaluation)
            .await
            .unwrap();
        assert_eq!(v.reward, 0.0);
    }

    #[tokio::test]
    async fn tools_are_refused_with_a_message_the_model_can_act_on() {
        let mut session = CHAT.open(&InitialState::default()).await.unwrap();
        let out = session
            .call(&ToolCall {
                id: "1".into(),
                name: "lookup".into(),
                arguments: "{}".into(),
            })
            .await
            .unwrap();
        assert!(out.is_error);
        assert!(out.content.contains("answer directly"));
    }
}
