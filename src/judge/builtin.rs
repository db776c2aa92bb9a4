//! The built-in judges: their templates (embedded in the binary, so they work
//! from any working directory), modes, parsers and ranges.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::prompt::shipped::{self, ShippedTemplate};

use super::definition::{Label, LabelValue, Mode};
use super::verdict::Preference;

/// Every built-in template renders this first, followed by the judge's name and
/// ` -->`, e.g. `<!-- sparring-judge: helpfulness -->`. The mock model reads it to
/// know which judge it is answering; a real model ignores it.
pub const MARKER_PREFIX: &str = "<!-- sparring-judge: ";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Builtin {
    /// Pointwise 1–10: how well the assistant served the user.
    Helpfulness,
    /// Pairwise: which of two conversations the assistant handled better.
    PairwisePreference,
    /// Equivalence: does the final answer say what the expected answer says.
    Equivalence,
    /// Pass/fail (score 1/0): did the assistant follow the domain policy.
    PolicyAdherence,
    /// Pass/fail (score 1/0): did the simulated user play its part faithfully.
    UserFidelity,
    /// Each of the scenario's `nl_assertions`, met or not met.
    Assertions,
    /// Pointwise 1–5: a synthesized task blueprint (scenario and gold actions
    /// as executed) scored for policy, feasibility, the user's knowledge and
    /// realism; the review committee of scenario synthesis.
    BlueprintReview,
}

impl Builtin {
    pub const ALL: [Builtin; 7] = [
        Builtin::Helpfulness,
        Builtin::PairwisePreference,
        Builtin::Equivalence,
        Builtin::PolicyAdherence,
        Builtin::UserFidelity,
        Builtin::Assertions,
        Builtin::BlueprintReview,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Builtin::Helpfulness => "helpfulness",
            Builtin::PairwisePreference => "pairwise_preference",
            Builtin::Equivalence => "equivalence",
            Builtin::PolicyAdherence => "policy_adherence",
            Builtin::UserFidelity => "user_fidelity",
            Builtin::Assertions => "assertions",
            Builtin::BlueprintReview => "blueprint_review",
        }
    }

    pub fn parse(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }

    /// `helpfulness, pairwise_preference, ...` for messages.
    pub fn names() -> String {
        Builtin::ALL.map(Builtin::name).join(", ")
    }

    /// The template built into the binary.
    pub fn template(self) -> ShippedTemplate {
        match self {
            Builtin::Helpfulness => shipped::JUDGE_HELPFULNESS,
            Builtin::PairwisePreference => shipped::JUDGE_PAIRWISE_PREFERENCE,
            Builtin::Equivalence => shipped::JUDGE_EQUIVALENCE,
            Builtin::PolicyAdherence => shipped::JUDGE_POLICY_ADHERENCE,
            Builtin::UserFidelity => shipped::JUDGE_USER_FIDELITY,
            Builtin::Assertions => shipped::JUDGE_ASSERTIONS,
            Builtin::BlueprintReview => shipped::JUDGE_BLUEPRINT_REVIEW,
        }
    }

    /// The template's path in the repository (the file to copy to change it).
    pub fn template_path(self) -> &'static str {
        self.template().path
    }

    pub fn template_text(self) -> &'static str {
        self.template().text
    }

    pub fn mode(self) -> Mode {
        match self {
            Builtin::Helpfulness
            | Builtin::PolicyAdherence
            | Builtin::UserFidelity
            | Builtin::BlueprintReview => Mode::Pointwise,
            Builtin::PairwisePreference => Mode::Pairwise,
            Builtin::Equivalence => Mode::Equivalence,
            Builtin::Assertions => Mode::Assertions,
        }
    }

    /// The labels of the pass/fail judges; the others use their mode's default parser.
    pub fn labels(self) -> Option<Vec<Label>> {
        let pass_fail = |pass: &str, fail: &str| {
            Some(vec![
                Label::new(pass, LabelValue::Score(1.0)),
                Label::new(fail, LabelValue::Score(0.0)),
            ])
        };
        match self {
            Builtin::PolicyAdherence => pass_fail("[[COMPLIANT]]", "[[VIOLATION]]"),
            Builtin::UserFidelity => pass_fail("[[FAITHFUL]]", "[[UNFAITHFUL]]"),
            Builtin::PairwisePreference => Some(vec![
                Label::new("[[A]]", LabelValue::Preference(Preference::A)),
                Label::new("[[B]]", LabelValue::Preference(Preference::B)),
                Label::new("[[C]]", LabelValue::Preference(Preference::Tie)),
            ]),
            Builtin::Helpfulness
            | Builtin::Equivalence
            | Builtin::Assertions
            | Builtin::BlueprintReview => None,
        }
    }

    /// The score range of a pointwise built-in read by the default `[[N]]`
    /// parser, when it is not the default 1 to 10.
    pub fn range(self) -> Option<[f64; 2]> {
        match self {
            Builtin::BlueprintReview => Some([1.0, 5.0]),
            Builtin::Helpfulness
            | Builtin::PairwisePreference
            | Builtin::Equivalence
            | Builtin::PolicyAdherence
            | Builtin::UserFidelity
            | Builtin::Assertions => None,
        }
    }

    /// The marker line the template renders first.
    pub fn marker(self) -> String {
        format!("{MARKER_PREFIX}{} -->", self.name())
    }

    /// The built-in judge a prompt was rendered from, read from its marker line.
    pub fn from_prompt(prompt: &str) -> Option<Builtin> {
        let start = prompt.find(MARKER_PREFIX)? + MARKER_PREFIX.len();
        let rest = &prompt[start..];
        let name = rest.split(" -->").next()?;
        Builtin::parse(name.trim())
    }
}

impl fmt::Display for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_template_starts_with_its_marker_once_rendered() {
        for builtin in Builtin::ALL {
            let text = builtin.template_text();
            assert!(
                text.contains(&builtin.marker()),
                "{} lacks its marker line",
                builtin.template_path()
            );
            assert_eq!(Builtin::from_prompt(&builtin.marker()), Some(builtin));
            assert_eq!(Builtin::parse(builtin.name()), Some(builtin));
        }
        assert_eq!(Builtin::from_prompt("Rate this. [[7]]"), None);
    }
}
