//! Stored rows back into row types, for both backends: their schemas agree
//! column for column (JSON is TEXT in both), so one decoder reads either through
//! [`StoredRow`]. Anything the schema cannot express (an unknown status word,
//! text that is not JSON) is `StoreError::Corrupt`, naming the table, the row
//! and the column.

use std::collections::HashMap;

use serde_json::Value;
use sqlx::Row;

use super::{
    ConversationKey, ConversationRow, ItemRow, ItemStatus, JobKind, JobRow, JobStatus,
    JudgeCallRow, JudgmentRow, MessageRow, NewJudgeCall, NewProposal, ProposalRow, ProposalStatus,
    StoreError, StoredConversation, UsageRow,
};

/// One column of a stored row, read as the types the schema uses.
pub(crate) trait StoredRow {
    fn int(&self, column: &str) -> Result<i64, sqlx::Error>;
    fn opt_int(&self, column: &str) -> Result<Option<i64>, sqlx::Error>;
    fn opt_float(&self, column: &str) -> Result<Option<f64>, sqlx::Error>;
    /// BOOLEAN: 0 / 1 in SQLite, a boolean in Postgres.
    fn opt_bool(&self, column: &str) -> Result<Option<bool>, sqlx::Error>;
    fn text(&self, column: &str) -> Result<String, sqlx::Error>;
    fn opt_text(&self, column: &str) -> Result<Option<String>, sqlx::Error>;
    /// BLOB in SQLite, BYTEA in Postgres.
    fn bytes(&self, column: &str) -> Result<Vec<u8>, sqlx::Error>;
}

macro_rules! stored_row {
    ($row:ty) => {
        impl StoredRow for $row {
            fn int(&self, column: &str) -> Result<i64, sqlx::Error> {
                self.try_get(column)
            }
            fn opt_int(&self, column: &str) -> Result<Option<i64>, sqlx::Error> {
                self.try_get(column)
            }
            fn opt_float(&self, column: &str) -> Result<Option<f64>, sqlx::Error> {
                self.try_get(column)
            }
            fn opt_bool(&self, column: &str) -> Result<Option<bool>, sqlx::Error> {
                self.try_get(column)
            }
            fn text(&self, column: &str) -> Result<String, sqlx::Error> {
                self.try_get(column)
            }
            fn opt_text(&self, column: &str) -> Result<Option<String>, sqlx::Error> {
                self.try_get(column)
            }
            fn bytes(&self, column: &str) -> Result<Vec<u8>, sqlx::Error> {
                self.try_get(column)
            }
        }
    };
}
stored_row!(sqlx::sqlite::SqliteRow);
stored_row!(sqlx::postgres::PgRow);

/// The columns [`job`] reads, in `SELECT` / `RETURNING` order.
macro_rules! job_columns {
    () => {
        "id, name, kind, config_snapshot, config_hash, status, created_at, updated_at"
    };
}
pub(crate) use job_columns;

/// The columns [`item`] reads.
macro_rules! item_columns {
    () => {
        "id, job_id, key, scenario_id, persona_id, sample, seed, status, attempts, \
         lease_owner, lease_expires_at, last_error"
    };
}
pub(crate) use item_columns;

/// The columns [`conversation`] reads.
macro_rules! conversation_columns {
    () => {
        "id, job_id, item_id, item_key, scenario_id, persona_id, sample, seed, policy_model, \
         user_model, termination, reward, reward_breakdown, metadata, tools, started_at, \
         finished_at"
    };
}
pub(crate) use conversation_columns;

/// The columns [`message`] reads (also the messages INSERT column list).
macro_rules! message_columns {
    () => {
        "conversation_id, idx, role, content, tool_calls, tool_call_id, author, prompt_tokens, \
         completion_tokens, latency_ms"
    };
}
pub(crate) use message_columns;

/// The columns [`usage`] reads (also the usage INSERT column list).
macro_rules! usage_columns {
    () => {
        "conversation_id, role, calls, prompt_tokens, completion_tokens, latency_ms"
    };
}
pub(crate) use usage_columns;

/// The columns [`judge_call`] reads.
macro_rules! judge_call_columns {
    () => {
        "id, judge_name, judge_hash, conversation_a, conversation_b, ord, sample, prompt_hash, \
         model, raw_output, parsed, status, error, prompt_tokens, completion_tokens, latency_ms, \
         created_at, batch"
    };
}
pub(crate) use judge_call_columns;

/// The columns [`judgment`] reads.
macro_rules! judgment_columns {
    () => {
        "id, job_id, judge_name, judge_hash, conversation_a, conversation_b, status, verdict, \
         score, consistent, reason, updated_at"
    };
}
pub(crate) use judgment_columns;

/// The columns [`conversation_key`] reads, from `conversations`.
macro_rules! conversation_key_columns {
    () => {
        "id, scenario_id, persona_id, sample, reward, termination"
    };
}
pub(crate) use conversation_key_columns;

/// The columns [`proposal`] reads.
macro_rules! proposal_columns {
    () => {
        "id, job_id, item_id, idx, status, stage, reason, brief, scenario, attempts, \
         prompt_tokens, completion_tokens, review_prompt_tokens, review_completion_tokens, \
         latency_ms, created_at"
    };
}
pub(crate) use proposal_columns;

pub(crate) fn proposal(row: &impl StoredRow) -> Result<ProposalRow, StoreError> {
    let id = row.int("id")?;
    let json = |column: &'static str| -> Result<Value, StoreError> {
        parse_json("proposals", &id, column, &row.text(column)?)
    };
    let status = row.text("status")?;
    Ok(ProposalRow {
        id,
        job_id: row.int("job_id")?,
        item_id: row.int("item_id")?,
        proposal: NewProposal {
            index: row.int("idx")?,
            status: ProposalStatus::parse(&status)
                .ok_or_else(|| unknown_status("proposals", id, &status, "valid, rejected"))?,
            stage: row.opt_text("stage")?,
            reason: row.opt_text("reason")?,
            brief: json("brief")?,
            scenario: match row.opt_text("scenario")? {
                Some(text) => Some(parse_json("proposals", &id, "scenario", &text)?),
                None => None,
            },
            attempts: json("attempts")?,
            prompt_tokens: row.int("prompt_tokens")?,
            completion_tokens: row.int("completion_tokens")?,
            review_prompt_tokens: row.int("review_prompt_tokens")?,
            review_completion_tokens: row.int("review_completion_tokens")?,
            latency_ms: row.int("latency_ms")?,
        },
        created_at: row.int("created_at")?,
    })
}

pub(crate) fn job(row: &impl StoredRow) -> Result<JobRow, StoreError> {
    let id = row.int("id")?;
    let status = row.text("status")?;
    let kind = row.text("kind")?;
    Ok(JobRow {
        id,
        name: row.text("name")?,
        kind: JobKind::parse(&kind).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "jobs row {id}, column kind: unknown kind '{kind}' (expected generation, judging or synthesis)"
            ))
        })?,
        config_snapshot: row.text("config_snapshot")?,
        config_hash: row.text("config_hash")?,
        status: JobStatus::parse(&status).ok_or_else(|| {
            unknown_status(
                "jobs",
                id,
                &status,
                "pending, running, done, failed, cancelled",
            )
        })?,
        created_at: row.int("created_at")?,
        updated_at: row.int("updated_at")?,
    })
}

pub(crate) fn item(row: &impl StoredRow) -> Result<ItemRow, StoreError> {
    let id = row.int("id")?;
    let status = row.text("status")?;
    Ok(ItemRow {
        id,
        job_id: row.int("job_id")?,
        key: row.text("key")?,
        scenario_id: row.text("scenario_id")?,
        persona_id: row.text("persona_id")?,
        sample: row.int("sample")?,
        seed: row.int("seed")?,
        status: item_status(id, &status)?,
        attempts: row.int("attempts")?,
        lease_owner: row.opt_text("lease_owner")?,
        lease_expires_at: row.opt_int("lease_expires_at")?,
        last_error: row.opt_text("last_error")?,
    })
}

pub(crate) fn item_status(item_id: i64, status: &str) -> Result<ItemStatus, StoreError> {
    ItemStatus::parse(status)
        .ok_or_else(|| unknown_status("items", item_id, status, "pending, leased, done, failed"))
}

pub(crate) fn conversation(row: &impl StoredRow) -> Result<ConversationRow, StoreError> {
    let id = row.int("id")?;
    let json = |column: &'static str| -> Result<Value, StoreError> {
        let text = row.text(column)?;
        parse_json("conversations", &id, column, &text)
    };
    Ok(ConversationRow {
        id,
        job_id: row.int("job_id")?,
        item_id: row.int("item_id")?,
        item_key: row.text("item_key")?,
        scenario_id: row.text("scenario_id")?,
        persona_id: row.text("persona_id")?,
        sample: row.int("sample")?,
        seed: row.int("seed")?,
        policy_model: row.text("policy_model")?,
        user_model: row.text("user_model")?,
        termination: row.text("termination")?,
        reward: row.opt_float("reward")?,
        reward_breakdown: json("reward_breakdown")?,
        metadata: json("metadata")?,
        tools: json("tools")?,
        started_at: row.int("started_at")?,
        finished_at: row.int("finished_at")?,
        user_checks: match row.opt_text("user_checks")? {
            Some(text) => Some(parse_json("user_checks", &id, "checks", &text)?),
            None => None,
        },
    })
}

/// A `messages` row, with the conversation it belongs to.
pub(crate) fn message(row: &impl StoredRow) -> Result<(i64, MessageRow), StoreError> {
    let conversation_id = row.int("conversation_id")?;
    let idx = row.int("idx")?;
    let tool_calls = row.opt_text("tool_calls")?;
    let tool_calls = match tool_calls {
        None => None,
        Some(text) => {
            let row_name = format!("(conversation_id {conversation_id}, idx {idx})");
            Some(parse_json("messages", &row_name, "tool_calls", &text)?)
        }
    };
    Ok((
        conversation_id,
        MessageRow {
            idx,
            role: row.text("role")?,
            content: row.text("content")?,
            tool_calls,
            tool_call_id: row.opt_text("tool_call_id")?,
            author: row.text("author")?,
            prompt_tokens: row.opt_int("prompt_tokens")?,
            completion_tokens: row.opt_int("completion_tokens")?,
            latency_ms: row.opt_int("latency_ms")?,
        },
    ))
}

/// A `conversation_usage` row, with the conversation it belongs to (or a sum
/// per role, selected with a constant `0` as `conversation_id`).
pub(crate) fn usage(row: &impl StoredRow) -> Result<(i64, UsageRow), StoreError> {
    Ok((
        row.int("conversation_id")?,
        UsageRow {
            role: row.text("role")?,
            calls: row.int("calls")?,
            prompt_tokens: row.int("prompt_tokens")?,
            completion_tokens: row.int("completion_tokens")?,
            latency_ms: row.int("latency_ms")?,
        },
    ))
}

pub(crate) fn judge_call(row: &impl StoredRow) -> Result<JudgeCallRow, StoreError> {
    let id = row.int("id")?;
    Ok(JudgeCallRow {
        id,
        judge_name: row.text("judge_name")?,
        judge_hash: row.text("judge_hash")?,
        conversation_a: row.int("conversation_a")?,
        conversation_b: row.opt_int("conversation_b")?,
        call: NewJudgeCall {
            order: row.text("ord")?,
            sample: row.int("sample")?,
            prompt_hash: row.text("prompt_hash")?,
            model: row.text("model")?,
            raw_output: row.text("raw_output")?,
            parsed: opt_json(row, "judge_calls", id, "parsed")?,
            status: row.text("status")?,
            error: row.opt_text("error")?,
            prompt_tokens: row.int("prompt_tokens")?,
            completion_tokens: row.int("completion_tokens")?,
            latency_ms: row.int("latency_ms")?,
            batch: row.opt_bool("batch")?.unwrap_or(false),
        },
        created_at: row.int("created_at")?,
    })
}

pub(crate) fn judgment(row: &impl StoredRow) -> Result<JudgmentRow, StoreError> {
    let id = row.int("id")?;
    Ok(JudgmentRow {
        id,
        job_id: row.int("job_id")?,
        judge_name: row.text("judge_name")?,
        judge_hash: row.text("judge_hash")?,
        conversation_a: row.int("conversation_a")?,
        conversation_b: row.opt_int("conversation_b")?,
        status: row.text("status")?,
        verdict: opt_json(row, "judgments", id, "verdict")?,
        score: row.opt_float("score")?,
        consistent: row.opt_bool("consistent")?,
        reason: row.opt_text("reason")?,
        updated_at: row.int("updated_at")?,
    })
}

pub(crate) fn conversation_key(row: &impl StoredRow) -> Result<ConversationKey, StoreError> {
    Ok(ConversationKey {
        conversation_id: row.int("id")?,
        scenario_id: row.text("scenario_id")?,
        persona_id: row.text("persona_id")?,
        sample: row.int("sample")?,
        reward: row.opt_float("reward")?,
        termination: row.text("termination")?,
    })
}

/// A nullable JSON column of `table`'s row `id`.
fn opt_json(
    row: &impl StoredRow,
    table: &str,
    id: i64,
    column: &str,
) -> Result<Option<Value>, StoreError> {
    row.opt_text(column)?
        .map(|text| parse_json(table, &id, column, &text))
        .transpose()
}

fn parse_json(
    table: &str,
    row: &dyn std::fmt::Display,
    column: &str,
    text: &str,
) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(|e| {
        StoreError::Corrupt(format!(
            "{table} row {row}, column {column}: not JSON ({e})"
        ))
    })
}

fn unknown_status(table: &str, id: i64, status: &str, expected: &str) -> StoreError {
    StoreError::Corrupt(format!(
        "{table} row {id}, column status: unknown status '{status}' (expected one of {expected})"
    ))
}

/// Conversations (in their order) with their messages and usage, which come
/// ordered by conversation and then by idx / role.
pub(crate) fn assemble<R: StoredRow>(
    conversations: &[R],
    messages: &[R],
    usage: &[R],
) -> Result<Vec<StoredConversation>, StoreError> {
    let mut messages_of: HashMap<i64, Vec<MessageRow>> = HashMap::new();
    for row in messages {
        let (conversation_id, message) = self::message(row)?;
        messages_of
            .entry(conversation_id)
            .or_default()
            .push(message);
    }
    let mut usage_of: HashMap<i64, Vec<UsageRow>> = HashMap::new();
    for row in usage {
        let (conversation_id, usage) = self::usage(row)?;
        usage_of.entry(conversation_id).or_default().push(usage);
    }
    conversations
        .iter()
        .map(|row| {
            let conversation = self::conversation(row)?;
            Ok(StoredConversation {
                messages: messages_of.remove(&conversation.id).unwrap_or_default(),
                usage: usage_of.remove(&conversation.id).unwrap_or_default(),
                conversation,
            })
        })
        .collect()
}
