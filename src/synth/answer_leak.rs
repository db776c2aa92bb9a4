//! The `answer_leak` stage: a fact the agent must communicate may not be in
//! what the user knows or says. A user told "the status of your processed
//! order" already holds the answer `processed`: the simulated user states it,
//! and the `communicate` reward then scores an agent that only repeats it.

use crate::persona::scenario::{Scenario, UserScenario};
use crate::verify::communicate::says_fact;

use super::stage::{Rejection, Stage};

/// The user's fields the simulated user knows or says, by their names in a
/// scenario row.
fn user_fields(user: &UserScenario) -> Vec<(String, &str)> {
    let mut fields = vec![
        (
            "user.reason_for_contact".to_string(),
            &*user.reason_for_contact,
        ),
        ("user.known_info".to_string(), &*user.known_info),
        (
            "user.task_instructions".to_string(),
            &*user.task_instructions,
        ),
    ];
    if let Some(opening) = &user.opening {
        fields.push(("user.opening".to_string(), opening));
    }
    for (i, turn) in user.turns.iter().enumerate() {
        fields.push((format!("user.turns[{i}]"), turn));
    }
    fields
}

/// Reject `scenario` when a fact of `evaluation.communicate` appears in a
/// field the user knows or says (matched as the `communicate` reward matches
/// it: whole words ignoring case, numbers as numbers), naming each leak.
pub fn check_answer_leak(scenario: &Scenario) -> Result<(), Rejection> {
    let fields = user_fields(&scenario.user);
    let leaks: Vec<String> = scenario
        .evaluation
        .communicate
        .iter()
        .flat_map(|fact| {
            fields
                .iter()
                .filter(|(_, text)| says_fact(text, fact))
                .map(move |(field, _)| format!("{fact:?} is in {field}"))
        })
        .collect();
    if leaks.is_empty() {
        return Ok(());
    }
    Err(Rejection::new(
        Stage::AnswerLeak,
        format!(
            "evaluation.communicate: {}; the user would already know what the agent must tell them, and may say it first. Leave the answer out of what the user knows and says (describe what they ask about without it), and keep it only in evaluation.communicate",
            leaks.join("; ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(user: serde_json::Value, communicate: &[&str]) -> Scenario {
        serde_json::from_value(serde_json::json!({
            "id": "s",
            "user": user,
            "evaluation": {
                "actions": [{"name": "get_order_details", "arguments": {"order_id": "#W1"}}],
                "communicate": communicate,
            }
        }))
        .unwrap()
    }

    #[test]
    fn a_fact_in_the_reason_for_contact_is_rejected_naming_the_field_and_the_fact() {
        let s = scenario(
            serde_json::json!({
                "reason_for_contact": "You want to know the status of your Processed order with the lamp.",
                "known_info": "Your email is ada@example.com.",
            }),
            &["processed"],
        );
        let r = check_answer_leak(&s).unwrap_err();
        assert_eq!(r.stage, Stage::AnswerLeak);
        assert!(
            r.reason
                .contains("\"processed\" is in user.reason_for_contact"),
            "{}",
            r.reason
        );
        assert!(!r.reason.contains("known_info"), "{}", r.reason);
    }

    #[test]
    fn every_field_the_user_knows_or_says_is_read_numbers_as_numbers() {
        let s = scenario(
            serde_json::json!({
                "reason_for_contact": "Your gift card.",
                "known_info": "The balance was $54.10 last week.",
                "task_instructions": "Ask for the balance.",
                "opening": "Hi, is it 54.1?",
                "turns": ["ok", "so 54.10 then"],
            }),
            &["54.1"],
        );
        let r = check_answer_leak(&s).unwrap_err();
        for field in ["user.known_info", "user.opening", "user.turns[1]"] {
            assert!(r.reason.contains(field), "{field}: {}", r.reason);
        }
        assert!(!r.reason.contains("reason_for_contact"), "{}", r.reason);
    }

    #[test]
    fn a_fact_only_inside_a_longer_word_or_number_or_in_unknown_info_is_no_leak() {
        let s = scenario(
            serde_json::json!({
                "reason_for_contact": "Your cardigan order from 2024 has not arrived; it cost 300 dollars.",
                "unknown_info": "You do not know whether it is delivered or the card used.",
            }),
            &["card", "30", "delivered"],
        );
        assert_eq!(check_answer_leak(&s), Ok(()));
    }
}
