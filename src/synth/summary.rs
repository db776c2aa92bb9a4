//! What a synthesis job did, counted from its stored proposals: proposals,
//! attempts, accepted, the rejected attempts per stage with their commonest
//! reasons, near-duplicates, and the tokens spent.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::llm::Usage;

use super::accept::Decision;
use super::propose::Attempt;
use super::stage::{Rejection, Stage};

/// Counts of a synthesis job.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// Proposals stored (each item that finished: one generator prompt and
    /// its feedback retries).
    pub proposals: u64,
    pub attempts: u64,
    /// Valid proposals (passed every check of their item).
    pub valid: u64,
    pub accepted: u64,
    /// Accepted only after feedback (a retry).
    pub fixed_by_feedback: u64,
    /// Valid and distinct, but found after the target was met.
    pub surplus: u64,
    /// Items whose generator (or reviewer) calls failed after the endpoint's
    /// retries: infrastructure, never a rejection; retryable.
    pub failed: u64,
    /// Rejected attempts per stage (a near-duplicate counts at `duplicate`).
    pub rejected: BTreeMap<Stage, u64>,
    /// Per stage, reasons with their specifics blurred, and how often.
    pub reasons: BTreeMap<Stage, BTreeMap<String, u64>>,
    pub generator_usage: Usage,
    pub review_usage: Usage,
    /// The time this process worked on the job.
    #[serde(skip)]
    pub elapsed: Duration,
    /// Proposals this process made (the rest were stored before it started).
    pub made_here: u64,
}

impl Summary {
    /// Count one stored proposal: its attempts, and (for a valid one) what
    /// the walk in proposal order decided.
    pub fn count(&mut self, attempts: &[Attempt], decision: Option<&Decision>) {
        self.proposals += 1;
        self.attempts += attempts.len() as u64;
        for attempt in attempts {
            if let Some(r) = &attempt.rejection {
                self.reject(r);
            }
        }
        let Some(decision) = decision else {
            return;
        };
        self.valid += 1;
        match decision {
            Decision::Accepted => {
                self.accepted += 1;
                if attempts.len() > 1 {
                    self.fixed_by_feedback += 1;
                }
            }
            Decision::Duplicate(d) => {
                self.reject(&Rejection::new(Stage::Duplicate, d.reason.clone()));
            }
            Decision::Surplus => self.surplus += 1,
        }
    }

    fn reject(&mut self, rejection: &Rejection) {
        *self.rejected.entry(rejection.stage).or_default() += 1;
        *self
            .reasons
            .entry(rejection.stage)
            .or_default()
            .entry(reason_kind(&rejection.reason))
            .or_default() += 1;
    }

    /// Rejected attempts over every stage, near-duplicates included.
    pub fn rejected_attempts(&self) -> u64 {
        self.rejected.values().sum()
    }

    /// The share of attempts rejected at `stage`, in [0, 1].
    pub fn share(&self, stage: Stage) -> f64 {
        let n = self.rejected.get(&stage).copied().unwrap_or(0);
        n as f64 / self.attempts.max(1) as f64
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

    /// Proposals this process made per second of its work.
    pub fn proposals_per_second(&self) -> f64 {
        self.made_here as f64 / self.elapsed.as_secs_f64().max(1e-9)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::dedup::Duplicate;

    #[test]
    fn reasons_differing_only_in_ids_and_quoted_values_count_together() {
        assert_eq!(
            reason_kind("evaluation.actions[1] fails: order \"#LL123\" not found"),
            reason_kind("evaluation.actions[2] fails: order \"#LL999\" not found")
        );
    }

    fn attempt(stage: Option<Stage>) -> Attempt {
        Attempt {
            attempt: 1,
            reply: String::new(),
            rejection: stage.map(|s| Rejection::new(s, "why 1")),
            review: None,
        }
    }

    #[test]
    fn every_rejected_attempt_and_every_decision_is_counted_once() {
        let mut s = Summary::default();
        s.count(
            &[attempt(Some(Stage::Format)), attempt(None)],
            Some(&Decision::Accepted),
        );
        s.count(&[attempt(Some(Stage::Execution))], None);
        let duplicate = Duplicate {
            of: "a".into(),
            similarity: 0.95,
            reason: "repeats a".into(),
        };
        s.count(&[attempt(None)], Some(&Decision::Duplicate(duplicate)));
        s.count(&[attempt(None)], Some(&Decision::Surplus));
        assert_eq!((s.proposals, s.attempts, s.valid), (4, 5, 3));
        assert_eq!((s.accepted, s.fixed_by_feedback, s.surplus), (1, 1, 1));
        assert_eq!(s.rejected_attempts(), 3);
        assert_eq!(s.rejected[&Stage::Duplicate], 1);
        assert!((s.share(Stage::Format) - 0.2).abs() < 1e-9);
        assert_eq!(s.commonest(Stage::Execution, 3), vec![("why #", 1)]);
    }
}
