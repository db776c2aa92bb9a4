//! One synthesis item: proposal number `index`, asked for its brief,
//! validated (and reviewed) inside `Proposer::propose`, and stored with its
//! item. A generator that fails after the endpoint's retries fails the item
//! (retryable), never a rejection.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;

use crate::store::{ItemRow, NewProposal, ProposalStatus};
use crate::synth::propose::{Proposal, ProposeError, Proposer};
use crate::synth::ProposalBrief;

use super::super::work::{ItemRunner, Outcome};

/// The brief of proposal `index`.
pub type PlanBrief = dyn Fn(u64) -> ProposalBrief + Send + Sync;

pub struct ProposalItems {
    pub proposer: Arc<Proposer>,
    pub plan: Box<PlanBrief>,
    /// Proposals this process made (stored, unless their lease was lost).
    pub made: AtomicU64,
}

/// The proposal number an item stands for (its `sample`).
pub fn index_of(item: &ItemRow) -> Option<u64> {
    u64::try_from(item.sample).ok()
}

#[async_trait]
impl ItemRunner for ProposalItems {
    async fn run(&self, item: &ItemRow) -> Outcome {
        let Some(index) = index_of(item) else {
            return Outcome::failed("dataset", format!("'{}' is not a synthesis item", item.key));
        };
        let brief = (self.plan)(index);
        let started = Instant::now();
        match self.proposer.propose(index, &brief).await {
            Ok(proposal) => {
                self.made.fetch_add(1, Ordering::Relaxed);
                let latency = started.elapsed().as_millis();
                Outcome::Proposal(Box::new(stored(&proposal, &brief, latency)))
            }
            Err(ProposeError::Generator(e)) => Outcome::failed(e.class(), e.to_string()),
            Err(e @ ProposeError::Review(_)) => Outcome::failed("review", e.to_string()),
            Err(e @ (ProposeError::Records(_) | ProposeError::Environment(_))) => {
                Outcome::failed("env_error", e.to_string())
            }
            Err(e @ ProposeError::Prompt(_)) => Outcome::failed("prompt", e.to_string()),
        }
    }
}

fn stored(proposal: &Proposal, brief: &ProposalBrief, latency_ms: u128) -> NewProposal {
    let last = proposal.attempts.last().and_then(|a| a.rejection.as_ref());
    let tokens = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    NewProposal {
        index: i64::try_from(proposal.index).unwrap_or(i64::MAX),
        status: if proposal.scenario.is_some() {
            ProposalStatus::Valid
        } else {
            ProposalStatus::Rejected
        },
        stage: last.map(|r| r.stage.as_str().to_string()),
        reason: last.map(|r| r.reason.clone()),
        brief: serde_json::to_value(brief).unwrap_or_default(),
        scenario: proposal
            .scenario
            .as_ref()
            .and_then(|(s, _)| serde_json::to_value(s).ok()),
        attempts: serde_json::to_value(&proposal.attempts).unwrap_or_default(),
        prompt_tokens: tokens(proposal.usage.prompt_tokens),
        completion_tokens: tokens(proposal.usage.completion_tokens),
        review_prompt_tokens: tokens(proposal.review_usage.prompt_tokens),
        review_completion_tokens: tokens(proposal.review_usage.completion_tokens),
        latency_ms: i64::try_from(latency_ms).unwrap_or(i64::MAX),
    }
}
