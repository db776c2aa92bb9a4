//! `judge:NAME` rewards: the job's judge of that name runs when an episode
//! ends, and its verdict becomes a reward component (pass/fail 1/0, a
//! pointwise score normalized into [0, 1] by its range, equivalence 1/0 after
//! its swap check, the share of assertions met). A failed or unparseable
//! judgment fails the item (retryable), never a 0. The calls are stored as the
//! judgment of the conversation once it is stored, under the judge's config
//! hash, so a later judging job with the same judge reuses them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::config::EndpointConfig;
use crate::judge::{resolved_persona, run as run_judge, Judge, JudgeInputs, JudgeStatus, Mode};
use crate::llm::{ChatModel, Usage};
use crate::persona::{Persona, Scenario};
use crate::store::{NewJudgment, StoredConversation};
use crate::verify::{Component, ComponentScore};

use super::super::judge_calls::from_call;

/// A judge a reward may name, with what its calls are cached by and the
/// model it calls.
struct RewardJudge {
    judge: Judge,
    hash: String,
    model: Arc<dyn ChatModel>,
}

/// The job's judges, ready to score episodes.
#[derive(Default)]
pub struct RewardJudges {
    judges: HashMap<String, RewardJudge>,
}

/// Why a reward judge gave no component; the item fails with `class`.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeRewardError {
    pub class: &'static str,
    pub message: String,
}

/// The components judged, the judgments to store with the conversation
/// (`conversation_a` is set once it has an id), and the judges' usage.
#[derive(Debug, Default)]
pub struct Judged {
    pub parts: Vec<(Component, ComponentScore)>,
    pub judgments: Vec<NewJudgment>,
    pub calls: u64,
    pub usage: Usage,
    pub latency_ms: u64,
}

impl RewardJudges {
    /// Every judge whose endpoint is connected; its hash is computed with the
    /// model its endpoint names, as a judging job of this job computes it.
    pub fn new(
        judges: &[Judge],
        endpoints: &BTreeMap<String, EndpointConfig>,
        models: &HashMap<String, Arc<dyn ChatModel>>,
    ) -> RewardJudges {
        let judges = judges
            .iter()
            .filter_map(|judge| {
                let model = models.get(&judge.endpoint)?.clone();
                let model_name = endpoints
                    .get(&judge.endpoint)
                    .map_or("", |e| e.settings.model.as_str());
                Some((
                    judge.name.clone(),
                    RewardJudge {
                        hash: judge.config_hash(model_name),
                        judge: judge.clone(),
                        model,
                    },
                ))
            })
            .collect();
        RewardJudges { judges }
    }

    /// Judge `conversation` (not yet stored) with every judge `scenario`'s
    /// reward basis names, one after the other.
    pub async fn judge(
        &self,
        job_id: i64,
        conversation: &StoredConversation,
        scenario: &Scenario,
        persona: &Persona,
    ) -> Result<Judged, JudgeRewardError> {
        let mut judged = Judged::default();
        let persona = resolved_persona(persona, conversation);
        let domain_policy = conversation
            .messages
            .iter()
            .find(|m| m.role == "system")
            .map(|m| m.content.as_str());
        for component in scenario.evaluation.reward_basis.iter() {
            let Some(name) = component.judge_name() else {
                continue;
            };
            let Some(reward) = self.judges.get(name) else {
                return Err(JudgeRewardError {
                    class: "config",
                    message: format!(
                        "reward component '{component}' names judge '{name}', which the job \
                         does not define or whose endpoint is not connected"
                    ),
                });
            };
            let mut inputs = JudgeInputs::new(conversation);
            inputs.scenario = Some(scenario);
            inputs.persona = Some(&persona);
            inputs.domain_policy = domain_policy;
            let ran = run_judge(&reward.judge, reward.model.as_ref(), &inputs, &[])
                .await
                .map_err(|e| JudgeRewardError {
                    class: "judge_input",
                    message: e.to_string(),
                })?;
            for call in &ran.made {
                judged.calls += 1;
                judged.usage.prompt_tokens += call.usage.prompt_tokens;
                judged.usage.completion_tokens += call.usage.completion_tokens;
                judged.latency_ms += call.latency_ms;
            }
            let outcome = &ran.outcome;
            let reason = || outcome.reason.clone().unwrap_or_default();
            let score = match outcome.status {
                JudgeStatus::Ok => outcome.score(),
                JudgeStatus::Unparseable => {
                    return Err(JudgeRewardError {
                        class: "unparseable",
                        message: format!("judge '{name}' gave no verdict: {}", reason()),
                    })
                }
                JudgeStatus::Failed => {
                    return Err(JudgeRewardError {
                        class: "judge_call",
                        message: format!("judge '{name}' failed: {}", reason()),
                    })
                }
            };
            let Some(raw) = score else {
                return Err(JudgeRewardError {
                    class: "judge_input",
                    message: format!(
                        "judge '{name}' ({} mode) gives no score a reward can use",
                        reward.judge.mode.as_str()
                    ),
                });
            };
            judged.parts.push((
                component.clone(),
                component_score(&reward.judge, raw, outcome.consistent),
            ));
            judged.judgments.push(NewJudgment {
                job_id,
                judge_name: name.to_string(),
                judge_hash: reward.hash.clone(),
                conversation_a: conversation.conversation.id,
                conversation_b: None,
                status: outcome.status.as_str().to_string(),
                verdict: outcome
                    .verdict
                    .as_ref()
                    .and_then(|v| serde_json::to_value(v).ok()),
                score: Some(raw),
                consistent: outcome.consistent,
                reason: outcome.reason.clone(),
                calls: ran.made.iter().map(from_call).collect(),
            });
        }
        Ok(judged)
    }
}

/// The verdict's score as a reward component: pointwise scores mapped from
/// the judge's range onto [0, 1]; the others are in [0, 1] already.
fn component_score(judge: &Judge, raw: f64, consistent: Option<bool>) -> ComponentScore {
    let score = match (judge.mode, judge.range) {
        (Mode::Pointwise, Some(range)) if range.high > range.low => {
            ((raw - range.low) / (range.high - range.low)).clamp(0.0, 1.0)
        }
        _ => raw.clamp(0.0, 1.0),
    };
    let swap = match consistent {
        Some(true) => ", both orders agree",
        Some(false) => ", the orders disagree",
        None => "",
    };
    let detail = match (judge.mode, judge.range) {
        (Mode::Pointwise, Some(range)) => {
            format!("judge '{}': {raw} on {range}{swap}", judge.name)
        }
        (Mode::Equivalence, _) => format!(
            "judge '{}': {}{swap}",
            judge.name,
            if raw >= 1.0 {
                "equivalent"
            } else {
                "not equivalent"
            }
        ),
        _ => format!("judge '{}': {raw}{swap}", judge.name),
    };
    ComponentScore { score, detail }
}
