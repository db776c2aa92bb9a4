//! The measures, each a statistic over a set of counted conversations (or,
//! for the vocabulary's divergences, over two sets), and the unit that says
//! how its gap is normalised ([`super::gaps`]).

use serde::Serialize;

use super::conversation::Counted;
use super::divergence::jensen_shannon;
use super::ending::Ending;
use super::type_token::{standardised_ttr, CHUNK};

/// What a measure's values are, which says how its gap is normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A mean count (turns, words): the gap over the larger of the two values.
    Count,
    /// A share or ratio in [0, 1]: the gap itself.
    Share,
    /// A rank correlation in [−1, 1]: the gap over 2.
    Correlation,
    /// A divergence between the two jobs in [0, 1]: the divergence itself.
    Divergence,
}

/// One job's statistic, or one between the two jobs.
pub enum Statistic {
    Each(fn(&[&Counted]) -> Option<f64>),
    Between(fn(&[&Counted], &[&Counted]) -> Option<f64>),
}

pub struct Measure {
    pub name: &'static str,
    pub unit: Unit,
    pub statistic: Statistic,
}

fn ratio(c: &[&Counted], num: fn(&Counted) -> u64, den: fn(&Counted) -> u64) -> Option<f64> {
    let d: u64 = c.iter().map(|c| den(c)).sum();
    (d > 0).then(|| c.iter().map(|c| num(c)).sum::<u64>() as f64 / d as f64)
}

fn ending_share(c: &[&Counted], which: Ending) -> Option<f64> {
    (!c.is_empty()).then(|| c.iter().filter(|c| c.ending == which).count() as f64 / c.len() as f64)
}

fn disclosure(c: &[&Counted]) -> Option<f64> {
    let scores: Vec<f64> = c.iter().filter_map(|c| c.disclosure).collect();
    (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64)
}

/// The conversations' tables added up, indexed by number.
fn merged(c: &[&Counted], table: fn(&Counted) -> &[(u32, u64)]) -> Vec<u64> {
    let mut all: Vec<u64> = Vec::new();
    for conversation in c {
        for (id, n) in table(conversation) {
            let i = *id as usize;
            if all.len() <= i {
                all.resize(i + 1, 0);
            }
            all[i] += n;
        }
    }
    all
}

/// The type–token ratio of `side`'s conversations, on chunks of [`CHUNK`] words.
fn type_token(side: &[&Counted]) -> Option<f64> {
    standardised_ttr(side.iter().map(|c| &c.tokens[..]), CHUNK)
}

/// The measures, in the order reports show them.
pub const MEASURES: [Measure; 15] = [
    Measure {
        name: "turns_per_conversation",
        unit: Unit::Count,
        statistic: Statistic::Each(|c| ratio(c, |c| c.turns, |_| 1)),
    },
    Measure {
        name: "words_per_user_turn",
        unit: Unit::Count,
        statistic: Statistic::Each(|c| ratio(c, |c| c.words, |c| c.turns)),
    },
    Measure {
        name: "asks_question",
        unit: Unit::Share,
        statistic: Statistic::Each(|c| ratio(c, |c| c.questions, |c| c.turns)),
    },
    Measure {
        name: "gives_id_or_number",
        unit: Unit::Share,
        statistic: Statistic::Each(|c| ratio(c, |c| c.ids, |c| c.turns)),
    },
    Measure {
        name: "corrects_agent",
        unit: Unit::Share,
        statistic: Statistic::Each(|c| ratio(c, |c| c.corrections, |c| c.answering)),
    },
    Measure {
        name: "expresses_frustration",
        unit: Unit::Share,
        statistic: Statistic::Each(|c| ratio(c, |c| c.frustrated, |c| c.turns)),
    },
    Measure {
        name: "typo_rate",
        unit: Unit::Share,
        statistic: Statistic::Each(|c| ratio(c, |c| c.typos, |c| c.words)),
    },
    Measure {
        name: "disclosure_order",
        unit: Unit::Correlation,
        statistic: Statistic::Each(disclosure),
    },
    Measure {
        name: "ends_confirmed",
        unit: Unit::Share,
        statistic: Statistic::Each(|c| ending_share(c, Ending::Confirmed)),
    },
    Measure {
        name: "ends_abandoned",
        unit: Unit::Share,
        statistic: Statistic::Each(|c| ending_share(c, Ending::Abandoned)),
    },
    Measure {
        name: "ends_transferred",
        unit: Unit::Share,
        statistic: Statistic::Each(|c| ending_share(c, Ending::Transferred)),
    },
    Measure {
        name: "ends_cut_off",
        unit: Unit::Share,
        statistic: Statistic::Each(|c| ending_share(c, Ending::CutOff)),
    },
    Measure {
        name: "unigram_jsd",
        unit: Unit::Divergence,
        statistic: Statistic::Between(|a, b| {
            jensen_shannon(
                &merged(a, |c| &c.unigrams[..]),
                &merged(b, |c| &c.unigrams[..]),
            )
        }),
    },
    Measure {
        name: "bigram_jsd",
        unit: Unit::Divergence,
        statistic: Statistic::Between(|a, b| {
            jensen_shannon(
                &merged(a, |c| &c.bigrams[..]),
                &merged(b, |c| &c.bigrams[..]),
            )
        }),
    },
    Measure {
        name: "type_token_ratio",
        unit: Unit::Share,
        statistic: Statistic::Each(type_token),
    },
];
