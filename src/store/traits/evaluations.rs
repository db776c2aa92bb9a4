//! Evaluations: one job config run once per policy.

use async_trait::async_trait;

use crate::store::{EvaluationRow, StoreError};

/// Evaluations: one job config run once per policy.
#[async_trait]
pub trait EvaluationStore: Send + Sync {
    /// The evaluation named `name`, created if there is none, with its
    /// baseline and pairwise judge set to these. Returns its id.
    async fn open_evaluation(
        &self,
        name: &str,
        baseline: Option<&str>,
        judge: Option<&str>,
    ) -> Result<i64, StoreError>;
    /// Policy `policy` of the evaluation, at `position`, is job `job_id`
    /// (replacing what it was): written as each policy's run ends, so that a
    /// killed evaluation keeps the policies it ran.
    async fn put_evaluation_policy(
        &self,
        evaluation_id: i64,
        policy: &str,
        position: i64,
        job_id: i64,
    ) -> Result<(), StoreError>;
    /// In one transaction: make `policies` (`(policy, job id)`, in order)
    /// the evaluation's policies, replacing what it held: a policy whose
    /// config changed names its new job, and a policy left out of the file
    /// is left out of the evaluation (its job stays stored).
    async fn set_evaluation_policies(
        &self,
        evaluation_id: i64,
        policies: &[(String, i64)],
    ) -> Result<(), StoreError>;
    /// The evaluation with this id, with its policies by position.
    async fn get_evaluation(&self, id: i64) -> Result<Option<EvaluationRow>, StoreError>;
    /// Every evaluation with its policies, newest first (the UI's list).
    async fn all_evaluations(&self) -> Result<Vec<EvaluationRow>, StoreError>;
    /// The evaluation with this name.
    async fn find_evaluation_by_name(
        &self,
        name: &str,
    ) -> Result<Option<EvaluationRow>, StoreError>;
}
