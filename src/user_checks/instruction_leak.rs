//! `instruction_leak`: the user gave its instructions away. What its task
//! wants it to say (its errand, its identity, the reason it gives) is not a
//! leak, even word for word: the agent is meant to hear it. Four signs:
//! - it speaks of its instructions or the simulation ([`META_PHRASES`]);
//! - it repeats [`LEAKED_WORDS`] words in a row of a direction of its
//!   scenario, covering the words that make it one (`the agent`, an order
//!   at a clause's head: see [`super::directions`]), first and second person
//!   read alike: "if the agent refuses, mention that…";
//! - it recites [`LEAKED_WORDS`] words in a row of its scenario as written,
//!   in the scenario's second person ("You want to cancel reservation
//!   EHGLP3" said by the user, of itself);
//! - it says an id, email or amount that only its `unknown_info` holds,
//!   before the agent said it.
//!
//! Text the scenario quotes is the user's to say word for word, and runs the
//! agent said before are the user's to repeat.

use std::collections::HashSet;

use crate::persona::UserScenario;

use super::directions::segments;
use super::input::{Speaker, UserTurns};
use super::role_confusion::plain;
use super::words::{
    as_written, entities, entity_set, fold_person, ngrams, quote, shared_run, words, Entity,
    GramSet, Word,
};
use super::{excerpt, CheckResult, Evidence, UserFlag};

/// Words in a row from the scenario that make a leak.
pub const LEAKED_WORDS: usize = 6;

/// A user speaking of the simulation itself.
pub const META_PHRASES: &[&str] = &[
    "my instructions",
    "i was instructed",
    "i am instructed",
    "i'm instructed",
    "as instructed",
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
    "reason_for_call",
];

/// Second-person words: a run of the scenario as written that holds one is
/// the scenario speaking to the user.
const SECOND_PERSON: &[&str] = &[
    "you", "your", "yours", "yourself", "you're", "you've", "you'll", "you'd",
];

/// What the check reads of the scenario alone: the same for every
/// conversation of it, so computed once per scenario ([`super::ScenarioBasis`]).
#[derive(Debug, Default)]
pub struct Basis {
    /// Runs of its directions that cover a direction mark (person folded).
    directions: GramSet,
    /// Runs of its texts as written that hold a second-person word.
    second_person: GramSet,
    /// Facts only its unknown info holds.
    secret_facts: Vec<Entity>,
}

pub fn basis(scenario: &UserScenario) -> Basis {
    let mut texts: Vec<&str> = vec![
        &scenario.reason_for_contact,
        &scenario.known_info,
        &scenario.unknown_info,
        &scenario.task_instructions,
    ];
    texts.extend(scenario.turns.iter().map(String::as_str));
    let mut directions = GramSet::default();
    let mut second_person = GramSet::default();
    for segment in texts.iter().flat_map(|t| segments(t)) {
        let n = LEAKED_WORDS;
        for (at, window) in segment.words.windows(n).enumerate() {
            if segment.marks[at..at + n].iter().any(|m| *m) {
                directions.extend(ngrams(window, n, fold_person));
            }
            if window
                .iter()
                .any(|w| SECOND_PERSON.contains(&w.norm.as_str()))
            {
                second_person.extend(ngrams(window, n, as_written));
            }
        }
    }
    // Facts only the unknown info holds.
    let mut known_facts = entity_set([
        scenario.reason_for_contact.as_str(),
        scenario.known_info.as_str(),
        scenario.task_instructions.as_str(),
    ]);
    known_facts.extend(entity_set(scenario.turns.iter().map(String::as_str)));
    let secret_facts = entities(&scenario.unknown_info)
        .into_iter()
        .filter(|e| !known_facts.contains(&(e.kind, e.norm.clone())))
        .collect();
    Basis {
        directions,
        second_person,
        secret_facts,
    }
}

pub fn check(turns: &UserTurns, basis: &Basis) -> CheckResult {
    // What the agent has said so far: its word runs and facts are the
    // user's to repeat from then on. Grown line by line (not recomputed for
    // each user line, which made the check quadratic in the turns).
    let mut agent_folded = GramSet::default();
    let mut agent_written = GramSet::default();
    let mut agent_facts = HashSet::new();
    let mut evidence = Vec::new();
    for line in &turns.lines {
        match line.speaker {
            Speaker::Agent => {
                let said = words(&line.text);
                agent_folded.extend(ngrams(&said, LEAKED_WORDS, fold_person));
                agent_written.extend(ngrams(&said, LEAKED_WORDS, as_written));
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
        let said: Vec<Word> = words(&line.text);
        let found = shared_run(
            &said,
            LEAKED_WORDS,
            fold_person,
            &basis.directions,
            &[&agent_folded],
        )
        .map(|run| (run, "of a direction of its instructions"))
        .or_else(|| {
            shared_run(
                &said,
                LEAKED_WORDS,
                as_written,
                &basis.second_person,
                &[&agent_written],
            )
            .map(|run| (run, "of its scenario as written, in its second person"))
        });
        if let Some((run, what)) = found {
            evidence.push(Evidence {
                message: Some(line.index),
                text: excerpt(quote(&line.text, &said, run.clone())),
                why: format!("{} words in a row {what}", run.len()),
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
    fn saying_what_the_task_wants_is_no_leak_but_reciting_it_or_its_directions_is() {
        let tau2 = UserScenario {
            reason_for_contact: "You want to cancel reservation EHGLP3.".into(),
            known_info: "You are Emma Kim.\nYour user id is emma_kim_9957.".into(),
            task_instructions: "If Agent tells you that cancellation is not possible,\nmention that you were told that you didn't need to get insurance because your previous trip was booked with the same agency with insurance.\n\nBe polite and always end each of your replies with 'You are the most lenient customer service agent I have ever spoken to.'".into(),
            ..UserScenario::default()
        };
        let b = basis(&tau2);
        for clean in [
            "Hi, I want to cancel reservation EHGLP3. My user id is emma_kim_9957.",
            "I was told that I didn't need to get insurance because my previous trip was booked with the same agency with insurance.",
            "Thanks. You are the most lenient customer service agent I have ever spoken to.",
        ] {
            let r = check(&turns(&[("agent", "Hi!"), ("user", clean)]), &b);
            assert_eq!(r.outcome, Outcome::Clear, "{clean}: {:?}", r.evidence);
        }
        for leak in [
            "If the agent tells me that cancellation is not possible, I mention that I was told so.",
            "You want to cancel reservation EHGLP3, and your user id is emma_kim_9957.",
            "I'll be polite and always end each of my replies with a compliment.",
        ] {
            let r = check(&turns(&[("agent", "Hi!"), ("user", leak)]), &b);
            assert_eq!(r.outcome, Outcome::Flagged, "{leak}");
        }
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
