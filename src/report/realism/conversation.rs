//! The user side of one conversation, as the measures read it, and what
//! each measure counts in it (computed once; the bootstrap only adds up).
//! Words and word pairs are numbered by a [`Vocabulary`] shared by both
//! jobs, so the vocabulary's tables are vectors indexed by those numbers.

use std::collections::HashMap;

use super::disclosure::disclosure_order;
use super::ending::{ending, Ending};
use super::lexicon::{asks_question, corrects_agent, expresses_frustration, has_id_or_number};
use super::typos::typos;
use super::words::words;

/// What the store gives for one conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct UserSide {
    pub scenario_id: String,
    /// The user's turns, in order (the system prompt and tool turns left out).
    pub user_turns: Vec<String>,
    /// Whether the agent spoke before each user turn (a correction needs
    /// something to correct).
    pub after_agent: Vec<bool>,
    pub termination: String,
    /// No message came after the user's last turn.
    pub user_spoke_last: bool,
    /// The scenario's `known_info`, when known.
    pub known_info: Option<String>,
}

/// Numbers for words and for pairs of words, shared by both jobs.
#[derive(Debug, Default)]
pub struct Vocabulary {
    words: HashMap<String, u32>,
    pairs: HashMap<(u32, u32), u32>,
}

impl Vocabulary {
    fn word(&mut self, w: String) -> u32 {
        let next = u32::try_from(self.words.len()).unwrap_or(u32::MAX);
        *self.words.entry(w).or_insert(next)
    }

    fn pair(&mut self, a: u32, b: u32) -> u32 {
        let next = u32::try_from(self.pairs.len()).unwrap_or(u32::MAX);
        *self.pairs.entry((a, b)).or_insert(next)
    }

    /// The number of `w`, if it was seen.
    pub fn number_of(&self, w: &str) -> Option<u32> {
        self.words.get(w).copied()
    }
}

fn tally(ids: impl IntoIterator<Item = u32>) -> Vec<(u32, u64)> {
    let mut counts: HashMap<u32, u64> = HashMap::new();
    for id in ids {
        *counts.entry(id).or_default() += 1;
    }
    let mut counts: Vec<(u32, u64)> = counts.into_iter().collect();
    counts.sort_unstable();
    counts
}

/// The counts of one conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Counted {
    pub scenario_id: String,
    pub turns: u64,
    pub words: u64,
    pub questions: u64,
    pub ids: u64,
    /// User turns after an agent turn, and those that correct it.
    pub answering: u64,
    pub corrections: u64,
    pub frustrated: u64,
    pub typos: u64,
    pub disclosure: Option<f64>,
    pub ending: Ending,
    /// Every word of the user's turns, in order, by number.
    pub tokens: Vec<u32>,
    /// (word, count), and (pair of words within one turn, count), by number.
    pub unigrams: Vec<(u32, u64)>,
    pub bigrams: Vec<(u32, u64)>,
}

impl Counted {
    pub fn of(c: &UserSide, vocabulary: &mut Vocabulary) -> Counted {
        let mut counted = Counted {
            scenario_id: c.scenario_id.clone(),
            turns: c.user_turns.len() as u64,
            words: 0,
            questions: 0,
            ids: 0,
            answering: 0,
            corrections: 0,
            frustrated: 0,
            typos: 0,
            disclosure: c
                .known_info
                .as_deref()
                .and_then(|k| disclosure_order(k, &c.user_turns)),
            ending: ending(
                &c.termination,
                c.user_turns.last().map_or("", String::as_str),
                c.user_spoke_last,
            ),
            tokens: Vec::new(),
            unigrams: Vec::new(),
            bigrams: Vec::new(),
        };
        let mut pairs = Vec::new();
        for (i, turn) in c.user_turns.iter().enumerate() {
            let ws = words(turn);
            let (typo_count, _) = typos(turn);
            counted.words += ws.len() as u64;
            counted.typos += typo_count;
            counted.questions += u64::from(asks_question(turn));
            counted.ids += u64::from(has_id_or_number(turn));
            counted.frustrated += u64::from(expresses_frustration(turn));
            if c.after_agent.get(i).copied().unwrap_or(i > 0) {
                counted.answering += 1;
                counted.corrections += u64::from(corrects_agent(turn));
            }
            let ids: Vec<u32> = ws.into_iter().map(|w| vocabulary.word(w)).collect();
            pairs.extend(ids.windows(2).map(|p| vocabulary.pair(p[0], p[1])));
            counted.tokens.extend(ids);
        }
        counted.unigrams = tally(counted.tokens.iter().copied());
        counted.bigrams = tally(pairs);
        counted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_is_counted_turn_by_turn() {
        let side = UserSide {
            scenario_id: "s".into(),
            user_turns: vec![
                "Where is order 42?".into(),
                "No, I said order 42!! ridiculous".into(),
                "ok thanks".into(),
            ],
            after_agent: vec![false, true, true],
            termination: "user_stop".into(),
            user_spoke_last: true,
            known_info: None,
        };
        let mut vocabulary = Vocabulary::default();
        let c = Counted::of(&side, &mut vocabulary);
        assert_eq!((c.turns, c.words, c.questions, c.ids), (3, 12, 1, 2));
        assert_eq!((c.answering, c.corrections, c.frustrated), (2, 1, 1));
        assert_eq!(c.ending, Ending::Confirmed);
        let order = vocabulary.number_of("order").unwrap();
        assert!(c.unigrams.contains(&(order, 2)));
        let order_42 = vocabulary.pairs[&(order, vocabulary.number_of("42").unwrap())];
        assert!(c.bigrams.contains(&(order_42, 2)));
        assert_eq!(c.tokens.len(), 12);
    }
}
