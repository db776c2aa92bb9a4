//! Checks of a judge's fields and numbers, each pushing its problems at its
//! field: the name and endpoint every judge has, samples and how they
//! combine, token and temperature limits, and `drop_flagged`.

use super::problems::FieldProblems;
use super::types::{Aggregate, Mode, OnInconsistent, ScoreRange};
use crate::config::ranges;
use crate::diagnostics::problem::Problem;
use crate::judge::builtin::Builtin;
use crate::judge::file::{JudgeCommon, JudgeFile, ModeKeys};

/// Problems of the name and endpoint every judge has, at the fields `at` names.
pub(in crate::judge) fn common_problems(
    common: &JudgeCommon,
    at: &dyn Fn(&str) -> String,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    let name = common.name.trim();
    if name.is_empty() {
        problems.push(Problem::at_field(
            "",
            &at("name"),
            "is empty; name the judge, e.g. name = \"helpful\"",
        ));
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        problems.push(Problem::at_field(
            "",
            &at("name"),
            format!(
                "'{name}' has characters other than letters, digits, `_`, `-` and `.`; \
                 the name is written on the command line (e.g. --min-judge {name}=7), so \
                 use e.g. \"helpful_v2\""
            ),
        ));
    }
    if common.endpoint.trim().is_empty() {
        problems.push(Problem::at_field(
            "",
            &at("endpoint"),
            "is empty; name the endpoint the judge's calls go to, e.g. endpoint = \"judge\"",
        ));
    }
    problems
}

/// Whether both orders are judged, and what disagreeing orders become.
pub(super) fn orders(keys: &ModeKeys) -> (bool, OnInconsistent) {
    match keys {
        ModeKeys::Pairwise(_, keys) => (
            keys.swap_check.unwrap_or(true),
            keys.on_inconsistent.unwrap_or(OnInconsistent::Tie),
        ),
        ModeKeys::Equivalence(_, keys) => (keys.swap_check.unwrap_or(true), OnInconsistent::Tie),
        ModeKeys::Pointwise(..) | ModeKeys::Assertions => (false, OnInconsistent::Tie),
    }
}

/// Calls per order (default 1), in range.
pub(super) fn samples(common: &JudgeCommon, problems: &mut FieldProblems<'_>) -> u32 {
    let samples = common.samples.unwrap_or(1);
    if let Some(message) = ranges::JUDGE_SAMPLES.check(u64::from(samples)) {
        problems.at("samples", format!("{message} calls per order, e.g. 3"));
    }
    samples
}

/// How samples combine: `mean` only for scores; by default the mean of a
/// pointwise judge's scores, else the majority.
pub(super) fn aggregate(
    written: Option<Aggregate>,
    mode: Mode,
    problems: &mut FieldProblems<'_>,
) -> Aggregate {
    match (written, mode) {
        (Some(Aggregate::Mean), m) if m != Mode::Pointwise => {
            problems.at(
                "aggregate",
                format!(
                    "\"mean\" averages scores, and a {} judge gives none; use \"majority\"",
                    m.as_str()
                ),
            );
            Aggregate::Majority
        }
        (Some(a), _) => a,
        (None, Mode::Pointwise) => Aggregate::Mean,
        (None, _) => Aggregate::Majority,
    }
}

/// `max_tokens` and `temperature`, when given, in range.
pub(super) fn call_limits(common: &JudgeCommon, problems: &mut FieldProblems<'_>) {
    if let Some(message) = common
        .max_tokens
        .and_then(|n| ranges::MAX_TOKENS.check(u64::from(n)))
    {
        problems.at("max_tokens", message);
    }
    if let Some(message) = common
        .temperature
        .and_then(|t| ranges::TEMPERATURE.check(f64::from(t)))
    {
        problems.at("temperature", message);
    }
}

/// `drop_flagged`, which only a pass/fail judge (range [0, 1]) may set; not
/// reported when the parser (and so the range) already has problems.
pub(super) fn drop_flagged(
    keys: &ModeKeys,
    range: Option<ScoreRange>,
    parser_ok: bool,
    problems: &mut FieldProblems<'_>,
) -> bool {
    let drop_flagged = match keys {
        ModeKeys::Pointwise(_, keys) => keys.drop_flagged.unwrap_or(false),
        _ => false,
    };
    let pass_fail = range
        == Some(ScoreRange {
            low: 0.0,
            high: 1.0,
        });
    if drop_flagged && !pass_fail && parser_ok {
        problems.at(
            "drop_flagged",
            "applies to pass/fail judges (pointwise, range [0, 1], e.g. builtin = \
             \"user_fidelity\"): a conversation is dropped when the judge fails it"
                .into(),
        );
    }
    drop_flagged
}

/// A built-in judge has its own mode, parser and range: a `mode` other than
/// its own, and any `labels`, `regex` or `range`, are refused.
pub(super) fn builtin_overrides(
    file: &JudgeFile,
    builtin: Builtin,
    problems: &mut FieldProblems<'_>,
) {
    if let Some(m) = file.common.mode.filter(|m| *m != builtin.mode()) {
        problems.at(
            "mode",
            format!(
                "built-in judge '{builtin}' is {}, not {}; remove mode",
                builtin.mode().as_str(),
                m.as_str()
            ),
        );
    }
    let own_parser = file
        .keys
        .parser()
        .map(|p| [(p.labels.is_some(), "labels"), (p.regex.is_some(), "regex")]);
    let own_range = match &file.keys {
        ModeKeys::Pointwise(_, p) => p.range.is_some(),
        _ => false,
    };
    for (given, f) in own_parser
        .into_iter()
        .flatten()
        .chain([(own_range, "range")])
    {
        if given {
            problems.at(
                f,
                format!(
                    "built-in judge '{builtin}' has its own template, parser and \
                     range; to change them, copy {} and give template = ... \
                     instead of builtin",
                    builtin.template_path()
                ),
            );
        }
    }
}
