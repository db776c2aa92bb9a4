//! Synthesis jobs' proposals.

use async_trait::async_trait;

use crate::store::{NewProposal, ProposalRow, StoreError};

/// Synthesis jobs' proposals.
#[async_trait]
pub trait ProposalStore: Send + Sync {
    /// In one transaction: check `owner` still holds the synthesis item,
    /// mark it done and store its proposal (replacing one with the same
    /// index). `LeaseLost`, and nothing stored, when `owner` no longer holds it.
    async fn complete_proposal(
        &self,
        item_id: i64,
        owner: &str,
        proposal: &NewProposal,
    ) -> Result<i64, StoreError>;

    /// Proposals of a synthesis job with an index above `after`, in index
    /// order, at most `limit`.
    async fn proposals_page(
        &self,
        job_id: i64,
        after: i64,
        limit: u32,
    ) -> Result<Vec<ProposalRow>, StoreError>;
}
