//! Judgments with the judge calls they were made of, and the conversation
//! keys that match two jobs' conversations for pairwise judging.
//!
//! Conversation B is NULL for a judgment of one conversation; the keys go by
//! `COALESCE(conversation_b, 0)` (see `migrations/*/0002_judgments.sql`), and
//! so do the lookups, which then use those unique indexes.

use super::dialect::Dialect;
use super::runs::{Commit, Runs};
use super::statement::{sql, Param, Sql};
use super::SqlStore;
use crate::store::decode::{
    self, conversation_key_columns, judge_call_columns, judgment_columns, StoredRow,
};
use crate::store::{
    ConversationKey, JudgeCallRow, JudgmentRow, NewJudgeCall, NewJudgment, StoreError,
};

const UPSERT: Sql = sql!(
    "INSERT INTO judgments (job_id, judge_name, judge_hash, conversation_a, conversation_b, \
     status, verdict, score, consistent, reason, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, ",
    NOW,
    ") ON CONFLICT (conversation_a, judge_name, judge_hash, COALESCE(conversation_b, 0)) \
     DO UPDATE SET job_id = excluded.job_id, status = excluded.status, \
     verdict = excluded.verdict, score = excluded.score, \
     consistent = excluded.consistent, reason = excluded.reason, \
     updated_at = excluded.updated_at \
     RETURNING id"
);
const UPSERT_CALL: Sql = sql!(
    "INSERT INTO judge_calls (judge_name, judge_hash, conversation_a, conversation_b, ord, \
     sample, prompt_hash, model, raw_output, parsed, status, error, prompt_tokens, \
     completion_tokens, latency_ms, batch, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, ",
    NOW,
    ") ON CONFLICT (conversation_a, judge_hash, COALESCE(conversation_b, 0), ord, sample) \
     DO UPDATE SET judge_name = excluded.judge_name, prompt_hash = excluded.prompt_hash, \
     model = excluded.model, raw_output = excluded.raw_output, parsed = excluded.parsed, \
     status = excluded.status, error = excluded.error, \
     prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens, \
     latency_ms = excluded.latency_ms, batch = excluded.batch, \
     created_at = excluded.created_at"
);
const BY_KEY: Sql = sql!(
    "SELECT ",
    judgment_columns!(),
    " FROM judgments WHERE conversation_a = $1 AND judge_hash = $2 \
     AND COALESCE(conversation_b, 0) = COALESCE(CAST($3 AS BIGINT), 0)"
);
const CALLS_BY_KEY: Sql = sql!(
    "SELECT ",
    judge_call_columns!(),
    " FROM judge_calls WHERE conversation_a = $1 AND judge_hash = $2 \
     AND COALESCE(conversation_b, 0) = COALESCE(CAST($3 AS BIGINT), 0) ORDER BY ord",
    BYTEWISE,
    ", sample"
);
const OF_JOB: Sql = sql!(
    "SELECT ",
    judgment_columns!(),
    " FROM judgments \
     WHERE conversation_a IN (SELECT id FROM conversations WHERE job_id = $1) ORDER BY id"
);
// Every call is stored with its judgment, under the same conversation A, so
// the calls behind a job's judgments are the calls of its conversations.
const CALLS_OF_JOB: Sql = sql!(
    "SELECT ",
    judge_call_columns!(),
    " FROM judge_calls \
     WHERE conversation_a IN (SELECT id FROM conversations WHERE job_id = $1) ORDER BY id"
);
const JUDGE_MODELS_OF_JOB: Sql = sql!(
    "SELECT DISTINCT judge_name, model FROM judge_calls \
     WHERE conversation_a IN (SELECT id FROM conversations WHERE job_id = $1) \
     ORDER BY judge_name, model"
);
const BY_ID: Sql = sql!(
    "SELECT ",
    judgment_columns!(),
    " FROM judgments WHERE id = $1"
);
const OF_CONVERSATION: Sql = sql!(
    "SELECT ",
    judgment_columns!(),
    " FROM judgments WHERE conversation_a = $1 OR conversation_b = $1 ORDER BY id"
);
const MADE_BY: Sql = sql!(
    "SELECT ",
    judgment_columns!(),
    " FROM judgments WHERE job_id = $1 AND id > $2 ORDER BY id LIMIT $3"
);
const KEYS: Sql = sql!(
    "SELECT ",
    conversation_key_columns!(),
    " FROM conversations WHERE job_id = $1 ORDER BY id"
);

/// Store the judgment and its calls in one transaction, each replacing the
/// row with its key. Returns the judgment's id (kept when it is replaced).
///
/// The calls are written in key order, then the judgment: two Postgres
/// workers saving the same judgment at once lock its rows in the same order,
/// so one waits for the other instead of deadlocking.
pub(super) async fn save(
    store: &SqlStore<impl Dialect>,
    judgment: &NewJudgment,
) -> Result<i64, StoreError> {
    let mut calls: Vec<&NewJudgeCall> = judgment.calls.iter().collect();
    calls.sort_by_key(|call| (call.order.as_str(), call.sample));
    let verdict = judgment.verdict.as_ref().map(|verdict| verdict.to_string());
    let mut tx = store.begin_write().await?;
    let key = CallKey {
        judge_name: &judgment.judge_name,
        judge_hash: &judgment.judge_hash,
        conversation_a: judgment.conversation_a,
        conversation_b: judgment.conversation_b,
    };
    for call in calls {
        upsert_call(&mut tx, &key, call).await?;
    }
    let row = tx
        .fetch_one(
            &UPSERT,
            &[
                Param::Int(judgment.job_id),
                Param::Text(&judgment.judge_name),
                Param::Text(&judgment.judge_hash),
                Param::Int(judgment.conversation_a),
                Param::OptInt(judgment.conversation_b),
                Param::Text(&judgment.status),
                Param::OptText(verdict.as_deref()),
                Param::OptReal(judgment.score),
                Param::OptBool(judgment.consistent),
                Param::OptText(judgment.reason.as_deref()),
            ],
        )
        .await?;
    let id = row.int("id")?;
    tx.commit().await?;
    Ok(id)
}

/// Which judge and conversations a call belongs to.
pub(super) struct CallKey<'a> {
    pub judge_name: &'a str,
    pub judge_hash: &'a str,
    pub conversation_a: i64,
    pub conversation_b: Option<i64>,
}

/// Store `call` under `key`, replacing the call with the same key, order
/// and sample.
pub(super) async fn upsert_call(
    tx: &mut impl Runs,
    judgment: &CallKey<'_>,
    call: &NewJudgeCall,
) -> Result<(), StoreError> {
    let parsed = call.parsed.as_ref().map(|parsed| parsed.to_string());
    tx.execute(
        &UPSERT_CALL,
        &[
            Param::Text(judgment.judge_name),
            Param::Text(judgment.judge_hash),
            Param::Int(judgment.conversation_a),
            Param::OptInt(judgment.conversation_b),
            Param::Text(&call.order),
            Param::Int(call.sample),
            Param::Text(&call.prompt_hash),
            Param::Text(&call.model),
            Param::Text(&call.raw_output),
            Param::OptText(parsed.as_deref()),
            Param::Text(&call.status),
            Param::OptText(call.error.as_deref()),
            Param::Int(call.prompt_tokens),
            Param::Int(call.completion_tokens),
            Param::Int(call.latency_ms),
            Param::OptBool(Some(call.batch)),
        ],
    )
    .await?;
    Ok(())
}

pub(super) async fn find(
    store: &SqlStore<impl Dialect>,
    judge_hash: &str,
    a: i64,
    b: Option<i64>,
) -> Result<Option<JudgmentRow>, StoreError> {
    let key = [Param::Int(a), Param::Text(judge_hash), Param::OptInt(b)];
    store
        .reader()
        .fetch_optional(&BY_KEY, &key)
        .await?
        .as_ref()
        .map(decode::judgment)
        .transpose()
}

pub(super) async fn calls(
    store: &SqlStore<impl Dialect>,
    judge_hash: &str,
    a: i64,
    b: Option<i64>,
) -> Result<Vec<JudgeCallRow>, StoreError> {
    let key = [Param::Int(a), Param::Text(judge_hash), Param::OptInt(b)];
    let rows = store.reader().fetch_all(&CALLS_BY_KEY, &key).await?;
    rows.iter().map(decode::judge_call).collect()
}

pub(super) async fn of_job(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<Vec<JudgmentRow>, StoreError> {
    judgments(store, &OF_JOB, &[Param::Int(job_id)]).await
}

pub(super) async fn calls_of_job(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<Vec<JudgeCallRow>, StoreError> {
    let rows = store
        .reader()
        .fetch_all(&CALLS_OF_JOB, &[Param::Int(job_id)])
        .await?;
    rows.iter().map(decode::judge_call).collect()
}

pub(super) async fn judge_models_of_job(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<Vec<(String, String)>, StoreError> {
    let rows = store
        .reader()
        .fetch_all(&JUDGE_MODELS_OF_JOB, &[Param::Int(job_id)])
        .await?;
    rows.iter()
        .map(|row| Ok((row.text("judge_name")?, row.text("model")?)))
        .collect()
}

pub(super) async fn get(
    store: &SqlStore<impl Dialect>,
    id: i64,
) -> Result<Option<JudgmentRow>, StoreError> {
    store
        .reader()
        .fetch_optional(&BY_ID, &[Param::Int(id)])
        .await?
        .as_ref()
        .map(decode::judgment)
        .transpose()
}

pub(super) async fn of_conversation(
    store: &SqlStore<impl Dialect>,
    id: i64,
) -> Result<Vec<JudgmentRow>, StoreError> {
    judgments(store, &OF_CONVERSATION, &[Param::Int(id)]).await
}

pub(super) async fn made_by(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
    after: i64,
    limit: u32,
) -> Result<Vec<JudgmentRow>, StoreError> {
    let page = [
        Param::Int(job_id),
        Param::Int(after),
        Param::Int(i64::from(limit)),
    ];
    judgments(store, &MADE_BY, &page).await
}

pub(super) async fn conversation_keys(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<Vec<ConversationKey>, StoreError> {
    let rows = store
        .reader()
        .fetch_all(&KEYS, &[Param::Int(job_id)])
        .await?;
    rows.iter().map(decode::conversation_key).collect()
}

async fn judgments(
    store: &SqlStore<impl Dialect>,
    sql: &Sql,
    params: &[Param<'_>],
) -> Result<Vec<JudgmentRow>, StoreError> {
    let rows = store.reader().fetch_all(sql, params).await?;
    rows.iter().map(decode::judgment).collect()
}
