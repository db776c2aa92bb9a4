//! How a judge's output is read: the parser its mode, labels or regex give,
//! and a pointwise judge's score range.

use std::collections::BTreeMap;

use regex::Regex;

use super::problems::FieldProblems;
use super::types::{Label, LabelValue, Mode, Parser, ScoreRange, DEFAULT_SCORE_REGEX};
use crate::config::ranges;
use crate::judge::builtin::Builtin;
use crate::judge::file::{JudgeFile, LabelValueFile, ModeKeys};
use crate::judge::verdict::Preference;

/// The parser of `file`: an assertions judge's own, else from its labels or
/// regex, else its mode's (or built-in judge's) default.
pub(super) fn judge_parser(
    file: &JudgeFile,
    mode: Mode,
    problems: &mut FieldProblems<'_>,
) -> Option<Parser> {
    match file.keys.parser() {
        None => Some(Parser::Assertions),
        Some(keys) => build_parser(
            mode,
            file.common.builtin,
            keys.labels.as_ref(),
            keys.regex.as_deref(),
            problems,
        ),
    }
}

/// A pointwise judge's range (see [`score_range`]); `None` for other modes
/// and for a parser that has problems.
pub(super) fn judge_range(
    file: &JudgeFile,
    parser: Option<&Parser>,
    problems: &mut FieldProblems<'_>,
) -> Option<ScoreRange> {
    match (&file.keys, parser) {
        (ModeKeys::Pointwise(_, keys), Some(parser)) => {
            let written = keys
                .range
                .or_else(|| file.common.builtin.and_then(Builtin::range));
            Some(score_range(written, parser, problems))
        }
        _ => None,
    }
}

/// A pointwise judge's score range: as written (checked, and holding every
/// label's score), else the span of its labels' scores, else 1 to 10.
fn score_range(
    written: Option<[f64; 2]>,
    parser: &Parser,
    problems: &mut FieldProblems<'_>,
) -> ScoreRange {
    let label_scores: Vec<f64> = match parser {
        Parser::Labels(labels) => labels
            .iter()
            .filter_map(|l| match l.value {
                LabelValue::Score(s) => Some(s),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    match written {
        Some([low, high]) => {
            if !(ranges::SCORE.contains(low) && ranges::SCORE.contains(high) && low < high) {
                problems.at(
                    "range",
                    format!(
                        "[{low}, {high}] is not a range; give [low, high] with low < high, \
                         each from {}, e.g. [1, 10]",
                        ranges::SCORE
                    ),
                );
            }
            let range = ScoreRange { low, high };
            for s in label_scores.iter().filter(|s| !range.contains(**s)) {
                problems.at(
                    "labels",
                    format!("a label is worth {s}, outside range {range}"),
                );
            }
            range
        }
        None if !label_scores.is_empty() => ScoreRange {
            low: label_scores.iter().copied().fold(f64::INFINITY, f64::min),
            high: label_scores
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max),
        },
        None => ScoreRange {
            low: 1.0,
            high: 10.0,
        },
    }
}

fn build_parser(
    mode: Mode,
    builtin: Option<Builtin>,
    labels: Option<&BTreeMap<String, LabelValueFile>>,
    regex: Option<&str>,
    problems: &mut FieldProblems<'_>,
) -> Option<Parser> {
    if mode == Mode::Assertions {
        if labels.is_some() || regex.is_some() {
            problems.at(
                if labels.is_some() { "labels" } else { "regex" },
                "an assertions judge reads one `[[N: MET]]` or `[[N: NOT MET]]` line per \
                 assertion; labels and regex do not apply, so remove them"
                    .into(),
            );
            return None;
        }
        return Some(Parser::Assertions);
    }
    match (labels, regex) {
        (Some(_), Some(_)) => {
            problems.at("regex", "give labels or regex, not both".into());
            None
        }
        (None, Some(pattern)) => match Regex::new(pattern) {
            Err(e) => {
                let detail = e
                    .to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                problems.at(
                    "regex",
                    format!(
                        "is not a valid regular expression: {detail} (case-insensitive \
                         matching is written (?i-u), for ASCII)"
                    ),
                );
                None
            }
            Ok(re) if re.captures_len() != 2 => {
                problems.at(
                    "regex",
                    format!(
                        "has {} capture groups; it needs exactly one, around the verdict, \
                         e.g. '\\[\\[(\\d+)\\]\\]' (use (?:...) for other groups)",
                        re.captures_len() - 1
                    ),
                );
                None
            }
            Ok(re) => Some(Parser::Regex(re)),
        },
        (Some(labels), None) => labels_parser(mode, labels, problems),
        (None, None) => Some(default_parser(mode, builtin)),
    }
}

fn labels_parser(
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
        let value = match (mode, value) {
            (Mode::Pointwise, LabelValueFile::Number(x)) if x.is_finite() => LabelValue::Score(*x),
            (Mode::Pairwise, LabelValueFile::Text(t)) if Preference::parse(t).is_some() => {
                match Preference::parse(t) {
                    Some(p) => LabelValue::Preference(p),
                    None => continue,
                }
            }
            (Mode::Equivalence, LabelValueFile::Text(t)) if t == "equal" => LabelValue::Equal(true),
            (Mode::Equivalence, LabelValueFile::Text(t)) if t == "not_equal" => {
                LabelValue::Equal(false)
            }
            (Mode::Pointwise, _) => {
                problems.at(
                    &f,
                    "a pointwise label maps to a score, e.g. \"[[PASS]]\" = 1".into(),
                );
                continue;
            }
            (Mode::Pairwise, _) => {
                problems.at(
                    &f,
                    "a pairwise label maps to \"A\", \"B\" or \"tie\"".into(),
                );
                continue;
            }
            (Mode::Equivalence | Mode::Assertions, _) => {
                problems.at(
                    &f,
                    "an equivalence label maps to \"equal\" or \"not_equal\"".into(),
                );
                continue;
            }
        };
        built.push(Label {
            text: text.to_string(),
            value,
        });
    }
    let has = |v: LabelValue| built.iter().any(|l| l.value == v);
    let missing: Vec<&str> = match mode {
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
    };
    if !missing.is_empty() && !labels.is_empty() {
        problems.at(
            "labels",
            format!("no label means {}; add one", missing.join(" or ")),
        );
    }
    (problems.list.len() == before).then_some(Parser::Labels(built))
}

/// The parser a mode (or a built-in judge) reads outputs with when none is given.
fn default_parser(mode: Mode, builtin: Option<Builtin>) -> Parser {
    if let Some(labels) = builtin.and_then(Builtin::labels) {
        return Parser::Labels(labels);
    }
    match mode {
        Mode::Pointwise => match Regex::new(DEFAULT_SCORE_REGEX) {
            Ok(re) => Parser::Regex(re),
            // The pattern is a constant that a test compiles.
            Err(_) => Parser::Labels(Vec::new()),
        },
        Mode::Pairwise => Parser::Labels(vec![
            Label::new("[[A]]", LabelValue::Preference(Preference::A)),
            Label::new("[[B]]", LabelValue::Preference(Preference::B)),
            Label::new("[[C]]", LabelValue::Preference(Preference::Tie)),
        ]),
        Mode::Equivalence => Parser::Labels(vec![
            Label::new("[[A=B]]", LabelValue::Equal(true)),
            Label::new("[[A!=B]]", LabelValue::Equal(false)),
        ]),
        Mode::Assertions => Parser::Assertions,
    }
}
