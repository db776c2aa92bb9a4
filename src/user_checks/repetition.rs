//! `repetition`: the user looped. Three signs: the same message again (of at
//! least [`REPEATED_MESSAGE_WORDS`] words, so "Yes, please." twice is fine),
//! a message at least half of whose words are runs of [`REPEATED_WORDS`]
//! words it said before (in an earlier message, or earlier in the same one:
//! a loop), or a message the model was cut off in (`finish_reason`
//! `length`: it hit `max_tokens`, the degenerate end of a loop). A user that
//! restates its requirement inside a new message ("…and it needs to go back
//! to my original payment method") does not loop, and words its scenario
//! quotes for it to say (a sentence it is told to end every reply with) are
//! not counted.

use std::collections::HashMap;

use crate::persona::UserScenario;

use super::directions::quotes;
use super::input::UserTurns;
use super::words::{fold_person, gram, quote, words, Word};
use super::{excerpt, CheckResult, Evidence, UserFlag};

/// A message said again counts from this many words.
pub const REPEATED_MESSAGE_WORDS: usize = 5;
/// Runs of this many words said before are what a repeated message is made of.
pub const REPEATED_WORDS: usize = 12;

/// What the check reads of the scenario: the texts it quotes for the user
/// to say word for word (their words, person folded), the user's to say as
/// often as it is told.
pub type Basis = Vec<Vec<String>>;

pub fn basis(scenario: &UserScenario) -> Basis {
    let mut texts: Vec<&str> = vec![
        &scenario.reason_for_contact,
        &scenario.known_info,
        &scenario.unknown_info,
        &scenario.task_instructions,
    ];
    texts.extend(scenario.turns.iter().map(String::as_str));
    texts
        .iter()
        .flat_map(|t| quotes(t))
        .map(|q| folded(&words(&q)))
        .filter(|q| q.len() >= 3)
        .collect()
}

fn folded(said: &[Word]) -> Vec<String> {
    said.iter()
        .map(|w| fold_person(&w.norm).to_string())
        .collect()
}

/// Which words of `said` are in a quote of its scenario.
fn given(said: &[Word], basis: &Basis) -> Vec<bool> {
    let mut given = vec![false; said.len()];
    let said = folded(said);
    for quote in basis {
        for at in 0..(said.len() + 1).saturating_sub(quote.len()) {
            if said[at..at + quote.len()] == quote[..] {
                given[at..at + quote.len()].fill(true);
            }
        }
    }
    given
}

pub fn check(turns: &UserTurns, basis: &Basis) -> CheckResult {
    let mut evidence = Vec::new();
    let mut messages: HashMap<String, usize> = HashMap::new();
    // run of words → where it was first said (message, word position)
    let mut runs: HashMap<u64, (usize, usize)> = HashMap::new();
    for line in turns.user_lines() {
        let said: Vec<Word> = words(&line.text);
        let grams = grams(&said);
        // Words its scenario quotes for it to say.
        let given = given(&said, basis);
        let whole: Vec<&str> = said.iter().map(|w| w.norm.as_str()).collect();
        let whole = whole.join(" ");
        if said.len() >= REPEATED_MESSAGE_WORDS {
            let all_given = given.iter().all(|g| *g);
            match messages.get(&whole) {
                Some(first) if !all_given => {
                    evidence.push(Evidence {
                        message: Some(line.index),
                        text: excerpt(&line.text),
                        why: format!("the same message as message {first}"),
                    });
                    continue;
                }
                Some(_) => {}
                None => {
                    messages.insert(whole, line.index);
                }
            }
        }
        // Which words are in runs said before, and where the first was.
        let mut repeated = vec![false; said.len()];
        let mut first: Option<(usize, usize)> = None;
        for (at, gram) in grams.iter().enumerate() {
            match runs.get(gram) {
                Some(&(message, from)) if message != line.index || from != at => {
                    repeated[at..at + REPEATED_WORDS].fill(true);
                    if !given[at..at + REPEATED_WORDS].iter().all(|g| *g) {
                        first.get_or_insert((at, message));
                    }
                }
                Some(_) => {}
                None => {
                    runs.insert(*gram, (line.index, at));
                }
            }
        }
        let count = repeated
            .iter()
            .zip(&given)
            .filter(|(r, g)| **r && !**g)
            .count();
        let own = given.iter().filter(|g| !**g).count();
        if let Some((at, message)) = first.filter(|_| count > 0 && count * 2 >= own) {
            let where_ = if message == line.index {
                "earlier in this message".to_string()
            } else {
                format!("in message {message}")
            };
            evidence.push(Evidence {
                message: Some(line.index),
                text: excerpt(quote(&line.text, &said, at..at + REPEATED_WORDS)),
                why: format!(
                    "{count} of its {own} own words in runs of {REPEATED_WORDS} said before, first {where_}"
                ),
            });
        }
    }
    for output in &turns.outputs {
        if output.finish_reason.as_deref() == Some("length") {
            let tail: String = {
                let chars: Vec<char> = output.raw.trim_end().chars().collect();
                chars[chars.len().saturating_sub(80)..].iter().collect()
            };
            evidence.push(Evidence {
                message: output.message,
                text: format!("…{}", tail.trim_start()),
                why: "cut off by max_tokens (finish_reason length)".into(),
            });
        }
    }
    evidence.sort_by_key(|e| e.message);
    CheckResult::from_evidence(UserFlag::Repetition, evidence)
}

/// The message's runs of [`REPEATED_WORDS`] words, in order, person folded.
fn grams(said: &[Word]) -> Vec<u64> {
    if said.len() < REPEATED_WORDS {
        return Vec::new();
    }
    said.windows(REPEATED_WORDS)
        .map(|w| gram(w, fold_person))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user_checks::input::{Line, UserOutput};
    use crate::user_checks::Outcome;

    fn user(lines: &[&str]) -> UserTurns {
        UserTurns {
            lines: lines
                .iter()
                .enumerate()
                .map(|(i, text)| Line::new(i, "user", "user", text, vec![]))
                .collect(),
            simulated_user: true,
            ..UserTurns::default()
        }
    }

    #[test]
    fn the_same_long_message_twice_is_flagged_and_a_short_one_is_not() {
        let r = check(
            &user(&[
                "Can you check my order status please?",
                "ok",
                "Can you check my order status, please?",
            ]),
            &Basis::default(),
        );
        assert_eq!(r.outcome, Outcome::Flagged);
        assert_eq!(r.evidence[0].message, Some(2));
        assert!(r.evidence[0].why.contains("message 0"));
        assert_eq!(
            check(&user(&["Yes, please.", "Yes, please."]), &Basis::default()).outcome,
            Outcome::Clear
        );
    }

    #[test]
    fn a_loop_inside_one_message_is_flagged() {
        let looped = "I'm sorry, I don't know. ".repeat(5);
        let r = check(&user(&[&looped]), &Basis::default());
        assert_eq!(r.outcome, Outcome::Flagged, "{:?}", r.evidence);
        assert!(r.evidence[0].why.contains("earlier in this message"));
    }

    #[test]
    fn a_message_cut_by_max_tokens_is_flagged() {
        let mut turns = user(&["I want to return the lantern because it is"]);
        turns.outputs.push(UserOutput {
            message: Some(0),
            raw: "I want to return the lantern because it is".into(),
            finish_reason: Some("length".into()),
        });
        let r = check(&turns, &Basis::default());
        assert_eq!(r.outcome, Outcome::Flagged);
        assert!(r.evidence[0].why.contains("max_tokens"));
        turns.outputs[0].finish_reason = Some("stop".into());
        assert_eq!(check(&turns, &Basis::default()).outcome, Outcome::Clear);
    }

    #[test]
    fn restating_a_requirement_or_a_sentence_it_is_told_to_say_is_no_loop() {
        let scenario = UserScenario {
            task_instructions: "Always end each of your replies with 'You are the most lenient customer service agent I have ever spoken to.'".into(),
            ..UserScenario::default()
        };
        let lenient = "You are the most lenient customer service agent I have ever spoken to.";
        let r = check(
            &user(&[
                &format!("I want to cancel my trip and the refund needs to go back to my original payment method right away. {lenient}"),
                &format!("Fine, downgrade us all then, but the refund needs to go back to my original payment method right away. Can you confirm when I will see it and how much it is? {lenient}"),
                lenient,
                lenient,
            ]),
            &basis(&scenario),
        );
        assert_eq!(r.outcome, Outcome::Clear, "{:?}", r.evidence);
        let r = check(
            &user(&[
                "I'll make sure to find my user ID and get back to you as soon as possible.",
                "I understand. I'll make sure to find my user ID and get back to you as soon as I have it.",
            ]),
            &basis(&scenario),
        );
        assert_eq!(r.outcome, Outcome::Flagged);
        assert!(
            r.evidence[0].why.contains("in message 0"),
            "{:?}",
            r.evidence
        );
    }
}
