//! `instruction_leak`: the user gave away what it was told in secret. Three
//! signs: [`LEAKED_WORDS`] words in a row of its `task_instructions` or
//! `unknown_info` (first and second person read alike, and runs its
//! `known_info`, its reason for contact, its scripted turns or the agent
//! also hold do not count); speaking of its instructions or the simulation
//! ([`META_PHRASES`]); or an id, email or amount that only its `unknown_info`
//! holds, said before the agent said it.

use std::collections::HashSet;

use crate::persona::UserScenario;

use super::input::{Speaker, UserTurns};
use super::role_confusion::plain;
use super::words::{
    entities, entity_set, fold_person, ngrams, quote, shared_run, words, Entity, GramSet,
};
use super::{excerpt, CheckResult, Evidence, UserFlag};

/// Words in a row from the hidden instructions that make a leak.
pub const LEAKED_WORDS: usize = 6;

/// A user speaking of the simulation itself.
pub const META_PHRASES: &[&str] = &[
    "my instructions",
    "i was instructed",
    "i am instructed",
    "i'm instructed",
    "i was told to",
    "the scenario",
    "my scenario",
    "role-play",
    "roleplay",
    "role play",
    "simulated customer",
    "simulated user",
    "task_instructions",
    "known_info",
    "unknown_info",
    "reason_for_contact",
];

/// What the check reads of the scenario alone: the same for every
/// conversation of it, so computed once per scenario ([`super::ScenarioBasis`]).
#[derive(Debug, Default)]
pub struct Basis {
    /// The word runs of its hidden texts.
    hidden: GramSet,
    /// The word runs of what the user was given to say.
    given: GramSet,
    /// Facts only its unknown info holds.
    secret_facts: Vec<Entity>,
}

pub fn basis(scenario: &UserScenario) -> Basis {
    let hidden: Vec<&str> = [
        scenario.task_instructions.as_str(),
        scenario.unknown_info.as_str(),
    ]
    .into_iter()
    .filter(|t| !t.trim().is_empty())
    .collect();
    let mut given: Vec<&str> = vec![&scenario.known_info, &scenario.reason_for_contact];
    given.extend(scenario.turns.iter().map(String::as_str));
    let grams = |texts: &[&str]| -> GramSet {
        texts
            .iter()
            .flat_map(|t| ngrams(&words(t), LEAKED_WORDS, fold_person))
            .collect()
    };
    // Facts only the unknown info holds.
    let mut known_facts = entity_set(given.iter().copied());
    known_facts.extend(entity_set([scenario.task_instructions.as_str()]));
    let secret_facts = entities(&scenario.unknown_info)
        .into_iter()
        .filter(|e| !known_facts.contains(&(e.kind, e.norm.clone())))
        .collect();
    Basis {
        hidden: grams(&hidden),
        given: grams(&given),
        secret_facts,
    }
}

pub fn check(turns: &UserTurns, basis: &Basis) -> CheckResult {
    // What the agent has said so far: its word runs and facts are the
    // user's to repeat from then on. Grown line by line (not recomputed for
    // each user line, which made the check quadratic in the turns).
    let mut agent_grams = GramSet::default();
    let mut agent_facts = HashSet::new();
    let mut evidence = Vec::new();
    for line in &turns.lines {
        match line.speaker {
            Speaker::Agent => {
                agent_grams.extend(ngrams(&words(&line.text), LEAKED_WORDS, fold_person));
                agent_facts.extend(entity_set([line.text.as_str()]));
                continue;
            }
            Speaker::Given | Speaker::Other => continue,
            Speaker::User => {}
        }
        let lower = plain(&line.text);
        if let Some(phrase) = META_PHRASES.iter().find(|p| lower.contains(*p)) {
            evidence.push(Evidence {
                message: Some(line.index),
                text: excerpt(&line.text),
                why: format!("speaks of the simulation: '{phrase}'"),
            });
            continue;
        }
        let said = words(&line.text);
        let allowed = [&basis.given, &agent_grams];
        if let Some(run) = shared_run(&said, LEAKED_WORDS, fold_person, &basis.hidden, &allowed) {
            evidence.push(Evidence {
                message: Some(line.index),
                text: excerpt(quote(&line.text, &said, run.clone())),
                why: format!("{} words in a row of its hidden instructions", run.len()),
            });
            continue;
        }
        let said_facts = entity_set([line.text.as_str()]);
        if let Some(secret) = basis.secret_facts.iter().find(|e| {
            let key = (e.kind, e.norm.clone());
            said_facts.contains(&key) && !agent_facts.contains(&key)
        }) {
            evidence.push(Evidence {
                message: Some(line.index),
                text: excerpt(&line.text),
                why: format!(
                    "says {} '{}', which only its unknown info holds",
                    secret.kind.as_str(),
                    secret.text
                ),
            });
        }
    }
    CheckResult::from_evidence(UserFlag::InstructionLeak, evidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user_checks::input::dialogue as turns;
    use crate::user_checks::Outcome;

    fn scenario() -> UserScenario {
        UserScenario {
            reason_for_contact: "You ordered hiking boots and want to track them.".into(),
            known_info: "Your email is theo@inkwell.example. The order id is #LL21743.".into(),
            unknown_info: "You do not know the tracking number PW5005336661 or the carrier.".into(),
            task_instructions: "Ask for the tracking number of your boots. Give your email when asked for identification. Do not ask for anything else.".into(),
            turns: vec![],
            opening: None,
        }
    }

    #[test]
    fn instructions_retold_in_the_first_person_are_a_leak() {
        let r = check(
            &turns(&[
                ("agent", "Hi!"),
                (
                    "user",
                    "OK so: I give my email when asked for identification, fine?",
                ),
            ]),
            &basis(&scenario()),
        );
        assert_eq!(r.outcome, Outcome::Flagged);
        assert_eq!(
            r.evidence[0].text,
            "give my email when asked for identification"
        );
    }

    #[test]
    fn speaking_of_the_scenario_or_a_fact_it_should_not_know_is_a_leak() {
        let meta = check(
            &turns(&[("user", "My instructions say to ask about boots.")]),
            &basis(&scenario()),
        );
        assert_eq!(meta.outcome, Outcome::Flagged);
        let secret = check(
            &turns(&[("user", "Is the tracking number PW5005336661?")]),
            &basis(&scenario()),
        );
        assert_eq!(secret.outcome, Outcome::Flagged);
        assert!(secret.evidence[0].why.contains("PW5005336661"));
        let after_agent = check(
            &turns(&[
                ("agent", "It is PW5005336661."),
                ("user", "Great, PW5005336661, thanks."),
            ]),
            &basis(&scenario()),
        );
        assert_eq!(after_agent.outcome, Outcome::Clear);
    }

    #[test]
    fn known_info_and_the_agents_words_are_not_a_leak() {
        let r = check(
            &turns(&[
                ("agent", "What is the tracking number of your boots you want?"),
                ("user", "I ordered hiking boots and want to track them. My email is theo@inkwell.example. The order id is #LL21743."),
            ]),
            &basis(&scenario()),
        );
        assert_eq!(r.outcome, Outcome::Clear, "{:?}", r.evidence);
    }
}
