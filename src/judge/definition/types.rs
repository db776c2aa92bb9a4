//! The values a validated judge is made of: its mode, how samples and
//! disagreeing orders combine, its labels and parser, its score range.

use std::collections::BTreeMap;
use std::fmt;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::judge::verdict::Preference;

/// What a judge judges and how its output reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// A score for one conversation from a rubric, range-checked.
    Pointwise,
    /// A vs B: which of two conversations (or a conversation and a reference) is better.
    Pairwise,
    /// Does the conversation's final answer say what the expected answer says.
    Equivalence,
    /// Each natural-language assertion about the conversation, met or not met.
    Assertions,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Pointwise => "pointwise",
            Mode::Pairwise => "pairwise",
            Mode::Equivalence => "equivalence",
            Mode::Assertions => "assertions",
        }
    }
}

/// How the samples of one order become one verdict (see `combine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregate {
    /// The most frequent verdict; a split vote goes to the cautious side.
    Majority,
    /// The mean score (pointwise only).
    Mean,
}

/// What a pairwise judgment becomes when its two orders disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OnInconsistent {
    /// A tie (FastChat's rule, the default): a judge that changes its mind when
    /// the answers swap places has no preference worth keeping.
    #[serde(rename = "tie")]
    Tie,
    /// The verdict of the first order (`ab`) stands; consistency is still reported.
    #[serde(rename = "first")]
    First,
    /// A fixed side, e.g. `B` when B is a reference that doubt should favour.
    A,
    B,
}

impl OnInconsistent {
    pub fn as_str(self) -> &'static str {
        match self {
            OnInconsistent::Tie => "tie",
            OnInconsistent::First => "first",
            OnInconsistent::A => "A",
            OnInconsistent::B => "B",
        }
    }
}

/// What a label in the output means.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LabelValue {
    Score(f64),
    Preference(Preference),
    Equal(bool),
}

/// A text the judge writes, e.g. `[[A]]`, and what it means.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub text: String,
    pub value: LabelValue,
}

impl Label {
    pub fn new(text: &str, value: LabelValue) -> Self {
        Label {
            text: text.to_string(),
            value,
        }
    }
}

/// How a call's output is read. For every parser the last match in the output
/// wins, so a judge may quote the format while reasoning.
#[derive(Debug, Clone)]
pub enum Parser {
    /// Fixed label texts.
    Labels(Vec<Label>),
    /// One capture group: a number (pointwise), `A`/`B`/`C`/`tie` (pairwise),
    /// `A=B`/`A!=B`/`equal`/`not_equal` (equivalence).
    Regex(Regex),
    /// `[[N: MET]]` / `[[N: NOT MET]]`, one per assertion.
    Assertions,
}

/// The default pointwise parser: `[[7]]` or `[[7.5]]`.
pub const DEFAULT_SCORE_REGEX: &str = r"\[\[(\d+(?:\.\d+)?)\]\]";

/// Pointwise scores outside `[low, high]` are unparseable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreRange {
    pub low: f64,
    pub high: f64,
}

impl ScoreRange {
    pub fn contains(&self, score: f64) -> bool {
        score >= self.low && score <= self.high
    }
}

impl fmt::Display for ScoreRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}]", self.low, self.high)
    }
}

/// Labels as a map, for hashing and display.
pub(crate) fn labels_map(labels: &[Label]) -> BTreeMap<String, String> {
    labels
        .iter()
        .map(|l| {
            let value = match l.value {
                LabelValue::Score(s) => format!("{s}"),
                LabelValue::Preference(p) => p.as_str().to_string(),
                LabelValue::Equal(true) => "equal".to_string(),
                LabelValue::Equal(false) => "not_equal".to_string(),
            };
            (l.text.clone(), value)
        })
        .collect()
}
