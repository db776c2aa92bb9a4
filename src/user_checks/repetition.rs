//! `repetition`: the user looped. Three signs: the same message again (of at
//! least [`REPEATED_MESSAGE_WORDS`] words, so "Yes, please." twice is fine),
//! a run of [`REPEATED_WORDS`] words said twice (in one message or two), or a
//! message the model was cut off in (`finish_reason` `length`: it hit
//! `max_tokens`, the degenerate end of a loop).

use std::collections::HashMap;

use super::input::UserTurns;
use super::words::{quote, words, Word};
use super::{excerpt, CheckResult, Evidence, UserFlag};

/// A message said again counts from this many words.
pub const REPEATED_MESSAGE_WORDS: usize = 5;
/// A run of this many words said twice is a loop.
pub const REPEATED_WORDS: usize = 12;

pub fn check(turns: &UserTurns) -> CheckResult {
    let mut evidence = Vec::new();
    let mut messages: HashMap<String, usize> = HashMap::new();
    // n-gram → where it was first said (message, word position)
    let mut runs: HashMap<String, (usize, usize)> = HashMap::new();
    for line in turns.user_lines() {
        let said: Vec<Word> = words(&line.text);
        let whole: Vec<&str> = said.iter().map(|w| w.norm.as_str()).collect();
        if said.len() >= REPEATED_MESSAGE_WORDS {
            if let Some(first) = messages.get(&whole.join(" ")) {
                evidence.push(Evidence {
                    message: Some(line.index),
                    text: excerpt(&line.text),
                    why: format!("the same message as message {first}"),
                });
                continue;
            }
            messages.insert(whole.join(" "), line.index);
        }
        if let Some(found) = repeated_run(line.index, &line.text, &said, &mut runs) {
            evidence.push(found);
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

/// The first run of [`REPEATED_WORDS`] words of this message said before
/// (earlier in it, or in an earlier message); records its runs for the
/// messages after it. Said twice in one message, even overlapping, a run is
/// a loop: the text repeats with a period shorter than the run.
fn repeated_run(
    index: usize,
    text: &str,
    said: &[Word],
    runs: &mut HashMap<String, (usize, usize)>,
) -> Option<Evidence> {
    if said.len() < REPEATED_WORDS {
        return None;
    }
    let mut found = None;
    for at in 0..=said.len() - REPEATED_WORDS {
        let gram: Vec<&str> = said[at..at + REPEATED_WORDS]
            .iter()
            .map(|w| w.norm.as_str())
            .collect();
        let gram = gram.join(" ");
        match runs.get(&gram) {
            Some(&(message, first)) if message != index || first != at => {
                let where_ = if message == index {
                    "earlier in this message".to_string()
                } else {
                    format!("in message {message}")
                };
                found = Some(Evidence {
                    message: Some(index),
                    text: excerpt(quote(text, said, at..at + REPEATED_WORDS)),
                    why: format!("{REPEATED_WORDS} words said before, {where_}"),
                });
                break;
            }
            Some(_) => {}
            None => {
                runs.insert(gram, (index, at));
            }
        }
    }
    found
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
        let r = check(&user(&[
            "Can you check my order status please?",
            "ok",
            "Can you check my order status, please?",
        ]));
        assert_eq!(r.outcome, Outcome::Flagged);
        assert_eq!(r.evidence[0].message, Some(2));
        assert!(r.evidence[0].why.contains("message 0"));
        assert_eq!(
            check(&user(&["Yes, please.", "Yes, please."])).outcome,
            Outcome::Clear
        );
    }

    #[test]
    fn a_loop_inside_one_message_is_flagged() {
        let looped = "I'm sorry, I don't know. ".repeat(5);
        let r = check(&user(&[&looped]));
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
        let r = check(&turns);
        assert_eq!(r.outcome, Outcome::Flagged);
        assert!(r.evidence[0].why.contains("max_tokens"));
        turns.outputs[0].finish_reason = Some("stop".into());
        assert_eq!(check(&turns).outcome, Outcome::Clear);
    }
}
