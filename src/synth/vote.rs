//! The committee's vote: how the readable scores become a decision, and the
//! concise reason a rejection gives the generator (the failing criteria and
//! the reviewers who named them).

use crate::config::synth::committee::{CommitteeRule, VoteRule};

use super::review::Review;

/// Longest reason a reviewer contributes when its output has no criterion lines.
const FREE_TEXT_LIMIT: usize = 300;
/// Longest rejection reason shown to the generator.
const REASON_LIMIT: usize = 1_500;

/// Whether `scores` (the readable verdicts, at least the quorum) accept the
/// blueprint, and the figure that decided: the share that passes
/// (`majority`: more than half must) or the mean (`mean`: at least `min_mean`).
pub fn decide(vote: &VoteRule, scores: &[f64]) -> (bool, f64) {
    if scores.is_empty() {
        return (false, 0.0);
    }
    let n = scores.len() as f64;
    match vote.rule {
        CommitteeRule::Majority => {
            let passed = scores.iter().filter(|s| **s >= vote.pass_score).count();
            (2 * passed > scores.len(), passed as f64 / n)
        }
        CommitteeRule::Mean => {
            let mean = scores.iter().sum::<f64>() / n;
            (mean >= vote.min_mean, mean)
        }
    }
}

/// Criterion lines of a reviewer's output scored below `pass_score`, e.g.
/// `KNOWLEDGE: 1 - the user gives no email` as `KNOWLEDGE 1: the user gives
/// no email`. A criterion line is an upper-case name, a colon and a number.
pub fn failing_criteria(output: &str, pass_score: f64) -> Vec<String> {
    output
        .lines()
        .filter_map(|line| {
            let (name, rest) = line.split_once(':')?;
            let name = name.trim();
            let is_name = !name.is_empty()
                && name.chars().any(|c| c.is_ascii_uppercase())
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == ' ' || c == '_');
            if !is_name {
                return None;
            }
            let rest = rest.trim_start();
            let number_end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let score: f64 = rest[..number_end].parse().ok()?;
            if score >= pass_score {
                return None;
            }
            let reason = rest[number_end..]
                .trim_start_matches(|c: char| c == '/' || c.is_ascii_digit())
                .trim_start_matches(|c: char| c.is_whitespace() || "-–—:".contains(c))
                .trim();
            Some(format!("{name} {score}: {reason}"))
        })
        .collect()
}

/// A reviewer's output without its last line (the label), on one line, cut short.
fn free_text(output: &str) -> String {
    let body = match output.trim().rsplit_once('\n') {
        Some((body, _label)) => body,
        None => output,
    };
    let flat = body.split_whitespace().collect::<Vec<_>>().join(" ");
    cut(&flat, FREE_TEXT_LIMIT)
}

fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

/// Why `review` rejected its blueprint, for the generator: the rule's
/// figure, then each failing criterion (or a failing reviewer's reasons)
/// once, with the reviewers who gave it.
pub fn rejection_reason(vote: &VoteRule, review: &Review) -> String {
    let readable: Vec<_> = review
        .reviewers
        .iter()
        .filter(|r| r.score.is_some())
        .collect();
    let passed = readable.iter().filter(|r| r.passed == Some(true)).count();
    let head = match vote.rule {
        CommitteeRule::Majority => format!(
            "the review committee rejected the blueprint: {passed} of {} reviewers scored it {} or more, and more than half must",
            readable.len(),
            vote.pass_score
        ),
        CommitteeRule::Mean => format!(
            "the review committee rejected the blueprint: its mean score {:.2} is below {}",
            review.figure, vote.min_mean
        ),
    };
    let failing: Vec<_> = match readable.iter().any(|r| r.passed == Some(false)) {
        true => readable
            .into_iter()
            .filter(|r| r.passed == Some(false))
            .collect(),
        false => readable,
    };
    // Each reason once, in the order first given, with who gave it.
    let mut grouped: Vec<(String, Vec<&str>)> = Vec::new();
    for reviewer in failing {
        let mut items = failing_criteria(&reviewer.reasons, vote.pass_score);
        if items.is_empty() {
            items.push(format!(
                "score {}: {}",
                reviewer.score.unwrap_or_default(),
                free_text(&reviewer.reasons)
            ));
        }
        for item in items {
            match grouped.iter_mut().find(|(text, _)| *text == item) {
                Some((_, names)) => names.push(&reviewer.name),
                None => grouped.push((item, vec![&reviewer.name])),
            }
        }
    }
    let details: Vec<String> = grouped
        .into_iter()
        .map(|(item, names)| format!("{item} ({})", names.join(", ")))
        .collect();
    let reason = if details.is_empty() {
        head
    } else {
        format!("{head}. Fix: {}", details.join("; "))
    };
    cut(&reason, REASON_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::JudgeStatus;
    use crate::llm::Usage;
    use crate::synth::review::ReviewerVerdict;
    use proptest::prelude::*;

    fn vote(rule: CommitteeRule) -> VoteRule {
        VoteRule {
            rule,
            pass_score: 4.0,
            min_mean: 3.5,
            quorum: 2,
        }
    }

    fn reviewer(name: &str, score: f64, reasons: &str) -> ReviewerVerdict {
        ReviewerVerdict {
            name: name.into(),
            status: JudgeStatus::Ok,
            score: Some(score),
            passed: Some(score >= 4.0),
            reasons: reasons.into(),
            error: None,
            usage: Usage::default(),
        }
    }

    #[test]
    fn majority_needs_more_than_half_of_the_readable_verdicts_to_pass() {
        let m = vote(CommitteeRule::Majority);
        assert_eq!(decide(&m, &[4.0, 5.0, 1.0]), (true, 2.0 / 3.0));
        assert_eq!(
            decide(&m, &[4.0, 1.0]),
            (false, 0.5),
            "a tie is not a majority"
        );
        assert_eq!(decide(&m, &[3.9, 3.9, 5.0]), (false, 1.0 / 3.0));
        assert_eq!(decide(&m, &[]), (false, 0.0));
    }

    #[test]
    fn mean_compares_the_mean_score_with_min_mean() {
        let m = vote(CommitteeRule::Mean);
        assert_eq!(decide(&m, &[5.0, 2.0]), (true, 3.5));
        assert_eq!(decide(&m, &[5.0, 1.0, 4.0]), (false, 10.0 / 3.0));
    }

    #[test]
    fn criterion_lines_below_the_pass_score_are_the_failing_criteria() {
        let output = "Some thoughts first: it is fine.\nPOLICY: 5 - allowed\nFEASIBILITY: 4/5 - ok\nKNOWLEDGE: 1 - the user gives no email\nREALISM: 3.5 – a bit odd\nOverall: [[1]]";
        assert_eq!(
            failing_criteria(output, 4.0),
            [
                "KNOWLEDGE 1: the user gives no email",
                "REALISM 3.5: a bit odd"
            ]
        );
        assert!(failing_criteria("Overall: [[1]]", 4.0).is_empty());
    }

    #[test]
    fn a_rejection_names_each_failing_criterion_once_with_the_reviewers_who_gave_it() {
        let knowledge = "POLICY: 5 - fine\nKNOWLEDGE: 1 - no email in known_info\nOverall: [[1]]";
        let review = Review {
            accepted: false,
            rule: CommitteeRule::Majority,
            figure: 1.0 / 3.0,
            reviewers: vec![
                reviewer("r1", 1.0, knowledge),
                reviewer("r2", 5.0, "POLICY: 5 - fine\nOverall: [[5]]"),
                reviewer("r3", 1.0, knowledge),
            ],
        };
        let reason = rejection_reason(&vote(CommitteeRule::Majority), &review);
        assert_eq!(
            reason,
            "the review committee rejected the blueprint: 1 of 3 reviewers scored it 4 or more, and more than half must. Fix: KNOWLEDGE 1: no email in known_info (r1, r3)"
        );
    }

    #[test]
    fn a_reviewer_without_criterion_lines_contributes_its_text_cut_short() {
        let long = format!("{}\n[[2]]", "too vague ".repeat(100));
        let review = Review {
            accepted: false,
            rule: CommitteeRule::Mean,
            figure: 2.0,
            reviewers: vec![reviewer("mine", 2.0, &long)],
        };
        let reason = rejection_reason(&vote(CommitteeRule::Mean), &review);
        assert!(reason.starts_with("the review committee rejected the blueprint: its mean score 2.00 is below 3.5. Fix: score 2: too vague"), "{reason}");
        assert!(
            reason.contains("…") && !reason.contains("[[2]]"),
            "{reason}"
        );
    }

    proptest! {
        #[test]
        fn any_reviewer_output_gives_criteria_without_panicking(output in "\\PC{0,300}", pass in 0.0f64..10.0) {
            let _ = failing_criteria(&output, pass);
            let _ = free_text(&output);
        }

        #[test]
        fn majority_accepts_exactly_when_passes_outnumber_failures(scores in proptest::collection::vec(1.0f64..5.0, 1..9)) {
            let (accepted, share) = decide(&vote(CommitteeRule::Majority), &scores);
            let passes = scores.iter().filter(|s| **s >= 4.0).count();
            prop_assert_eq!(accepted, passes > scores.len() - passes);
            prop_assert!((0.0..=1.0).contains(&share));
        }
    }
}
