//! Evaluations as stored (`evaluations`, `evaluation_policies`, migration
//! 0009): a name, the baseline policy, and each policy's job in the order the
//! evaluation file lists them.

use serde::Serialize;

/// One stored evaluation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvaluationRow {
    pub id: i64,
    pub name: String,
    /// The policy the paired tests compare with; `None`: the first.
    pub baseline: Option<String>,
    /// The pairwise judge whose verdicts rate the policies, if any.
    pub judge: Option<String>,
    pub created_at: i64,
    /// By position.
    pub policies: Vec<EvaluationPolicy>,
}

/// A policy of an evaluation and the job that ran it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvaluationPolicy {
    pub policy: String,
    pub position: i64,
    pub job_id: i64,
}
