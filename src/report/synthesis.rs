//! What `sparring stats --job ID` reports of a synthesis job: proposals and
//! their fate (accepted, rejected per stage with the commonest reasons,
//! near-duplicates, surplus, failed), and the tokens spent, from the stored
//! proposals decided in proposal order as the job decides them.

use std::fmt::{self, Write};

use serde::Serialize;

use crate::config::synth::from_stored;
use crate::llm::Usage;
use crate::store::{ItemCounts, JobRow, Store};
use crate::synth::coverage::Coverage;
use crate::synth::summary::{reason_kind, Summary};
use crate::synth::tally::tally;
use crate::synth::Stage;

use super::render::pairs;
use super::stats::StatsError;

/// Reasons listed per stage.
const REASONS_SHOWN: usize = 3;
/// Distinct failed-item errors read, before they are grouped by kind.
pub const ERRORS_READ: u32 = 100;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SynthesisStats {
    pub target: u64,
    pub max_proposals: u64,
    /// Items planned so far (proposal numbers 0..planned).
    pub planned: u64,
    /// Items whose generator or reviewer calls failed after retries (not
    /// rejections; `--retry-failed` tries them again).
    pub failed: u64,
    pub pending: u64,
    /// The commonest errors of the failed items, commonest first.
    pub errors: Vec<ReasonCount>,
    /// Proposals stored.
    pub proposals: u64,
    pub attempts: u64,
    /// Passed every check of their item.
    pub valid: u64,
    pub accepted: u64,
    pub fixed_by_feedback: u64,
    pub surplus: u64,
    /// Rejected attempts per stage, in pipeline order (stages with none left out).
    pub stages: Vec<StageStats>,
    pub generator_usage: Usage,
    pub review_usage: Usage,
    /// The accepted scenarios against the `[diversity]` targets.
    pub coverage: Coverage,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageStats {
    pub stage: Stage,
    pub rejected: u64,
    /// Of all attempts.
    pub share: f64,
    /// The commonest reasons (specifics blurred), commonest first.
    pub reasons: Vec<ReasonCount>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReasonCount {
    pub reason: String,
    pub count: u64,
}

pub async fn synthesis_stats(
    store: &dyn Store,
    job: &JobRow,
) -> Result<SynthesisStats, StatsError> {
    let config = from_stored(job.id, &job.config_snapshot).map_err(|problems| {
        StatsError::StoredConfig(
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        )
    })?;
    let tallied = tally(store, job.id, &config, |_, _| {}).await?;
    let coverage = Coverage::of(&config.diversity, tallied.acceptance.accepted());
    let summary = tallied.summary;
    let counts = store.item_counts(job.id).await?;
    let errors = store.item_errors(job.id, ERRORS_READ).await?;
    Ok(SynthesisStats::new(
        &summary,
        config.head.target as u64,
        config.head.max_proposals(),
        &counts,
        &errors,
        coverage,
    ))
}

impl SynthesisStats {
    /// The report of a job whose proposals `summary` counts.
    pub fn new(
        summary: &Summary,
        target: u64,
        max_proposals: u64,
        counts: &ItemCounts,
        errors: &[(String, i64)],
        coverage: Coverage,
    ) -> Self {
        let s = summary;
        let n = |v: i64| u64::try_from(v).unwrap_or(0);
        let stages = Stage::ALL
            .into_iter()
            .filter_map(|stage| {
                let rejected = s.rejected.get(&stage).copied().filter(|n| *n > 0)?;
                Some(StageStats {
                    stage,
                    rejected,
                    share: s.share(stage),
                    reasons: s
                        .commonest(stage, REASONS_SHOWN)
                        .into_iter()
                        .map(|(reason, count)| ReasonCount {
                            reason: reason.to_string(),
                            count,
                        })
                        .collect(),
                })
            })
            .collect();
        SynthesisStats {
            target,
            max_proposals,
            planned: n(counts.total()),
            failed: n(counts.failed),
            pending: n(counts.pending + counts.leased),
            errors: commonest_errors(errors),
            proposals: s.proposals,
            attempts: s.attempts,
            valid: s.valid,
            accepted: s.accepted,
            fixed_by_feedback: s.fixed_by_feedback,
            surplus: s.surplus,
            stages,
            generator_usage: s.generator_usage,
            review_usage: s.review_usage,
            coverage,
        }
    }
}

/// `errors` with their specifics blurred (token counts, ids), so that
/// errors of one kind count together; the commonest [`REASONS_SHOWN`].
fn commonest_errors(errors: &[(String, i64)]) -> Vec<ReasonCount> {
    let mut kinds: std::collections::BTreeMap<String, u64> = Default::default();
    for (error, count) in errors {
        *kinds.entry(reason_kind(error)).or_default() += u64::try_from(*count).unwrap_or(0);
    }
    let mut all: Vec<ReasonCount> = kinds
        .into_iter()
        .map(|(reason, count)| ReasonCount { reason, count })
        .collect();
    all.sort_by(|a, b| b.count.cmp(&a.count).then(a.reason.cmp(&b.reason)));
    all.truncate(REASONS_SHOWN);
    all
}

impl fmt::Display for SynthesisStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        out.push_str("\nProposals\n");
        let rows = vec![
            vec![
                "accepted".to_string(),
                format!(
                    "{} of {} wanted ({} after feedback)",
                    self.accepted, self.target, self.fixed_by_feedback
                ),
            ],
            vec![
                "stored".to_string(),
                format!(
                    "{} ({} attempts), {} valid, {} surplus",
                    self.proposals, self.attempts, self.valid, self.surplus
                ),
            ],
            vec![
                "planned".to_string(),
                format!(
                    "{} of at most {}; {} failed (not rejections), {} pending",
                    self.planned, self.max_proposals, self.failed, self.pending
                ),
            ],
            vec![
                "tokens".to_string(),
                format!(
                    "generator {} in / {} out, reviewers {} in / {} out",
                    self.generator_usage.prompt_tokens,
                    self.generator_usage.completion_tokens,
                    self.review_usage.prompt_tokens,
                    self.review_usage.completion_tokens
                ),
            ],
        ];
        pairs(&mut out, "  ", &rows);
        if !self.errors.is_empty() {
            out.push_str("\nFailed proposals (infrastructure, not rejections; --retry-failed tries them again)\n");
            for r in &self.errors {
                let _ = writeln!(out, "  {:>6} × {}", r.count, r.reason);
            }
        }
        if !self.stages.is_empty() {
            out.push_str("\nRejected attempts by stage (with the commonest reasons)\n");
            for s in &self.stages {
                let _ = writeln!(
                    out,
                    "  {:<12} {:>6}  {:>5.1}% of attempts",
                    s.stage.as_str(),
                    s.rejected,
                    100.0 * s.share
                );
                for r in &s.reasons {
                    let _ = writeln!(out, "      {:>6} × {}", r.count, r.reason);
                }
            }
        }
        out.push('\n');
        for line in self.coverage.lines() {
            let _ = writeln!(out, "{line}");
        }
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_items_errors_that_differ_only_in_numbers_count_as_one_kind() {
        let errors = [
            (
                "rejected: request (4382 tokens) exceeds the context (4096 tokens)".to_string(),
                2,
            ),
            (
                "rejected: request (5977 tokens) exceeds the context (4096 tokens)".to_string(),
                1,
            ),
            ("timeout: no answer in 60 s".to_string(), 1),
        ];
        let kinds = commonest_errors(&errors);
        assert_eq!(kinds.len(), 2);
        assert_eq!(kinds[0].count, 3);
        assert!(kinds[0].reason.contains("exceeds the context"), "{kinds:?}");
    }

    #[test]
    fn the_text_report_shows_failed_proposals_apart_from_rejections() {
        let mut summary = Summary::default();
        summary.rejected.insert(Stage::Format, 2);
        summary.attempts = 4;
        let counts = ItemCounts {
            pending: 0,
            leased: 0,
            done: 3,
            failed: 1,
        };
        let errors = [("server: HTTP 500".to_string(), 1)];
        let coverage = Coverage::of(&Default::default(), &[]);
        let text = SynthesisStats::new(&summary, 10, 100, &counts, &errors, coverage).to_string();
        assert!(text.contains("Failed proposals"), "{text}");
        assert!(text.contains("1 × server: HTTP #"), "{text}");
        assert!(text.contains("format"), "{text}");
        assert!(text.contains("50.0% of attempts"), "{text}");
    }
}
