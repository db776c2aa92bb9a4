//! A parser of fixed labels: each label text mapped to what it means in the
//! judge's mode, and every side of the mode meant by some label.

use std::collections::BTreeMap;

use super::problems::FieldProblems;
use super::types::{Label, LabelValue, Mode, Parser};
use crate::judge::file::LabelValueFile;
use crate::judge::verdict::Preference;

/// The labels as a parser; `None` when any label (or the set) has a problem.
pub(super) fn labels_parser(
    mode: Mode,
    labels: &BTreeMap<String, LabelValueFile>,
    problems: &mut FieldProblems<'_>,
) -> Option<Parser> {
    let before = problems.list.len();
    if labels.is_empty() {
        problems.at(
            "labels",
            "is empty; map each label the judge writes to its verdict".into(),
        );
    }
    let mut built = Vec::new();
    for (text, value) in labels {
        let f = format!("labels.\"{text}\"");
        if text.trim().is_empty() {
            problems.at(&f, "a label text is empty".into());
            continue;
        }
        match label_value(mode, value) {
            Ok(value) => built.push(Label {
                text: text.to_string(),
                value,
            }),
            Err(message) => problems.at(&f, message.into()),
        }
    }
    let missing = missing_sides(mode, &built);
    if !missing.is_empty() && !labels.is_empty() {
        problems.at(
            "labels",
            format!("no label means {}; add one", missing.join(" or ")),
        );
    }
    (problems.list.len() == before).then_some(Parser::Labels(built))
}

/// What a label's written value means in `mode`, or what it should have been.
fn label_value(mode: Mode, value: &LabelValueFile) -> Result<LabelValue, &'static str> {
    match (mode, value) {
        (Mode::Pointwise, LabelValueFile::Number(x)) if x.is_finite() => Ok(LabelValue::Score(*x)),
        (Mode::Pairwise, LabelValueFile::Text(t)) => Preference::parse(t)
            .map(LabelValue::Preference)
            .ok_or(PAIRWISE_LABEL),
        (Mode::Equivalence, LabelValueFile::Text(t)) if t == "equal" => Ok(LabelValue::Equal(true)),
        (Mode::Equivalence, LabelValueFile::Text(t)) if t == "not_equal" => {
            Ok(LabelValue::Equal(false))
        }
        (Mode::Pointwise, _) => Err("a pointwise label maps to a score, e.g. \"[[PASS]]\" = 1"),
        (Mode::Pairwise, _) => Err(PAIRWISE_LABEL),
        (Mode::Equivalence | Mode::Assertions, _) => {
            Err("an equivalence label maps to \"equal\" or \"not_equal\"")
        }
    }
}

const PAIRWISE_LABEL: &str = "a pairwise label maps to \"A\", \"B\" or \"tie\"";

/// The sides of `mode` no label in `built` means (`A`/`B` of a pairwise
/// judge, `equal`/`not_equal` of an equivalence one).
fn missing_sides(mode: Mode, built: &[Label]) -> Vec<&'static str> {
    let has = |v: LabelValue| built.iter().any(|l| l.value == v);
    match mode {
        Mode::Pairwise => [("A", Preference::A), ("B", Preference::B)]
            .into_iter()
            .filter(|(_, p)| !has(LabelValue::Preference(*p)))
            .map(|(n, _)| n)
            .collect(),
        Mode::Equivalence => [("equal", true), ("not_equal", false)]
            .into_iter()
            .filter(|(_, e)| !has(LabelValue::Equal(*e)))
            .map(|(n, _)| n)
            .collect(),
        Mode::Pointwise | Mode::Assertions => Vec::new(),
    }
}
