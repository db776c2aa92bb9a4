//! A pointwise judge's score range: as written, else the span of its labels'
//! scores, else 1 to 10.

use super::problems::FieldProblems;
use super::types::{LabelValue, Parser, ScoreRange};
use crate::config::ranges;
use crate::judge::builtin::Builtin;
use crate::judge::file::{JudgeFile, ModeKeys};

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
