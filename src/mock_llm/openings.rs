//! The scenario a request plays, told by its opening, for callers that cannot
//! name it: an agent framework (the OpenAI Agents SDK, LangGraph, an A2A
//! server) calls the mock as its model with neither the `X-Sparring-Scenario`
//! header nor `metadata.sparring_scenario`. The mock user opens every
//! conversation with its scenario's opening (see [`opening`]), so the first
//! user message of the agent's request names the scenario as well as a header
//! would, as long as no two scenarios open alike.

use std::collections::HashMap;

use crate::llm::message::{Message, Role};
use crate::persona::Scenario;

use super::{replay, user};

/// What the mock user says first in this scenario: the first user turn of a
/// scenario that brings its own opening, else its reason for contact in the
/// first person.
pub fn opening(scenario: &Scenario) -> String {
    if replay::plays(scenario) {
        if let Some(first) = scenario.prelude.iter().find(|m| m.role == Role::User) {
            return first.content.trim().to_string();
        }
    }
    user::first_person(&scenario.user.reason_for_contact)
        .trim()
        .to_string()
}

/// Scenario ids by opening. An opening two scenarios share names neither.
#[derive(Debug, Default)]
pub struct Openings {
    by_text: HashMap<String, Option<String>>,
}

impl Openings {
    pub fn of(scenarios: &[Scenario]) -> Openings {
        let mut by_text: HashMap<String, Option<String>> = HashMap::new();
        for scenario in scenarios {
            by_text
                .entry(opening(scenario))
                .and_modify(|id| *id = None)
                .or_insert_with(|| Some(scenario.id.clone()));
        }
        Openings { by_text }
    }

    /// The id of the scenario whose opening is the first user message.
    pub fn scenario_of(&self, messages: &[Message]) -> Option<&str> {
        let first = messages.iter().find(|m| m.role == Role::User)?;
        self.by_text.get(first.content.trim())?.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(id: &str, reason: &str) -> Scenario {
        serde_json::from_value(serde_json::json!({
            "id": id,
            "user": {"reason_for_contact": reason, "known_info": "", "task_instructions": ""},
            "evaluation": {"reward_basis": "none"}
        }))
        .unwrap()
    }

    #[test]
    fn the_first_user_message_names_the_scenario_that_opens_with_it() {
        let scenarios = [
            scenario("parcel", "You want to know where your parcel is."),
            scenario("refund", "You want your money back."),
        ];
        let openings = Openings::of(&scenarios);
        let conversation = [
            Message::system("You are the store's agent."),
            Message::user(" I want to know where my parcel is. "),
            Message::assistant("Which order?"),
            Message::user("I want your money back."),
        ];
        assert_eq!(openings.scenario_of(&conversation), Some("parcel"));
        assert_eq!(
            openings.scenario_of(&[Message::user("I want my money back.")]),
            Some("refund")
        );
        assert_eq!(openings.scenario_of(&[Message::user("Hello")]), None);
        assert_eq!(openings.scenario_of(&[Message::system("s")]), None);
    }

    #[test]
    fn an_opening_two_scenarios_share_names_neither() {
        let scenarios = [
            scenario("a", "You want your money back."),
            scenario("b", "You want your money back."),
            scenario("c", "You want a new lantern."),
        ];
        let openings = Openings::of(&scenarios);
        assert_eq!(
            openings.scenario_of(&[Message::user("I want my money back.")]),
            None
        );
        assert_eq!(
            openings.scenario_of(&[Message::user("I want a new lantern.")]),
            Some("c")
        );
    }
}
