//! Stored rows back into row types, as in `sqlite/decode.rs` (the schemas
//! agree column for column, JSON included, which is TEXT in both). Anything
//! the schema cannot express (an unknown status word, text that is not JSON)
//! is `StoreError::Corrupt`, naming the table, the row and the column.

use serde_json::Value;
use sqlx::postgres::PgRow;
use sqlx::Row;

use crate::store::{
    ConversationRow, ItemRow, ItemStatus, JobRow, JobStatus, MessageRow, StoreError, UsageRow,
};

/// The columns [`job`] reads, in `SELECT` / `RETURNING` order.
macro_rules! job_columns {
    () => {
        "id, name, kind, config_snapshot, config_hash, status, created_at, updated_at"
    };
}
pub(super) use job_columns;

/// The columns [`item`] reads.
macro_rules! item_columns {
    () => {
        "id, job_id, key, scenario_id, persona_id, sample, seed, status, attempts, \
         lease_owner, lease_expires_at, last_error"
    };
}
pub(super) use item_columns;

/// The columns [`conversation`] reads.
macro_rules! conversation_columns {
    () => {
        "id, job_id, item_id, item_key, scenario_id, persona_id, sample, seed, policy_model, \
         user_model, termination, reward, reward_breakdown, metadata, tools, started_at, \
         finished_at"
    };
}
pub(super) use conversation_columns;

/// The columns [`message`] reads (also the messages INSERT column list).
macro_rules! message_columns {
    () => {
        "conversation_id, idx, role, content, tool_calls, tool_call_id, author, prompt_tokens, \
         completion_tokens, latency_ms"
    };
}
pub(super) use message_columns;

/// The columns [`usage`] reads (also the usage INSERT column list).
macro_rules! usage_columns {
    () => {
        "conversation_id, role, calls, prompt_tokens, completion_tokens, latency_ms"
    };
}
pub(super) use usage_columns;

pub(super) fn job(row: &PgRow) -> Result<JobRow, StoreError> {
    let id: i64 = row.try_get("id")?;
    let status: String = row.try_get("status")?;
    Ok(JobRow {
        id,
        name: row.try_get("name")?,
        kind: row.try_get("kind")?,
        config_snapshot: row.try_get("config_snapshot")?,
        config_hash: row.try_get("config_hash")?,
        status: JobStatus::parse(&status).ok_or_else(|| {
            unknown_status(
                "jobs",
                id,
                &status,
                "pending, running, done, failed, cancelled",
            )
        })?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub(super) fn item(row: &PgRow) -> Result<ItemRow, StoreError> {
    let id: i64 = row.try_get("id")?;
    let status: String = row.try_get("status")?;
    Ok(ItemRow {
        id,
        job_id: row.try_get("job_id")?,
        key: row.try_get("key")?,
        scenario_id: row.try_get("scenario_id")?,
        persona_id: row.try_get("persona_id")?,
        sample: row.try_get("sample")?,
        seed: row.try_get("seed")?,
        status: item_status(id, &status)?,
        attempts: row.try_get("attempts")?,
        lease_owner: row.try_get("lease_owner")?,
        lease_expires_at: row.try_get("lease_expires_at")?,
        last_error: row.try_get("last_error")?,
    })
}

pub(super) fn item_status(item_id: i64, status: &str) -> Result<ItemStatus, StoreError> {
    ItemStatus::parse(status)
        .ok_or_else(|| unknown_status("items", item_id, status, "pending, leased, done, failed"))
}

pub(super) fn conversation(row: &PgRow) -> Result<ConversationRow, StoreError> {
    let id: i64 = row.try_get("id")?;
    let json = |column: &'static str| -> Result<Value, StoreError> {
        let text: String = row.try_get(column)?;
        parse_json("conversations", &id, column, &text)
    };
    Ok(ConversationRow {
        id,
        job_id: row.try_get("job_id")?,
        item_id: row.try_get("item_id")?,
        item_key: row.try_get("item_key")?,
        scenario_id: row.try_get("scenario_id")?,
        persona_id: row.try_get("persona_id")?,
        sample: row.try_get("sample")?,
        seed: row.try_get("seed")?,
        policy_model: row.try_get("policy_model")?,
        user_model: row.try_get("user_model")?,
        termination: row.try_get("termination")?,
        reward: row.try_get("reward")?,
        reward_breakdown: json("reward_breakdown")?,
        metadata: json("metadata")?,
        tools: json("tools")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
    })
}

/// A `messages` row, with the conversation it belongs to.
pub(super) fn message(row: &PgRow) -> Result<(i64, MessageRow), StoreError> {
    let conversation_id: i64 = row.try_get("conversation_id")?;
    let idx: i64 = row.try_get("idx")?;
    let tool_calls: Option<String> = row.try_get("tool_calls")?;
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
            role: row.try_get("role")?,
            content: row.try_get("content")?,
            tool_calls,
            tool_call_id: row.try_get("tool_call_id")?,
            author: row.try_get("author")?,
            prompt_tokens: row.try_get("prompt_tokens")?,
            completion_tokens: row.try_get("completion_tokens")?,
            latency_ms: row.try_get("latency_ms")?,
        },
    ))
}

/// A `conversation_usage` row, with the conversation it belongs to (or a sum
/// per role, selected with `0::BIGINT AS conversation_id`).
pub(super) fn usage(row: &PgRow) -> Result<(i64, UsageRow), StoreError> {
    Ok((
        row.try_get("conversation_id")?,
        UsageRow {
            role: row.try_get("role")?,
            calls: row.try_get("calls")?,
            prompt_tokens: row.try_get("prompt_tokens")?,
            completion_tokens: row.try_get("completion_tokens")?,
            latency_ms: row.try_get("latency_ms")?,
        },
    ))
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
