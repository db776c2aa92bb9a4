//! One proposal: ask the generator, validate the reply by execution, and on
//! a rejection ask again with the exact error, up to `max_attempts` times.

use std::sync::Arc;

use serde_json::Value;

use crate::config::synth_diversity::DiversityConfig;
use crate::env::Environment;
use crate::llm::chat::{ChatRequest, Role};
use crate::llm::message::Message;
use crate::llm::{ChatModel, LlmError, Usage};
use crate::persona::scenario::Scenario;
use crate::prompt::PromptRegistry;

use super::brief::ProposalBrief;
use super::execute::{validate, ExecutedCall};
use super::prompt::{context, ProposalInput, PROPOSE};
use super::reply::parse_scenario;
use super::stage::{Rejection, Stage};

/// The tag every synthesized scenario carries (closing the loop reads it).
pub const SYNTHESIZED_TAG: &str = "synthesized";

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
    /// What the briefs ask for (`diversity::plan_brief`).
    pub diversity: DiversityConfig,
}

/// One attempt of a proposal and how it ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Attempt {
    pub attempt: u32,
    pub reply: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection: Option<Rejection>,
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
}

#[derive(Debug, thiserror::Error)]
pub enum ProposeError {
    #[error("the environment cannot give records: {0}")]
    Records(#[from] crate::env::EnvError),
    #[error("cannot render the proposal prompt: {0}")]
    Prompt(String),
    #[error("the generator failed: {0}")]
    Generator(#[from] LlmError),
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
            match self.check(index, brief, &reply).await {
                Ok((scenario, executed)) => {
                    attempts.push(Attempt {
                        attempt,
                        reply,
                        rejection: None,
                    });
                    return Ok(Proposal {
                        index,
                        attempts,
                        scenario: Some((scenario, executed)),
                        usage,
                    });
                }
                Err(rejection) => attempts.push(Attempt {
                    attempt,
                    reply,
                    rejection: Some(rejection),
                }),
            }
        }
        Ok(Proposal {
            index,
            attempts,
            scenario: None,
            usage,
        })
    }

    async fn check(
        &self,
        index: u64,
        brief: &ProposalBrief,
        reply: &str,
    ) -> Result<(Scenario, Vec<ExecutedCall>), Rejection> {
        let mut scenario = parse_scenario(reply).map_err(|e| Rejection::new(Stage::Format, e))?;
        scenario.id = scenario_id(self.seed, index);
        if !scenario.tags.iter().any(|t| t == SYNTHESIZED_TAG) {
            scenario.tags.push(SYNTHESIZED_TAG.to_string());
        }
        let executed = validate(self.environment.as_ref(), &scenario, brief).await?;
        Ok((scenario, executed))
    }
}
