//! [`ProposalStore`] over the shared SQL.

use async_trait::async_trait;

use super::super::{dialect::Dialect, proposals, SqlStore};
use crate::store::{NewProposal, ProposalRow, ProposalStore, StoreError};

#[async_trait]
impl<D: Dialect> ProposalStore for SqlStore<D> {
    #[tracing::instrument(name = "store.complete_proposal", level = "debug", skip_all, fields(item_id = item_id))]
    async fn complete_proposal(
        &self,
        item_id: i64,
        owner: &str,
        proposal: &NewProposal,
    ) -> Result<i64, StoreError> {
        proposals::complete(self, item_id, owner, proposal).await
    }

    #[tracing::instrument(name = "store.proposals_page", level = "debug", skip_all, fields(job_id = job_id))]
    async fn proposals_page(
        &self,
        job_id: i64,
        after: i64,
        limit: u32,
    ) -> Result<Vec<ProposalRow>, StoreError> {
        proposals::page(self, job_id, after, limit).await
    }
}
