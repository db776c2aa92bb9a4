//! Judgments with the judge calls they were made of, and the conversation
//! keys that match two jobs' conversations for pairwise judging.
//!
//! Conversation B is NULL for a judgment of one conversation; the keys go by
//! `COALESCE(conversation_b, 0)` (see `migrations/postgres/0002_judgments.sql`),
//! and so do the lookups, which then use those unique indexes. Text is ordered
//! with `COLLATE "C"`, as SQLite orders it.

use sqlx::postgres::PgPool;
use sqlx::{Postgres, Row, Transaction};

use super::decode::{self, conversation_key_columns, judge_call_columns, judgment_columns};
use super::server_now_ms;
use crate::store::{
    ConversationKey, JudgeCallRow, JudgmentRow, NewJudgeCall, NewJudgment, StoreError,
};

/// Store the judgment and its calls in one transaction, each replacing the
/// row with its key. Returns the judgment's id (kept when it is replaced).
///
/// The calls are written in key order, then the judgment: two workers saving
/// the same judgment at once lock its rows in the same order, so one waits
/// for the other instead of deadlocking.
pub(super) async fn save(pool: &PgPool, judgment: &NewJudgment) -> Result<i64, StoreError> {
    let mut calls: Vec<&NewJudgeCall> = judgment.calls.iter().collect();
    calls.sort_by_key(|call| (call.order.as_str(), call.sample));
    let mut tx = pool.begin().await?;
    for call in calls {
        upsert_call(&mut tx, judgment, call).await?;
    }
    let row = sqlx::query(concat!(
        "INSERT INTO judgments (job_id, judge_name, judge_hash, conversation_a, conversation_b, \
         status, verdict, score, consistent, reason, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, ",
        server_now_ms!(),
        ") ON CONFLICT (conversation_a, judge_name, judge_hash, COALESCE(conversation_b, 0)) \
         DO UPDATE SET job_id = excluded.job_id, status = excluded.status, \
         verdict = excluded.verdict, score = excluded.score, \
         consistent = excluded.consistent, reason = excluded.reason, \
         updated_at = excluded.updated_at \
         RETURNING id"
    ))
    .bind(judgment.job_id)
    .bind(judgment.judge_name.as_str())
    .bind(judgment.judge_hash.as_str())
    .bind(judgment.conversation_a)
    .bind(judgment.conversation_b)
    .bind(judgment.status.as_str())
    .bind(judgment.verdict.as_ref().map(|verdict| verdict.to_string()))
    .bind(judgment.score)
    .bind(judgment.consistent)
    .bind(judgment.reason.as_deref())
    .fetch_one(&mut *tx)
    .await?;
    let id: i64 = row.try_get("id")?;
    tx.commit().await?;
    Ok(id)
}

async fn upsert_call(
    tx: &mut Transaction<'static, Postgres>,
    judgment: &NewJudgment,
    call: &NewJudgeCall,
) -> Result<(), StoreError> {
    sqlx::query(concat!(
        "INSERT INTO judge_calls (judge_name, judge_hash, conversation_a, conversation_b, ord, \
         sample, prompt_hash, model, raw_output, parsed, status, error, prompt_tokens, \
         completion_tokens, latency_ms, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, ",
        server_now_ms!(),
        ") ON CONFLICT (conversation_a, judge_hash, COALESCE(conversation_b, 0), ord, sample) \
         DO UPDATE SET judge_name = excluded.judge_name, prompt_hash = excluded.prompt_hash, \
         model = excluded.model, raw_output = excluded.raw_output, parsed = excluded.parsed, \
         status = excluded.status, error = excluded.error, \
         prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens, \
         latency_ms = excluded.latency_ms, created_at = excluded.created_at"
    ))
    .bind(judgment.judge_name.as_str())
    .bind(judgment.judge_hash.as_str())
    .bind(judgment.conversation_a)
    .bind(judgment.conversation_b)
    .bind(call.order.as_str())
    .bind(call.sample)
    .bind(call.prompt_hash.as_str())
    .bind(call.model.as_str())
    .bind(call.raw_output.as_str())
    .bind(call.parsed.as_ref().map(|parsed| parsed.to_string()))
    .bind(call.status.as_str())
    .bind(call.error.as_deref())
    .bind(call.prompt_tokens)
    .bind(call.completion_tokens)
    .bind(call.latency_ms)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub(super) async fn find(
    pool: &PgPool,
    judge_hash: &str,
    a: i64,
    b: Option<i64>,
) -> Result<Option<JudgmentRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judgment_columns!(),
        " FROM judgments \
         WHERE conversation_a = $1 AND judge_hash = $2 \
         AND COALESCE(conversation_b, 0) = COALESCE($3::BIGINT, 0)"
    ))
    .bind(a)
    .bind(judge_hash)
    .bind(b)
    .fetch_optional(pool)
    .await?
    .as_ref()
    .map(decode::judgment)
    .transpose()
}

pub(super) async fn calls(
    pool: &PgPool,
    judge_hash: &str,
    a: i64,
    b: Option<i64>,
) -> Result<Vec<JudgeCallRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judge_call_columns!(),
        " FROM judge_calls \
         WHERE conversation_a = $1 AND judge_hash = $2 \
         AND COALESCE(conversation_b, 0) = COALESCE($3::BIGINT, 0) \
         ORDER BY ord COLLATE \"C\", sample"
    ))
    .bind(a)
    .bind(judge_hash)
    .bind(b)
    .fetch_all(pool)
    .await?
    .iter()
    .map(decode::judge_call)
    .collect()
}

pub(super) async fn of_job(pool: &PgPool, job_id: i64) -> Result<Vec<JudgmentRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judgment_columns!(),
        " FROM judgments \
         WHERE conversation_a IN (SELECT id FROM conversations WHERE job_id = $1) \
         ORDER BY id"
    ))
    .bind(job_id)
    .fetch_all(pool)
    .await?
    .iter()
    .map(decode::judgment)
    .collect()
}

/// Every call is stored with its judgment, under the same conversation A, so
/// the calls behind a job's judgments are the calls of its conversations.
pub(super) async fn calls_of_job(
    pool: &PgPool,
    job_id: i64,
) -> Result<Vec<JudgeCallRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judge_call_columns!(),
        " FROM judge_calls \
         WHERE conversation_a IN (SELECT id FROM conversations WHERE job_id = $1) \
         ORDER BY id"
    ))
    .bind(job_id)
    .fetch_all(pool)
    .await?
    .iter()
    .map(decode::judge_call)
    .collect()
}

pub(super) async fn get(reader: &PgPool, id: i64) -> Result<Option<JudgmentRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judgment_columns!(),
        " FROM judgments WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(reader)
    .await?
    .as_ref()
    .map(decode::judgment)
    .transpose()
}

pub(super) async fn of_conversation(
    reader: &PgPool,
    id: i64,
) -> Result<Vec<JudgmentRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judgment_columns!(),
        " FROM judgments WHERE conversation_a = $1 OR conversation_b = $1 ORDER BY id"
    ))
    .bind(id)
    .fetch_all(reader)
    .await?
    .iter()
    .map(decode::judgment)
    .collect()
}

pub(super) async fn made_by(
    reader: &PgPool,
    job_id: i64,
    after: i64,
    limit: u32,
) -> Result<Vec<JudgmentRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judgment_columns!(),
        " FROM judgments WHERE job_id = $1 AND id > $2 ORDER BY id LIMIT $3"
    ))
    .bind(job_id)
    .bind(after)
    .bind(i64::from(limit))
    .fetch_all(reader)
    .await?
    .iter()
    .map(decode::judgment)
    .collect()
}

pub(super) async fn conversation_keys(
    pool: &PgPool,
    job_id: i64,
) -> Result<Vec<ConversationKey>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        conversation_key_columns!(),
        " FROM conversations WHERE job_id = $1 ORDER BY id"
    ))
    .bind(job_id)
    .fetch_all(pool)
    .await?
    .iter()
    .map(decode::conversation_key)
    .collect()
}
