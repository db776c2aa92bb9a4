//! [`ConversationStore`] over the shared SQL.

use async_trait::async_trait;

use super::super::{conversations, dialect::Dialect, judgments, SqlStore};
use crate::store::{
    ConversationKey, ConversationStore, JobSummary, LatencyHistogram, StoreError,
    StoredConversation,
};

#[async_trait]
impl<D: Dialect> ConversationStore for SqlStore<D> {
    #[tracing::instrument(name = "store.get_conversation", level = "debug", skip_all, fields(id = id))]
    async fn get_conversation(&self, id: i64) -> Result<Option<StoredConversation>, StoreError> {
        conversations::get(self, id).await
    }

    #[tracing::instrument(name = "store.conversations_page", level = "debug", skip_all, fields(job_id = job_id))]
    async fn conversations_page(
        &self,
        job_id: i64,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<StoredConversation>, StoreError> {
        conversations::page(self, job_id, after_id, limit).await
    }

    #[tracing::instrument(name = "store.replace_user_checks", level = "debug", skip_all)]
    async fn replace_user_checks(
        &self,
        checks: &[(i64, serde_json::Value)],
    ) -> Result<u64, StoreError> {
        conversations::replace_user_checks(self, checks).await
    }

    #[tracing::instrument(name = "store.scenario_rewards", level = "debug", skip_all, fields(job_id = job_id))]
    async fn scenario_rewards(&self, job_id: i64) -> Result<Vec<(String, f64)>, StoreError> {
        conversations::scenario_rewards(self, job_id).await
    }

    #[tracing::instrument(name = "store.job_summary", level = "debug", skip_all, fields(job_id = job_id))]
    async fn job_summary(&self, job_id: i64) -> Result<JobSummary, StoreError> {
        conversations::summary(self, job_id).await
    }

    #[tracing::instrument(name = "store.call_latencies", level = "debug", skip_all, fields(job_id = job_id))]
    async fn call_latencies(&self, job_id: i64) -> Result<Vec<LatencyHistogram>, StoreError> {
        conversations::latencies(&mut self.reader(), job_id).await
    }

    #[tracing::instrument(name = "store.conversation_keys", level = "debug", skip_all, fields(job_id = job_id))]
    async fn conversation_keys(&self, job_id: i64) -> Result<Vec<ConversationKey>, StoreError> {
        judgments::conversation_keys(self, job_id).await
    }
}
