//! The review committee: N judges score a blueprint that passed validation
//! by execution, and their scores are combined by the configured rule
//! (`majority` or `mean`, see [`super::vote`]). The blueprint is shown to
//! each judge as a conversation (its gold actions as the assistant's tool
//! calls, their real outputs as tool results) with the scenario and the
//! policy, so the judge machinery (rendering, samples, parsing, range
//! checks) is reused as it is. A reviewer whose call fails, or too few
//! readable verdicts, is an infrastructure failure: an error, never a
//! rejection.

use std::collections::HashMap;
use std::sync::Arc;

use crate::config::synth::committee::VoteRule;
use crate::judge::{self, Judge, JudgeError, JudgeInputs, JudgeRun, JudgeStatus};
use crate::llm::{ChatModel, Usage};
use crate::persona::scenario::Scenario;
use crate::store::{ConversationRow, MessageRow, StoredConversation};

use super::execute::ExecutedCall;
pub use super::review::{Review, ReviewerVerdict};
use super::vote::{decide, rejection_reason};

/// One member of the committee: a pointwise judge and the model it calls.
pub struct Reviewer {
    pub judge: Judge,
    pub model: Arc<dyn ChatModel>,
}

pub struct Committee {
    pub reviewers: Vec<Reviewer>,
    pub rule: VoteRule,
}

/// The committee could not decide: an infrastructure failure of the
/// proposal (retryable), never a rejection.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("reviewer '{reviewer}': {source}")]
    Render {
        reviewer: String,
        #[source]
        source: JudgeError,
    },
    #[error("reviewer '{reviewer}' failed: {reason}")]
    Failed { reviewer: String, reason: String },
    #[error("reviewer '{reviewer}' names endpoint '{endpoint}', which is not connected")]
    NoModel { reviewer: String, endpoint: String },
    #[error(
        "only {readable} of {reviewers} reviewers gave a readable verdict and the committee's quorum is {quorum}: {reasons}"
    )]
    NoQuorum {
        readable: usize,
        reviewers: usize,
        quorum: usize,
        reasons: String,
    },
}

impl Committee {
    /// The committee of `judges`, each calling the model of the endpoint it
    /// names (`Judge::endpoint`) in `models`.
    pub fn new(
        judges: Vec<Judge>,
        models: &HashMap<String, Arc<dyn ChatModel>>,
        rule: VoteRule,
    ) -> Result<Committee, ReviewError> {
        let reviewers = judges
            .into_iter()
            .map(|judge| match models.get(&judge.endpoint) {
                Some(model) => Ok(Reviewer {
                    model: Arc::clone(model),
                    judge,
                }),
                None => Err(ReviewError::NoModel {
                    reviewer: judge.name.clone(),
                    endpoint: judge.endpoint.clone(),
                }),
            })
            .collect::<Result<_, _>>()?;
        Ok(Committee { reviewers, rule })
    }

    /// Every reviewer judges the blueprint (at once); their scores are
    /// combined by the rule. A rejection is `Ok` with `accepted: false`.
    pub async fn review(
        &self,
        scenario: &Scenario,
        executed: &[ExecutedCall],
        policy: &str,
    ) -> Result<Review, ReviewError> {
        let conversation = blueprint_conversation(scenario, executed);
        let inputs = JudgeInputs {
            scenario: Some(scenario),
            domain_policy: Some(policy),
            ..JudgeInputs::new(&conversation)
        };
        let runs = futures_util::future::join_all(
            self.reviewers
                .iter()
                .map(|r| judge::run(&r.judge, r.model.as_ref(), &inputs, &[])),
        )
        .await;
        let mut verdicts = Vec::with_capacity(runs.len());
        for (reviewer, run) in self.reviewers.iter().zip(runs) {
            let run = run.map_err(|source| ReviewError::Render {
                reviewer: reviewer.judge.name.clone(),
                source,
            })?;
            verdicts.push(verdict(&reviewer.judge.name, &run, self.rule.pass_score));
        }
        if let Some(failed) = verdicts.iter().find(|v| v.status == JudgeStatus::Failed) {
            return Err(ReviewError::Failed {
                reviewer: failed.name.clone(),
                reason: failed.error.clone().unwrap_or_default(),
            });
        }
        let scores: Vec<f64> = verdicts.iter().filter_map(|v| v.score).collect();
        if scores.len() < self.rule.quorum.max(1) {
            let reasons = verdicts
                .iter()
                .filter(|v| v.score.is_none())
                .map(|v| format!("{}: {}", v.name, v.error.as_deref().unwrap_or("no verdict")))
                .collect::<Vec<_>>()
                .join("; ");
            return Err(ReviewError::NoQuorum {
                readable: scores.len(),
                reviewers: verdicts.len(),
                quorum: self.rule.quorum,
                reasons,
            });
        }
        let (accepted, figure) = decide(&self.rule, &scores);
        Ok(Review {
            accepted,
            rule: self.rule.rule,
            figure,
            reviewers: verdicts,
        })
    }

    /// Why a review rejected its blueprint, for the generator's next attempt.
    pub fn rejection_reason(&self, review: &Review) -> String {
        rejection_reason(&self.rule, review)
    }
}

fn verdict(name: &str, run: &JudgeRun, pass_score: f64) -> ReviewerVerdict {
    let calls = run.calls();
    let usage = calls.iter().fold(Usage::default(), |sum, c| Usage {
        prompt_tokens: sum.prompt_tokens + c.usage.prompt_tokens,
        completion_tokens: sum.completion_tokens + c.usage.completion_tokens,
    });
    let reasons = calls
        .iter()
        .map(|c| c.raw_output.trim())
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    let score = match run.outcome.status {
        JudgeStatus::Ok => run.outcome.score(),
        JudgeStatus::Unparseable | JudgeStatus::Failed => None,
    };
    ReviewerVerdict {
        name: name.to_string(),
        status: run.outcome.status,
        score,
        passed: score.map(|s| s >= pass_score),
        reasons,
        error: run.outcome.reason.clone(),
        usage,
    }
}

/// A blueprint as a conversation a judge reads: each gold action an
/// assistant tool call, followed by what it returned on the fresh session.
/// The seed (sent with each reviewer's calls) comes from the scenario's id.
pub fn blueprint_conversation(
    scenario: &Scenario,
    executed: &[ExecutedCall],
) -> StoredConversation {
    let row = |idx: usize, role: &str, content: &str| MessageRow {
        idx: idx as i64,
        role: role.to_string(),
        content: content.to_string(),
        tool_calls: None,
        tool_call_id: None,
        author: String::new(),
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: None,
    };
    let mut messages = Vec::with_capacity(executed.len() * 2);
    for e in executed {
        let mut call = row(messages.len(), "assistant", "");
        call.tool_calls = Some(serde_json::json!([{
            "id": e.call.id,
            "name": e.call.name,
            "arguments": e.call.arguments,
        }]));
        messages.push(call);
        let mut result = row(messages.len(), "tool", &e.output.content);
        result.tool_call_id = Some(e.call.id.clone());
        messages.push(result);
    }
    let digest = crate::judge::hash::sha256_hex(scenario.id.as_bytes());
    let seed = digest
        .get(..15)
        .and_then(|hex| i64::from_str_radix(hex, 16).ok())
        .unwrap_or(0);
    StoredConversation {
        conversation: ConversationRow {
            id: 0,
            job_id: 0,
            item_id: 0,
            item_key: scenario.id.clone(),
            scenario_id: scenario.id.clone(),
            persona_id: String::new(),
            sample: 0,
            seed,
            policy_model: "gold actions".into(),
            user_model: String::new(),
            termination: "blueprint".into(),
            reward: None,
            reward_breakdown: serde_json::Value::Null,
            metadata: serde_json::Value::Null,
            tools: serde_json::Value::Null,
            started_at: 0,
            finished_at: 0,
            user_checks: None,
        },
        messages,
        usage: Vec::new(),
    }
}
