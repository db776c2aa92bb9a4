//! The `proposals` table: a synthesis item's proposal stored as the item
//! completes (one transaction), and read back in index order.

use super::dialect::Dialect;
use super::runs::{Commit, Runs};
use super::statement::{sql, Param, Sql};
use super::SqlStore;
use crate::store::decode::{self, proposal_columns, StoredRow};
use crate::store::{NewProposal, ProposalRow, StoreError};

const CLAIM: Sql = sql!(
    "UPDATE items SET status = 'done', lease_expires_at = NULL, updated_at = ",
    NOW,
    " WHERE id = $1 AND status = 'leased' AND lease_owner = $2 RETURNING job_id"
);
// A proposal is stored once per index; a retried item (after a lost lease
// whose holder still wrote) replaces the row rather than failing.
const UPSERT: Sql = sql!(
    "INSERT INTO proposals (job_id, item_id, idx, status, stage, reason, brief, scenario, \
     attempts, prompt_tokens, completion_tokens, review_prompt_tokens, \
     review_completion_tokens, latency_ms, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, ",
    NOW,
    ") ON CONFLICT (job_id, idx) DO UPDATE SET item_id = excluded.item_id, \
     status = excluded.status, stage = excluded.stage, reason = excluded.reason, \
     brief = excluded.brief, scenario = excluded.scenario, attempts = excluded.attempts, \
     prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens, \
     review_prompt_tokens = excluded.review_prompt_tokens, \
     review_completion_tokens = excluded.review_completion_tokens, \
     latency_ms = excluded.latency_ms, created_at = excluded.created_at \
     RETURNING id"
);
const PAGE: Sql = sql!(
    "SELECT ",
    proposal_columns!(),
    " FROM proposals WHERE job_id = $1 AND idx > $2 ORDER BY idx LIMIT $3"
);

/// In one transaction: check `owner` still holds item `item_id`, mark it
/// done and store its proposal. `LeaseLost` (and nothing stored) otherwise.
pub(super) async fn complete(
    store: &SqlStore<impl Dialect>,
    item_id: i64,
    owner: &str,
    proposal: &NewProposal,
) -> Result<i64, StoreError> {
    let mut tx = store.begin_write().await?;
    let Some(claimed) = tx
        .fetch_optional(&CLAIM, &[Param::Int(item_id), Param::Text(owner)])
        .await?
    else {
        return Err(StoreError::LeaseLost {
            item_id,
            owner: owner.to_string(),
        });
    };
    let job_id = claimed.int("job_id")?;
    let text = |v: &serde_json::Value| v.to_string();
    let brief = text(&proposal.brief);
    let scenario = proposal.scenario.as_ref().map(text);
    let attempts = text(&proposal.attempts);
    let row = tx
        .fetch_one(
            &UPSERT,
            &[
                Param::Int(job_id),
                Param::Int(item_id),
                Param::Int(proposal.index),
                Param::Text(proposal.status.as_str()),
                Param::OptText(proposal.stage.as_deref()),
                Param::OptText(proposal.reason.as_deref()),
                Param::Text(&brief),
                Param::OptText(scenario.as_deref()),
                Param::Text(&attempts),
                Param::Int(proposal.prompt_tokens),
                Param::Int(proposal.completion_tokens),
                Param::Int(proposal.review_prompt_tokens),
                Param::Int(proposal.review_completion_tokens),
                Param::Int(proposal.latency_ms),
            ],
        )
        .await?;
    let id = row.int("id")?;
    tx.commit().await?;
    Ok(id)
}

/// Proposals of `job_id` with an index above `after`, in index order, at most `limit`.
pub(super) async fn page(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
    after: i64,
    limit: u32,
) -> Result<Vec<ProposalRow>, StoreError> {
    store
        .reader()
        .fetch_all(
            &PAGE,
            &[
                Param::Int(job_id),
                Param::Int(after),
                Param::Int(i64::from(limit)),
            ],
        )
        .await?
        .iter()
        .map(decode::proposal)
        .collect()
}
