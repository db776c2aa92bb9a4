//! One proposal: ask the generator, validate the reply by execution, and on
//! a rejection ask again with the exact error, up to `max_attempts` times.

use std::sync::Arc;

use serde_json::Value;

use crate::env::Environment;
use crate::llm::chat::{ChatRequest, Role};
use crate::llm::message::Message;
use crate::llm::{ChatModel, LlmError, Usage};
use crate::persona::scenario::Scenario;
use crate::prompt::PromptRegistry;

use super::brief::ProposalBrief;
use super::committee::{Committee, Review, ReviewError};
use super::execute::{validate, ExecutedCall, Invalid};
use super::prompt::{context, ProposalInput, PROPOSE};
use super::reply::parse_scenario;
use super::stage::{Rejection, Stage};

/// The tag every synthesized scenario carries (closing the loop reads it).
pub use crate::verify::solved::SYNTHESIZED_TAG;

/// What a synthesis run shares between its proposals.
pub struct Proposer {
    pub environment: Arc<dyn Environment>,
    pub generator: Arc<dyn ChatModel>,
    pub prompts: PromptRegistry,
    pub policy: String,
    pub examples: Vec<Scenario>,
    pub records_per_prompt: usize,
    pub max_attempts: u32,
    pub seed: u64,
    /// Reviews what passes validation by execution; `None` reviews nothing.
    pub committee: Option<Arc<Committee>>,
}

/// One attempt of a proposal and how it ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Attempt {
    pub attempt: u32,
    pub reply: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection: Option<Rejection>,
    /// The committee's review, when the attempt got that far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
}

/// A proposal's attempts, and its scenario when the last one passed
/// validation by execution.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub index: u64,
    pub attempts: Vec<Attempt>,
    pub scenario: Option<(Scenario, Vec<ExecutedCall>)>,
    /// The generator's tokens over every attempt.
    pub usage: Usage,
    /// The reviewers' tokens over every attempt, apart from the generator's.
    pub review_usage: Usage,
}

#[derive(Debug, thiserror::Error)]
pub enum ProposeError {
    #[error("the environment cannot give records: {0}")]
    Records(#[from] crate::env::EnvError),
    #[error("cannot render the proposal prompt: {0}")]
    Prompt(String),
    #[error("the generator failed: {0}")]
    Generator(#[from] LlmError),
    /// A reviewer failed, or too few gave a readable verdict: retryable,
    /// never a rejection.
    #[error("the review committee failed: {0}")]
    Review(#[from] ReviewError),
    /// The environment failed while a proposal was validated by execution:
    /// retryable, never a rejection.
    #[error("the environment failed during validation by execution: {0}")]
    Environment(crate::env::EnvError),
}

impl ProposeError {
    /// A model failed (after its endpoint's retries): the proposal failed
    /// and may be retried; nothing was rejected.
    pub fn is_model_failure(&self) -> bool {
        matches!(self, ProposeError::Generator(_) | ProposeError::Review(_))
    }
}

/// A fresh deterministic id for proposal `index` of a run seeded `seed`.
pub fn scenario_id(seed: u64, index: u64) -> String {
    format!("synth-{seed}-{index:06}")
}

impl Proposer {
    pub async fn propose(
        &self,
        index: u64,
        brief: &ProposalBrief,
    ) -> Result<Proposal, ProposeError> {
        let records: Value = self
            .environment
            .sample_records(self.seed.wrapping_add(index), self.records_per_prompt)
            .await?;
        let mut attempts: Vec<Attempt> = Vec::new();
        let mut usage = Usage::default();
        let mut review_usage = Usage::default();
        for attempt in 1..=self.max_attempts.max(1) {
            let previous = attempts
                .last()
                .and_then(|a| a.rejection.as_ref().map(|r| (a.reply.as_str(), r)));
            let input = ProposalInput {
                environment: self.environment.name(),
                policy: &self.policy,
                tools: self.environment.tools(),
                records: &records,
                examples: &self.examples,
                brief,
                index,
                previous,
            };
            let prompt = self
                .prompts
                .render(PROPOSE, &context(&input))
                .map_err(|e| ProposeError::Prompt(e.to_string()))?;
            let request = ChatRequest {
                role: Role::Unspecified,
                messages: vec![Message::user(prompt)],
                seed: Some(
                    self.seed
                        .wrapping_add(index)
                        .wrapping_add(u64::from(attempt) << 32),
                ),
                ..Default::default()
            };
            let response = self.generator.complete(request).await?;
            usage.prompt_tokens += response.usage.prompt_tokens;
            usage.completion_tokens += response.usage.completion_tokens;
            let reply = response.message.content.to_string();
            let checked = match self.check(index, brief, &reply).await {
                Ok(checked) => checked,
                Err(Invalid::Environment(e)) => return Err(ProposeError::Environment(e)),
                Err(Invalid::Rejected(rejection)) => {
                    attempts.push(Attempt {
                        attempt,
                        reply,
                        rejection: Some(rejection),
                        review: None,
                    });
                    continue;
                }
            };
            let (rejection, review) = self.review(&checked, &mut review_usage).await?;
            let accepted = rejection.is_none();
            attempts.push(Attempt {
                attempt,
                reply,
                rejection,
                review,
            });
            if accepted {
                return Ok(Proposal {
                    index,
                    attempts,
                    scenario: Some(checked),
                    usage,
                    review_usage,
                });
            }
        }
        Ok(Proposal {
            index,
            attempts,
            scenario: None,
            usage,
            review_usage,
        })
    }

    /// The committee's review of a blueprint that passed validation by
    /// execution: a rejection (`Stage::Committee`, with the failing criteria
    /// and reasons) when it says no. No committee: accepted, no review.
    async fn review(
        &self,
        (scenario, executed): &(Scenario, Vec<ExecutedCall>),
        review_usage: &mut Usage,
    ) -> Result<(Option<Rejection>, Option<Review>), ProposeError> {
        let Some(committee) = &self.committee else {
            return Ok((None, None));
        };
        let review = committee.review(scenario, executed, &self.policy).await?;
        let spent = review.usage();
        review_usage.prompt_tokens += spent.prompt_tokens;
        review_usage.completion_tokens += spent.completion_tokens;
        let rejection = (!review.accepted)
            .then(|| Rejection::new(Stage::Committee, committee.rejection_reason(&review)));
        Ok((rejection, Some(review)))
    }

    async fn check(
        &self,
        index: u64,
        brief: &ProposalBrief,
        reply: &str,
    ) -> Result<(Scenario, Vec<ExecutedCall>), Invalid> {
        let mut scenario = parse_scenario(reply).map_err(|e| Rejection::new(Stage::Format, e))?;
        scenario.id = scenario_id(self.seed, index);
        if !scenario.tags.iter().any(|t| t == SYNTHESIZED_TAG) {
            scenario.tags.push(SYNTHESIZED_TAG.to_string());
        }
        let executed = validate(self.environment.as_ref(), &scenario, brief).await?;
        Ok((scenario, executed))
    }
}
