//! A synthesis run: proposals in order until `target` scenarios are
//! accepted, each validated by execution, then checked for near-duplicates
//! (`dedup`, at its default thresholds) of those already accepted (in proposal order, so the result is deterministic
//! whatever the concurrency).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt};

use crate::persona::scenario::Scenario;

use super::dedup::{DedupConfig, DedupIndex};
use super::diversity::plan_brief;
use super::propose::{Proposal, ProposeError, Proposer};
use super::stage::{Rejection, Stage};

/// Counts of a run: proposals, attempts, accepted, and the rejected attempts
/// per stage with their commonest reasons.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub proposals: u64,
    pub attempts: u64,
    pub accepted: u64,
    /// Accepted only after feedback (a retry).
    pub fixed_by_feedback: u64,
    /// Proposals whose generator call failed (after the endpoint's retries):
    /// infrastructure, never a rejection.
    pub failed: u64,
    pub rejected: BTreeMap<Stage, u64>,
    pub reasons: BTreeMap<Stage, BTreeMap<String, u64>>,
    pub elapsed: Duration,
}

impl Summary {
    fn reject(&mut self, rejection: &Rejection) {
        *self.rejected.entry(rejection.stage).or_default() += 1;
        *self
            .reasons
            .entry(rejection.stage)
            .or_default()
            .entry(reason_kind(&rejection.reason))
            .or_default() += 1;
    }

    /// The `n` commonest reasons of `stage`, commonest first.
    pub fn commonest(&self, stage: Stage, n: usize) -> Vec<(&str, u64)> {
        let mut all: Vec<(&str, u64)> = self
            .reasons
            .get(&stage)
            .map(|r| r.iter().map(|(k, v)| (k.as_str(), *v)).collect())
            .unwrap_or_default();
        all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        all.truncate(n);
        all
    }

    pub fn proposals_per_second(&self) -> f64 {
        self.proposals as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A reason with its specifics (IDs, numbers, quoted values) blurred, so
/// that reasons of one kind count together.
pub fn reason_kind(reason: &str) -> String {
    let mut out = String::new();
    let mut in_quote = false;
    for c in reason.chars() {
        match c {
            '"' => {
                in_quote = !in_quote;
                if in_quote {
                    out.push_str("\"…\"");
                }
            }
            _ if in_quote => {}
            '0'..='9' => {
                if !out.ends_with('#') {
                    out.push('#');
                }
            }
            _ => out.push(c),
        }
    }
    out.chars().take(160).collect()
}

/// Consecutive failed generator calls that stop a run (a bad key or a dead
/// server fails every proposal; retrying them one by one helps nobody).
pub const MAX_CONSECUTIVE_FAILURES: u64 = 10;

/// Run proposals `0..max_proposals` (in order, `concurrency` at once) until
/// `target` are accepted. `on_proposal` sees each proposal as it is decided.
pub async fn synthesize(
    proposer: Arc<Proposer>,
    target: usize,
    max_proposals: u64,
    concurrency: usize,
    mut on_proposal: impl FnMut(&Proposal, Option<&Rejection>, &Summary),
) -> Result<(Vec<Scenario>, Summary), ProposeError> {
    let started = Instant::now();
    let mut summary = Summary::default();
    let mut accepted: Vec<Scenario> = Vec::new();
    let mut kept = DedupIndex::new(&DedupConfig::default());
    let mut consecutive_failures = 0;
    let mut proposals = stream::iter(0..max_proposals)
        .map(|index| {
            let proposer = Arc::clone(&proposer);
            async move {
                let brief = plan_brief(&proposer.diversity, proposer.seed, index);
                proposer.propose(index, &brief).await
            }
        })
        .buffered(concurrency.max(1));
    while accepted.len() < target {
        let Some(proposal) = proposals.next().await else {
            break;
        };
        let proposal = match proposal {
            Err(ProposeError::Generator(e)) => {
                summary.failed += 1;
                consecutive_failures += 1;
                tracing::warn!(error = %e, "a proposal failed: the generator did not answer");
                if consecutive_failures >= MAX_CONSECUTIVE_FAILURES {
                    return Err(ProposeError::Generator(e));
                }
                continue;
            }
            other => other?,
        };
        consecutive_failures = 0;
        summary.proposals += 1;
        summary.attempts += proposal.attempts.len() as u64;
        for attempt in &proposal.attempts {
            if let Some(r) = &attempt.rejection {
                summary.reject(r);
            }
        }
        let mut final_rejection = proposal.attempts.last().and_then(|a| a.rejection.clone());
        if let Some((scenario, _)) = &proposal.scenario {
            match kept.check(scenario) {
                None => {
                    kept.insert(scenario);
                    summary.accepted += 1;
                    if proposal.attempts.len() > 1 {
                        summary.fixed_by_feedback += 1;
                    }
                    accepted.push(scenario.clone());
                }
                Some(duplicate) => {
                    let r = Rejection::new(Stage::Duplicate, duplicate.reason);
                    summary.reject(&r);
                    final_rejection = Some(r);
                }
            }
        }
        summary.elapsed = started.elapsed();
        on_proposal(&proposal, final_rejection.as_ref(), &summary);
    }
    summary.elapsed = started.elapsed();
    Ok((accepted, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_differing_only_in_ids_and_quoted_values_count_together() {
        assert_eq!(
            reason_kind("evaluation.actions[1] fails: order \"#LL123\" not found"),
            reason_kind("evaluation.actions[2] fails: order \"#LL999\" not found")
        );
    }
}
