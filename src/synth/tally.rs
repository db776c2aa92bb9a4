//! A synthesis job's stored proposals read back in index order, a page at a
//! time: decided (accepted, near-duplicate, surplus) and counted. Memory
//! holds the accepted scenarios and their MinHash signatures, not the
//! proposals.

use crate::config::synth::SynthConfig;
use crate::persona::Scenario;
use crate::store::{ProposalRow, ProposalStatus, ProposalStore, StoreError};

use super::accept::{Acceptance, Decision};
use super::propose::Attempt;
use super::summary::Summary;

/// Proposals read per page.
const PAGE: u32 = 500;

/// The job's proposals decided and counted.
pub struct Tally {
    pub acceptance: Acceptance,
    pub summary: Summary,
}

/// Walk every stored proposal of `job_id` in index order; `each` sees every
/// proposal with what became of it (`None`: rejected within its item).
pub async fn tally(
    store: &dyn ProposalStore,
    job_id: i64,
    config: &SynthConfig,
    mut each: impl FnMut(&ProposalRow, Option<&Decision>),
) -> Result<Tally, StoreError> {
    let mut acceptance = Acceptance::new(&config.dedup, config.head.target);
    let mut summary = Summary::default();
    let mut after = -1;
    loop {
        let page = store.proposals_page(job_id, after, PAGE).await?;
        let Some(last) = page.last() else {
            break;
        };
        after = last.proposal.index;
        for row in &page {
            let attempts = attempts_of(row)?;
            let decision = match (&row.proposal.status, &row.proposal.scenario) {
                (ProposalStatus::Valid, Some(value)) => {
                    let scenario = scenario_of(row, value)?;
                    let index = u64::try_from(row.proposal.index).unwrap_or(0);
                    Some(acceptance.offer(index, &scenario))
                }
                _ => None,
            };
            summary.count(&attempts, decision.as_ref());
            add_usage(&mut summary, row);
            each(row, decision.as_ref());
        }
    }
    Ok(Tally {
        acceptance,
        summary,
    })
}

fn corrupt(row: &ProposalRow, column: &str, e: serde_json::Error) -> StoreError {
    StoreError::Corrupt(format!(
        "proposals row {}, column {column}: not what a synthesis job stores ({e})",
        row.id
    ))
}

pub fn attempts_of(row: &ProposalRow) -> Result<Vec<Attempt>, StoreError> {
    serde_json::from_value(row.proposal.attempts.clone()).map_err(|e| corrupt(row, "attempts", e))
}

fn scenario_of(row: &ProposalRow, value: &serde_json::Value) -> Result<Scenario, StoreError> {
    serde_json::from_value(value.clone()).map_err(|e| corrupt(row, "scenario", e))
}

fn add_usage(summary: &mut Summary, row: &ProposalRow) {
    let p = &row.proposal;
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    summary.generator_usage.prompt_tokens += n(p.prompt_tokens);
    summary.generator_usage.completion_tokens += n(p.completion_tokens);
    summary.review_usage.prompt_tokens += n(p.review_prompt_tokens);
    summary.review_usage.completion_tokens += n(p.review_completion_tokens);
}
