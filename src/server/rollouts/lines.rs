//! The lines of a `/v1/rollouts` stream, one JSON object each, told apart
//! by `type`: `job` first, then a `rollout` per finished rollout (or an
//! `error` per failed one), a `group` as soon as a group's k rollouts are
//! all finished, a `progress` while nothing else is written, and `summary`
//! last. docs/rollouts.md is the contract.

use serde::Serialize;
use serde_json::Value;

use crate::store::{ItemRow, MessageRow, StoredConversation, UsageRow};
use crate::token_ids::TokenIds;

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line<'a> {
    Job {
        job_id: i64,
        name: &'a str,
        k: u32,
        groups: usize,
        rollouts: u64,
    },
    Rollout(Box<Rollout<'a>>),
    Error(Failure),
    Group(GroupLine),
    Progress {
        job_id: i64,
        rollouts: u64,
        failed: u64,
        elapsed_secs: f64,
    },
    Summary(Summary),
}

impl Line<'_> {
    /// The line, newline included.
    pub fn text(&self) -> String {
        let mut text = serde_json::to_string(self).unwrap_or_else(|e| {
            // Every field is a plain value or JSON read from the store.
            serde_json::json!({"type": "error", "error": format!("a line could not be written: {e}")})
                .to_string()
        });
        text.push('\n');
        text
    }
}

/// A group's id: its job and scenario, `JOB:SCENARIO`, as exports write
/// `group_id`: the same rollouts make the same group wherever they are read.
pub fn group_id(job_id: i64, scenario: &str) -> String {
    format!("{job_id}:{scenario}")
}

/// One finished rollout as stored.
#[derive(Debug, Serialize)]
pub struct Rollout<'a> {
    pub job_id: i64,
    pub conversation_id: i64,
    /// The group: `JOB:SCENARIO`, as exports write `group_id`.
    pub group_id: String,
    /// The scenario the rollout played.
    pub scenario: &'a str,
    pub sample: i64,
    pub persona: &'a str,
    pub item_key: &'a str,
    pub seed: i64,
    /// `null` when the conversation was not scored (e.g. the simulated user broke it).
    pub reward: Option<f64>,
    pub reward_breakdown: &'a Value,
    pub termination: &'a str,
    pub messages: Vec<MessageLine<'a>>,
    pub tools: &'a Value,
    pub usage: Vec<UsageLine<'a>>,
}

/// A message, with whether a trainer may train on its tokens: only what the
/// policy wrote (its answers and tool calls); the simulated user's turns,
/// the system prompt and tool results are not.
#[derive(Debug, Serialize)]
pub struct MessageLine<'a> {
    pub role: &'a str,
    pub author: &'a str,
    pub content: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<&'a str>,
    pub trainable: bool,
    /// The policy's `prompt_token_ids`, `generation_token_ids` and
    /// `generation_log_probs` on the message its generation ended with, as
    /// stored, when the policy server returned them; nothing otherwise.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<&'a TokenIds>,
}

#[derive(Debug, Serialize)]
pub struct UsageLine<'a> {
    pub role: &'a str,
    pub calls: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
}

impl<'a> Rollout<'a> {
    /// `tokens`: the conversation's stored token lists, by message idx.
    pub fn of(stored: &'a StoredConversation, tokens: &'a [(i64, TokenIds)]) -> Rollout<'a> {
        let c = &stored.conversation;
        Rollout {
            job_id: c.job_id,
            conversation_id: c.id,
            group_id: group_id(c.job_id, &c.scenario_id),
            scenario: &c.scenario_id,
            sample: c.sample,
            persona: &c.persona_id,
            item_key: &c.item_key,
            seed: c.seed,
            reward: c.reward,
            reward_breakdown: &c.reward_breakdown,
            termination: &c.termination,
            messages: stored
                .messages
                .iter()
                .map(|m| MessageLine::of(m, tokens))
                .collect(),
            tools: &c.tools,
            usage: stored.usage.iter().map(UsageLine::of).collect(),
        }
    }
}

impl<'a> MessageLine<'a> {
    fn of(m: &'a MessageRow, tokens: &'a [(i64, TokenIds)]) -> MessageLine<'a> {
        MessageLine {
            tokens: tokens.iter().find(|(idx, _)| *idx == m.idx).map(|(_, t)| t),
            role: &m.role,
            author: &m.author,
            content: &m.content,
            tool_calls: m.tool_calls.as_ref(),
            tool_call_id: m.tool_call_id.as_deref(),
            trainable: m.author == crate::sim::transcript::Author::Policy.as_str(),
        }
    }
}

impl<'a> UsageLine<'a> {
    fn of(u: &'a UsageRow) -> UsageLine<'a> {
        UsageLine {
            role: &u.role,
            calls: u.calls,
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
        }
    }
}

/// A rollout that failed (a model call that failed after its retries, the
/// environment broke): no reward, and it is left out of its group's statistics.
#[derive(Debug, Serialize)]
pub struct Failure {
    pub job_id: i64,
    pub group_id: String,
    pub scenario: String,
    pub sample: i64,
    pub item_key: String,
    /// The failure's class: `timeout`, `server_error`, `env_error`, ...
    pub class: String,
    pub message: String,
}

impl Failure {
    pub fn of(item: &ItemRow) -> Failure {
        let error = item
            .last_error
            .as_deref()
            .unwrap_or("unknown: no error was stored");
        let (class, message) = error.split_once(": ").unwrap_or(("unknown", error));
        Failure {
            job_id: item.job_id,
            group_id: group_id(item.job_id, &item.scenario_id),
            scenario: item.scenario_id.clone(),
            sample: item.sample,
            item_key: item.key.clone(),
            class: class.to_string(),
            message: message.to_string(),
        }
    }
}

/// A group whose k rollouts are all finished.
#[derive(Debug, Serialize)]
pub struct GroupLine {
    pub job_id: i64,
    pub group_id: String,
    pub scenario: String,
    /// k: the rollouts asked for.
    pub size: usize,
    /// Rollouts with a reward, over which the statistics are taken.
    pub scored: usize,
    /// Rollouts stored without a reward.
    pub unscored: usize,
    pub failed: usize,
    /// `null` when no rollout of the group has a reward.
    pub reward_mean: Option<f64>,
    /// The population standard deviation.
    pub reward_std: Option<f64>,
    /// Every reward equal: no learning signal.
    pub flat: bool,
    pub advantages: Vec<Advantage>,
}

/// A scored rollout's advantage in its group.
#[derive(Debug, Serialize)]
pub struct Advantage {
    pub conversation_id: i64,
    pub sample: i64,
    pub reward: f64,
    /// Reward minus the group's mean.
    pub advantage: f64,
    /// The same divided by the group's standard deviation (0 in a flat group).
    pub normalized_advantage: f64,
}

#[derive(Debug, Serialize)]
pub struct Summary {
    pub job_id: i64,
    /// The job's status: `done`, `cancelled` or `failed`.
    pub status: String,
    pub rollouts: u64,
    pub failed: u64,
    /// Groups whose k rollouts all finished, and of those the flat ones.
    pub groups: usize,
    pub flat_groups: usize,
    /// Groups left unfinished (the job was cancelled or stopped).
    pub open_groups: usize,
    /// Model calls of the streamed rollouts, every role.
    pub model_calls: i64,
    pub elapsed_secs: f64,
}
