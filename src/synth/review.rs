//! What the review committee says about a blueprint: each reviewer's
//! verdict and the committee's decision. Types only, read by the committee
//! that makes them ([`super::committee`]), the vote that counts them
//! ([`super::vote`]) and the proposals that store them.

use serde::{Deserialize, Serialize};

use crate::config::synth::committee::CommitteeRule;
use crate::judge::JudgeStatus;
use crate::llm::Usage;

/// What one reviewer said about a blueprint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewerVerdict {
    pub name: String,
    pub status: JudgeStatus,
    /// The score (the mean of the judge's samples); present when `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Whether the score reaches the committee's `pass_score`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// The reviewer's written reasons: its output, every sample's in order.
    pub reasons: String,
    /// Why the status is not `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub usage: Usage,
}

/// The committee's decision on one blueprint and what each reviewer said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Review {
    pub accepted: bool,
    pub rule: CommitteeRule,
    /// `majority`: the share of readable verdicts that pass; `mean`: the mean score.
    pub figure: f64,
    pub reviewers: Vec<ReviewerVerdict>,
}

impl Review {
    /// The reviewers' tokens together.
    pub fn usage(&self) -> Usage {
        self.reviewers
            .iter()
            .fold(Usage::default(), |sum, r| Usage {
                prompt_tokens: sum.prompt_tokens + r.usage.prompt_tokens,
                completion_tokens: sum.completion_tokens + r.usage.completion_tokens,
            })
    }
}
