//! The mock user: opens with the scenario's reason for contact, answers questions
//! from its known info, confirms when asked, and stops once the agent is done.

use crate::llm::message::{Message, Role};
use crate::persona::Scenario;

use super::behaviour::Modifiers;
use super::policy::{ASK_IDENTITY, CONFIRM_MARK, DONE_PREFIX, TRANSFERRED};

/// The next user message. `messages` is the simulator's view: the agent's words
/// arrive as `user`, the simulated user's own as `assistant`.
pub fn respond(scenario: Option<&Scenario>, messages: &[Message], modifiers: &Modifiers) -> String {
    if modifiers.empty {
        return String::new();
    }
    let own = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count();
    let last_agent = messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .unwrap_or("");
    let Some(scenario) = scenario else {
        return if own == 0 {
            "Hi, I need some help with my account.".to_string()
        } else {
            "Okay, thanks. ###STOP###".to_string()
        };
    };
    if own == 0 {
        return scenario.user.reason_for_contact.clone();
    }
    if last_agent.contains(TRANSFERRED) {
        return "Okay, I'll wait for them. ###TRANSFER###".to_string();
    }
    if last_agent.starts_with(DONE_PREFIX) {
        return if modifiers.nonstop {
            "Hmm, one more thing: can you double-check that?".to_string()
        } else {
            "No, that's everything. Thank you! ###STOP###".to_string()
        };
    }
    if last_agent.contains(CONFIRM_MARK) {
        return "Yes, please go ahead.".to_string();
    }
    if last_agent.contains(ASK_IDENTITY) || last_agent.contains('?') {
        return format!("Sure. {}", scenario.user.known_info);
    }
    if own >= 15 && !modifiers.nonstop {
        return "I think we're going in circles. Thanks anyway. ###STOP###".to_string();
    }
    "Okay.".to_string()
}
