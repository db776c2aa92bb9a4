//! How a judge's output is read: the parser its labels or regex give, else
//! its mode's (or built-in judge's) default.

use std::collections::BTreeMap;

use regex::Regex;

use super::labels::labels_parser;
use super::problems::FieldProblems;
use super::types::{Label, LabelValue, Mode, Parser, DEFAULT_SCORE_REGEX};
use crate::judge::builtin::Builtin;
use crate::judge::file::{JudgeFile, LabelValueFile};
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
