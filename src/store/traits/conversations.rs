//! Stored conversations: read, page, summarise, recheck.

use async_trait::async_trait;

use crate::store::{ConversationKey, JobSummary, LatencyHistogram, StoreError, StoredConversation};

/// Stored conversations: read, page, summarise, recheck.
#[async_trait]
pub trait ConversationStore: Send + Sync {
    /// Replace the user checks of each `(conversation id, checks)` (a
    /// `user_checks::UserChecks` as JSON), in one transaction: `sparring
    /// recheck` writes the current version's over an older one's.
    async fn replace_user_checks(
        &self,
        checks: &[(i64, serde_json::Value)],
    ) -> Result<u64, StoreError>;

    async fn get_conversation(&self, id: i64) -> Result<Option<StoredConversation>, StoreError>;

    /// Conversations of a job with id > `after_id`, in id order, at most `limit`.
    async fn conversations_page(
        &self,
        job_id: i64,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<StoredConversation>, StoreError>;

    /// `(scenario id, reward)` of each of job `job_id`'s conversations with a
    /// reward, by scenario, then in id order: the rollout groups' rewards.
    async fn scenario_rewards(&self, job_id: i64) -> Result<Vec<(String, f64)>, StoreError>;

    /// Counts, usage and model-call latencies of a job's stored conversations.
    async fn job_summary(&self, job_id: i64) -> Result<JobSummary, StoreError>;

    /// Latencies of the model calls in a job's stored conversations, per role,
    /// as histograms: a few rows per distinct latency, however many calls.
    async fn call_latencies(&self, job_id: i64) -> Result<Vec<LatencyHistogram>, StoreError>;

    /// Conversation ids of a job with their scenario, persona and sample, by
    /// id: how two jobs' conversations are matched for pairwise judging.
    async fn conversation_keys(&self, job_id: i64) -> Result<Vec<ConversationKey>, StoreError>;
}
