//! [`EvaluationStore`] over the shared SQL.

use async_trait::async_trait;

use super::super::{dialect::Dialect, evaluations, SqlStore};
use crate::store::{EvaluationRow, EvaluationStore, StoreError};

#[async_trait]
impl<D: Dialect> EvaluationStore for SqlStore<D> {
    #[tracing::instrument(name = "store.open_evaluation", level = "debug", skip_all)]
    async fn open_evaluation(
        &self,
        name: &str,
        baseline: Option<&str>,
        judge: Option<&str>,
    ) -> Result<i64, StoreError> {
        evaluations::open(self, name, baseline, judge).await
    }

    #[tracing::instrument(name = "store.put_evaluation_policy", level = "debug", skip_all, fields(evaluation_id = evaluation_id))]
    async fn put_evaluation_policy(
        &self,
        evaluation_id: i64,
        policy: &str,
        position: i64,
        job_id: i64,
    ) -> Result<(), StoreError> {
        evaluations::put_policy(self, evaluation_id, policy, position, job_id).await
    }

    #[tracing::instrument(name = "store.set_evaluation_policies", level = "debug", skip_all, fields(evaluation_id = evaluation_id))]
    async fn set_evaluation_policies(
        &self,
        evaluation_id: i64,
        policies: &[(String, i64)],
    ) -> Result<(), StoreError> {
        evaluations::set_policies(self, evaluation_id, policies).await
    }

    #[tracing::instrument(name = "store.get_evaluation", level = "debug", skip_all, fields(id = id))]
    async fn get_evaluation(&self, id: i64) -> Result<Option<EvaluationRow>, StoreError> {
        evaluations::get(self, id).await
    }

    #[tracing::instrument(name = "store.all_evaluations", level = "debug", skip_all)]
    async fn all_evaluations(&self) -> Result<Vec<EvaluationRow>, StoreError> {
        evaluations::all(self).await
    }

    #[tracing::instrument(name = "store.find_evaluation_by_name", level = "debug", skip_all)]
    async fn find_evaluation_by_name(
        &self,
        name: &str,
    ) -> Result<Option<EvaluationRow>, StoreError> {
        evaluations::find_by_name(self, name).await
    }
}
