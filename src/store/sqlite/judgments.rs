//! Judgments with the judge calls they were made of, and the conversation
//! keys that match two jobs' conversations for pairwise judging.
//!
//! Conversation B is NULL for a judgment of one conversation; the keys go by
//! `COALESCE(conversation_b, 0)` (see `migrations/sqlite/0002_judgments.sql`),
//! and so do the lookups, which then use those unique indexes.

use sqlx::sqlite::SqlitePool;
use sqlx::{Row, Sqlite, Transaction};

use super::decode::{self, conversation_key_columns, judge_call_columns, judgment_columns};
use super::BEGIN_WRITE;
use crate::store::{
    now_ms, ConversationKey, JudgeCallRow, JudgmentRow, NewJudgeCall, NewJudgment, StoreError,
};

/// Store the judgment and its calls in one transaction, each replacing the
/// row with its key. Returns the judgment's id (kept when it is replaced).
pub(super) async fn save(writer: &SqlitePool, judgment: &NewJudgment) -> Result<i64, StoreError> {
    let now = now_ms();
    let mut tx = writer.begin_with(BEGIN_WRITE).await?;
    for call in &judgment.calls {
        upsert_call(&mut tx, judgment, call, now).await?;
    }
    let row = sqlx::query(
        "INSERT INTO judgments (job_id, judge_name, judge_hash, conversation_a, conversation_b, \
         status, verdict, score, consistent, reason, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
         ON CONFLICT (conversation_a, judge_name, judge_hash, COALESCE(conversation_b, 0)) \
         DO UPDATE SET job_id = excluded.job_id, status = excluded.status, \
         verdict = excluded.verdict, score = excluded.score, \
         consistent = excluded.consistent, reason = excluded.reason, \
         updated_at = excluded.updated_at \
         RETURNING id",
    )
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
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    let id: i64 = row.try_get("id")?;
    tx.commit().await?;
    Ok(id)
}

async fn upsert_call(
    tx: &mut Transaction<'static, Sqlite>,
    judgment: &NewJudgment,
    call: &NewJudgeCall,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO judge_calls (judge_name, judge_hash, conversation_a, conversation_b, ord, \
         sample, prompt_hash, model, raw_output, parsed, status, error, prompt_tokens, \
         completion_tokens, latency_ms, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
         ON CONFLICT (conversation_a, judge_hash, COALESCE(conversation_b, 0), ord, sample) \
         DO UPDATE SET judge_name = excluded.judge_name, prompt_hash = excluded.prompt_hash, \
         model = excluded.model, raw_output = excluded.raw_output, parsed = excluded.parsed, \
         status = excluded.status, error = excluded.error, \
         prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens, \
         latency_ms = excluded.latency_ms, created_at = excluded.created_at",
    )
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
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub(super) async fn find(
    reader: &SqlitePool,
    judge_hash: &str,
    a: i64,
    b: Option<i64>,
) -> Result<Option<JudgmentRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judgment_columns!(),
        " FROM judgments \
         WHERE conversation_a = ? AND judge_hash = ? \
         AND COALESCE(conversation_b, 0) = COALESCE(?, 0)"
    ))
    .bind(a)
    .bind(judge_hash)
    .bind(b)
    .fetch_optional(reader)
    .await?
    .as_ref()
    .map(decode::judgment)
    .transpose()
}

pub(super) async fn calls(
    reader: &SqlitePool,
    judge_hash: &str,
    a: i64,
    b: Option<i64>,
) -> Result<Vec<JudgeCallRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judge_call_columns!(),
        " FROM judge_calls \
         WHERE conversation_a = ? AND judge_hash = ? \
         AND COALESCE(conversation_b, 0) = COALESCE(?, 0) \
         ORDER BY ord, sample"
    ))
    .bind(a)
    .bind(judge_hash)
    .bind(b)
    .fetch_all(reader)
    .await?
    .iter()
    .map(decode::judge_call)
    .collect()
}

pub(super) async fn of_job(
    reader: &SqlitePool,
    job_id: i64,
) -> Result<Vec<JudgmentRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judgment_columns!(),
        " FROM judgments \
         WHERE conversation_a IN (SELECT id FROM conversations WHERE job_id = ?) \
         ORDER BY id"
    ))
    .bind(job_id)
    .fetch_all(reader)
    .await?
    .iter()
    .map(decode::judgment)
    .collect()
}

/// Every call is stored with its judgment, under the same conversation A, so
/// the calls behind a job's judgments are the calls of its conversations.
pub(super) async fn calls_of_job(
    reader: &SqlitePool,
    job_id: i64,
) -> Result<Vec<JudgeCallRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judge_call_columns!(),
        " FROM judge_calls \
         WHERE conversation_a IN (SELECT id FROM conversations WHERE job_id = ?) \
         ORDER BY id"
    ))
    .bind(job_id)
    .fetch_all(reader)
    .await?
    .iter()
    .map(decode::judge_call)
    .collect()
}

pub(super) async fn get(reader: &SqlitePool, id: i64) -> Result<Option<JudgmentRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judgment_columns!(),
        " FROM judgments WHERE id = ?"
    ))
    .bind(id)
    .fetch_optional(reader)
    .await?
    .as_ref()
    .map(decode::judgment)
    .transpose()
}

pub(super) async fn of_conversation(
    reader: &SqlitePool,
    id: i64,
) -> Result<Vec<JudgmentRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judgment_columns!(),
        " FROM judgments WHERE conversation_a = ? OR conversation_b = ? ORDER BY id"
    ))
    .bind(id)
    .bind(id)
    .fetch_all(reader)
    .await?
    .iter()
    .map(decode::judgment)
    .collect()
}

pub(super) async fn made_by(
    reader: &SqlitePool,
    job_id: i64,
    after: i64,
    limit: u32,
) -> Result<Vec<JudgmentRow>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        judgment_columns!(),
        " FROM judgments WHERE job_id = ? AND id > ? ORDER BY id LIMIT ?"
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
    reader: &SqlitePool,
    job_id: i64,
) -> Result<Vec<ConversationKey>, StoreError> {
    sqlx::query(concat!(
        "SELECT ",
        conversation_key_columns!(),
        " FROM conversations WHERE job_id = ? ORDER BY id"
    ))
    .bind(job_id)
    .fetch_all(reader)
    .await?
    .iter()
    .map(decode::conversation_key)
    .collect()
}
