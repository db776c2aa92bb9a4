//! `invented_fact`: the user stated an email, an id (order number, account,
//! zip code: any run of 5+ digits, or letters and 4+ digits) or an amount
//! that its scenario does not give (reason for contact, known info,
//! instructions, scripted turns) and the agent had not said before. A fact
//! only its `unknown_info` holds is an `instruction_leak` instead.

use std::collections::HashSet;

use crate::persona::UserScenario;

use super::input::{Speaker, UserTurns};
use super::words::{entities, entity_set, EntityKind};
use super::{excerpt, CheckResult, Evidence, UserFlag};

/// The facts a scenario gives its user: the same for every conversation of
/// it, so computed once per scenario ([`super::ScenarioBasis`]); `None`
/// when the scenario says nothing at all (an imported conversation without
/// one): then what the user knew is unknown, and so is the check.
pub type Basis = Option<HashSet<(EntityKind, String)>>;

pub fn basis(scenario: &UserScenario) -> Basis {
    let mut given: Vec<&str> = vec![
        &scenario.reason_for_contact,
        &scenario.known_info,
        &scenario.task_instructions,
        &scenario.unknown_info,
    ];
    given.extend(scenario.turns.iter().map(String::as_str));
    given.extend(scenario.opening.as_deref());
    if given.iter().all(|t| t.trim().is_empty()) {
        return None;
    }
    Some(entity_set(given))
}

pub fn check(turns: &UserTurns, basis: &Basis) -> CheckResult {
    let Some(basis) = basis else {
        return CheckResult::unknown(UserFlag::InventedFact);
    };
    // Words the dataset gave as the user's (a prelude's opening), not the
    // system prompt or tool results (the user sees neither; the prompt alone
    // was most of the check's regex work).
    let mut own = entity_set(
        turns
            .lines
            .iter()
            .filter(|l| l.speaker == Speaker::Given)
            .map(|l| l.text.as_str()),
    );
    // The facts the agent has said so far, grown line by line.
    let mut agent = HashSet::new();
    let mut evidence = Vec::new();
    for line in &turns.lines {
        match line.speaker {
            Speaker::Agent => {
                agent.extend(entity_set([line.text.as_str()]));
                continue;
            }
            Speaker::Given | Speaker::Other => continue,
            Speaker::User => {}
        }
        for entity in entities(&line.text) {
            let key = (entity.kind, entity.norm.clone());
            if basis.contains(&key) || own.contains(&key) || agent.contains(&key) {
                continue;
            }
            evidence.push(Evidence {
                message: Some(line.index),
                text: excerpt(&line.text),
                why: format!(
                    "{} '{}' is not in its scenario and the agent had not said it",
                    entity.kind.as_str(),
                    entity.text
                ),
            });
            // Said once, it is the user's own from then on.
            own.insert(key);
        }
    }
    CheckResult::from_evidence(UserFlag::InventedFact, evidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user_checks::input::dialogue as turns;
    use crate::user_checks::Outcome;

    fn scenario() -> UserScenario {
        UserScenario {
            reason_for_contact: "You want a refund of $50 for a lantern.".into(),
            known_info: "Your email is clara@example.com and your zip code is 70116. The order id is #W1234567.".into(),
            unknown_info: String::new(),
            task_instructions: "Ask for the refund.".into(),
            turns: vec![],
            opening: None,
        }
    }

    #[test]
    fn an_order_number_or_email_of_its_own_making_is_flagged_once() {
        let r = check(
            &turns(&[
                (
                    "user",
                    "My order is #W7654321 and my email is clara.b@example.org.",
                ),
                ("user", "Again: #W7654321."),
            ]),
            &basis(&scenario()),
        );
        assert_eq!(r.outcome, Outcome::Flagged);
        assert_eq!(r.evidence.len(), 2, "{:?}", r.evidence);
        assert!(r.evidence[0].why.contains("clara.b@example.org"));
        assert!(r.evidence[1].why.contains("#W7654321"));
    }

    #[test]
    fn facts_from_its_scenario_or_the_agent_are_not_invented() {
        let r = check(
            &turns(&[
                (
                    "user",
                    "Order W1234567, zip 70116, email clara@example.com, refund 50.00 please.",
                ),
                ("agent", "I see a refund of $12.99 to card 4242424242."),
                (
                    "user",
                    "So $12.99 to 4242424242? I'm 34 and it took 12 days.",
                ),
            ]),
            &basis(&scenario()),
        );
        assert_eq!(r.outcome, Outcome::Clear, "{:?}", r.evidence);
    }

    #[test]
    fn without_any_scenario_it_cannot_run() {
        let r = check(
            &turns(&[("user", "My order is #W7654321.")]),
            &basis(&UserScenario::default()),
        );
        assert_eq!(r.outcome, Outcome::Unknown);
    }

    #[test]
    fn an_amount_the_agent_only_says_later_was_invented() {
        let r = check(
            &turns(&[("user", "It cost $19.99."), ("agent", "Yes, $19.99.")]),
            &basis(&scenario()),
        );
        assert_eq!(r.outcome, Outcome::Flagged);
        assert_eq!(r.evidence[0].message, Some(0));
    }
}
