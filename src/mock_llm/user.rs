//! The mock user: opens with the scenario's reason for contact, answers questions
//! from its known info, confirms when asked, and stops once the agent is done.
//! The fidelity knobs (`+premature`, `+assistantish`, `+leaky`, `+inventive`)
//! make it commit one failure of a simulated user on some seeds: those where
//! [`misbehaves`] says so.

use crate::llm::message::{Message, Role};
use crate::persona::Scenario;

use super::behaviour::{stable_hash, Modifiers};
use super::policy::{ASK_IDENTITY, CONFIRM_MARK, DONE_PREFIX, TRANSFERRED};
use super::probe_policy::REFUSAL;

/// What `+premature` says when it leaves before the agent acted.
pub const PREMATURE_STOP: &str = "Actually, that's all I needed for now. Thanks! ###STOP###";
/// What `+assistantish` adds to its answers: the agent's line.
pub const ASSISTANTISH: &str = "Hello, how can I help you today?";

/// Whether a fidelity knob fires in this conversation: for half of the
/// (knob, scenario, seed) triples, chosen by a stable hash.
pub fn misbehaves(knob: &str, scenario: &Scenario, seed: u64) -> bool {
    stable_hash(&[knob.as_bytes(), scenario.id.as_bytes(), &seed.to_le_bytes()]).is_multiple_of(2)
}

/// The order number `+inventive` makes up: not in any scenario.
pub fn invented_order(scenario: &Scenario, seed: u64) -> String {
    let n = stable_hash(&[b"order", scenario.id.as_bytes(), &seed.to_le_bytes()]) % 900_000;
    format!("#ZZ{}", 100_000 + n)
}

/// The next user message. `messages` is the simulator's view: the agent's words
/// arrive as `user`, the simulated user's own as `assistant`.
pub fn respond(
    scenario: Option<&Scenario>,
    seed: u64,
    messages: &[Message],
    modifiers: &Modifiers,
) -> String {
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
        .map(|m| &*m.content)
        .unwrap_or("");
    let Some(scenario) = scenario else {
        return if own == 0 {
            "Hi, I need some help with my account.".to_string()
        } else {
            "Okay, thanks. ###STOP###".to_string()
        };
    };
    if own == 0 {
        return first_person(&scenario.user.reason_for_contact);
    }
    if last_agent.contains(TRANSFERRED) {
        return "Okay, I'll wait for them. ###TRANSFER###".to_string();
    }
    if let Some(push) = probe_push(scenario, messages, last_agent) {
        return push;
    }
    if last_agent.starts_with(DONE_PREFIX) || last_agent.starts_with(REFUSAL) {
        return if modifiers.nonstop {
            "Hmm, one more thing: can you double-check that?".to_string()
        } else if modifiers.stop_midtext {
            "Perfect, thank you so much! ###STOP### Agent: You're welcome! Is there anything else?"
                .to_string()
        } else {
            "No, that's everything. Thank you! ###STOP###".to_string()
        };
    }
    let fires = |on: bool, knob: &str| on && misbehaves(knob, scenario, seed);
    if fires(modifiers.premature, "premature")
        && (last_agent.contains(CONFIRM_MARK) || last_agent.contains('?'))
    {
        return PREMATURE_STOP.to_string();
    }
    if last_agent.contains(CONFIRM_MARK) {
        return "Yes, please go ahead.".to_string();
    }
    if last_agent.contains(ASK_IDENTITY) || last_agent.contains('?') {
        let mut answer = format!("Sure. {}", first_person(&scenario.user.known_info));
        if fires(modifiers.assistantish, "assistantish") {
            answer = format!("{ASSISTANTISH} {answer}");
        }
        if fires(modifiers.leaky, "leaky") {
            answer = format!(
                "{answer} {}",
                first_person(&scenario.user.task_instructions)
            );
        }
        if fires(modifiers.inventive, "inventive") {
            let order = invented_order(scenario, seed);
            answer = format!("{answer} Oh, and my other order is {order}.");
        }
        return answer;
    }
    if own >= 15 && !modifiers.nonstop {
        return "I think we're going in circles. Thanks anyway. ###STOP###".to_string();
    }
    "Okay.".to_string()
}

/// A probe's next push: the strategy's next line, while the agent has
/// answered (done or refused) and has not given in after a push (a done
/// after a push is the user's request granted).
fn probe_push(scenario: &Scenario, messages: &[Message], last_agent: &str) -> Option<String> {
    let lines = &scenario.probe.as_ref()?.escalation;
    let said = messages
        .iter()
        .filter(|m| m.role == Role::Assistant && lines.iter().any(|l| *l == *m.content))
        .count();
    let granted = said > 0 && last_agent.starts_with(DONE_PREFIX);
    let answered = last_agent.starts_with(DONE_PREFIX) || last_agent.starts_with(REFUSAL);
    (answered && !granted)
        .then(|| lines.get(said).cloned())
        .flatten()
}

/// Scenarios speak to the simulated user ("You ordered boots"); the mock user
/// speaks for itself ("I ordered boots"). Word-level, good enough for a double.
pub fn first_person(text: &str) -> String {
    const SUBJECT_AFTER: &[&str] = &["and", "but", "that", "if", "when", "because", "so", "as"];
    let mut out: Vec<String> = Vec::new();
    for word in text.split(' ') {
        let core = word.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '\'');
        let tail = &word[core.len()..];
        let previous = out.last().map(String::as_str);
        let subject = previous.is_none_or(|p| {
            p.ends_with(['.', ',', '!', '?', ':', ';']) || SUBJECT_AFTER.contains(&p)
        });
        let swapped = match core {
            "You" => "I",
            "you" if subject => "I",
            "you" => "me",
            "Your" => "My",
            "your" => "my",
            "yours" => "mine",
            "yourself" => "myself",
            "You're" | "you're" => "I'm",
            "You've" | "you've" => "I've",
            "are" if previous == Some("I") => "am",
            "were" if previous == Some("I") => "was",
            other => other,
        };
        out.push(format!("{swapped}{tail}"));
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_text_is_spoken_in_the_first_person() {
        assert_eq!(
            first_person("You ordered boots and you are waiting. Your email is a@b.example."),
            "I ordered boots and I am waiting. My email is a@b.example."
        );
        assert_eq!(first_person("Give it to you."), "Give it to me.");
    }
}
