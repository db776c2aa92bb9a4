//! Whether a simulation belongs to the task the file pairs it with: a
//! simulated user that plays its task says at least one of the task's
//! identifiers (a user id, a reservation or order number, an email, a zip
//! code) somewhere in the conversation. A file whose simulations are paired
//! with the wrong tasks (a tau2-bench run saved with another run's task
//! list) shows as users who never say any of theirs: the checks that read
//! the scenario would then judge each user against someone else's task.
//!
//! The result is kept with the conversation (metadata `task_pairing`:
//! `identifiers`, the task's, in the order first written; `mentioned`, those
//! its user said; `paired`), and an import counts the conversations that
//! are not paired. Without a scenario, or with one that names no
//! identifier, there is nothing to check: `None`.

use serde_json::{json, Value};

use crate::llm::message::Role;

use super::ImportedConversation;

/// The metadata key the result is stored under.
pub const PAIRING_KEY: &str = "task_pairing";

/// `{identifiers, mentioned, paired}`, or `None` when nothing can be checked.
pub(super) fn check(c: &ImportedConversation) -> Option<Value> {
    let scenario = c.scenario.as_ref()?;
    let mut identifiers: Vec<String> = Vec::new();
    for text in [
        &scenario.reason_for_contact,
        &scenario.known_info,
        &scenario.task_instructions,
    ] {
        for id in identifiers_in(text) {
            if !identifiers.contains(&id) {
                identifiers.push(id);
            }
        }
    }
    if identifiers.is_empty() {
        return None;
    }
    let said: Vec<String> = c
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .flat_map(|m| identifiers_in(&m.content))
        .collect();
    let mentioned: Vec<&String> = identifiers.iter().filter(|i| said.contains(i)).collect();
    Some(json!({
        "identifiers": identifiers,
        "mentioned": mentioned,
        "paired": !mentioned.is_empty(),
    }))
}

/// Whether a stored pairing result says the user never spoke of its task.
pub fn unpaired(pairing: &Value) -> bool {
    pairing.get("paired") == Some(&Value::Bool(false))
}

/// The identifiers a text names, lower case: emails, and tokens of letters,
/// digits, `_` and `-` that hold a digit and are at least 5 characters long
/// with a letter or `_` in them (`emma_kim_9957`, `EHGLP3`, `#W2378156`
/// without its `#`), or 5 digits and more (a zip code, an account number).
/// Dates (`2024-05-20`) and amounts are not identifiers.
pub fn identifiers_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for token in text.split(|c: char| !(c.is_ascii_alphanumeric() || "_-@.+".contains(c))) {
        let token = token.trim_matches(|c: char| ".-+".contains(c));
        if token.contains('@') {
            let email = token.to_ascii_lowercase();
            if email
                .split_once('@')
                .is_some_and(|(a, b)| !a.is_empty() && b.contains('.'))
            {
                out.push(email);
            }
            continue;
        }
        for part in token.split('.') {
            let digits = part.chars().filter(char::is_ascii_digit).count();
            let letters = part.chars().any(|c| c.is_ascii_alphabetic() || c == '_');
            let long = part.chars().count() >= 5;
            let all_digits = digits == part.chars().filter(|c| *c != '-').count();
            if long && digits > 0 && (letters || (all_digits && !part.contains('-'))) {
                out.push(part.to_ascii_lowercase());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::Message;
    use crate::persona::UserScenario;

    fn conversation(known: &str, user: &[&str]) -> ImportedConversation {
        let mut messages = vec![Message::assistant("Hi! How can I help you today?")];
        messages.extend(user.iter().map(|u| Message::user(*u)));
        let mut c =
            ImportedConversation::new(1, messages, vec![], None, Default::default()).unwrap();
        c.scenario = Some(UserScenario {
            known_info: known.into(),
            ..UserScenario::default()
        });
        c
    }

    #[test]
    fn identifiers_are_ids_emails_and_zip_codes_not_dates_or_amounts() {
        assert_eq!(
            identifiers_in(
                "You are Emma Kim, user id emma_kim_9957, reservation EHGLP3 or #W2378156. \
                 Email emma.kim@example.com, zip 78750. On 2024-05-20, pay $250 or 1234."
            ),
            [
                "emma_kim_9957",
                "ehglp3",
                "w2378156",
                "emma.kim@example.com",
                "78750"
            ]
        );
    }

    #[test]
    fn a_user_who_never_says_its_tasks_identifiers_is_not_paired() {
        let known = "Your user id is emma_kim_9957. Your zip is 78750.";
        let paired = check(&conversation(
            known,
            &["Hi, I am Emma.", "It's EMMA_KIM_9957."],
        ))
        .unwrap();
        assert_eq!(paired["paired"], true);
        assert_eq!(paired["mentioned"], json!(["emma_kim_9957"]));
        let other = check(&conversation(
            known,
            &["My id is noah_lee_1234, zip 10001."],
        ))
        .unwrap();
        assert!(unpaired(&other), "{other}");
        assert_eq!(check(&conversation("You are Emma.", &["Hi."])), None);
    }
}
