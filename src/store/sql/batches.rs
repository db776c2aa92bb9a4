//! Batches of judge calls sent through a provider's Batch API, and their
//! requests (see `migrations/*/0006_batches.sql`).

use super::dialect::Dialect;
use super::judgments::{upsert_call, CallKey};
use super::runs::{Commit, Runs};
use super::statement::{sql, Param, Sql};
use super::SqlStore;
use crate::store::decode::StoredRow;
use crate::store::{
    BatchAnswer, BatchRequestRow, BatchRow, BatchUpdate, NewBatchRequest, StoreError,
};

const INSERT_BATCH: Sql = sql!(
    "INSERT INTO batches (job_id, endpoint, status, requests, created_at, updated_at) \
     VALUES ($1, $2, 'preparing', 0, ",
    NOW,
    ", ",
    NOW,
    ") RETURNING id"
);
const INSERT_REQUEST: Sql = sql!(
    "INSERT INTO batch_requests (batch, job_id, custom_id, judge_name, judge_hash, \
     conversation_a, conversation_b, ord, sample, prompt_hash, attempt, status) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'submitted') \
     ON CONFLICT (job_id, custom_id) DO NOTHING RETURNING custom_id"
);
const COUNT_REQUESTS: Sql = sql!("UPDATE batches SET requests = $2 WHERE id = $1");
const DELETE: Sql = sql!("DELETE FROM batches WHERE id = $1");
const UPDATE: Sql = sql!(
    "UPDATE batches SET input_file_id = COALESCE($2, input_file_id), \
     batch_id = COALESCE($3, batch_id), output_file_id = COALESCE($4, output_file_id), \
     error_file_id = COALESCE($5, error_file_id), status = COALESCE($6, status), \
     updated_at = ",
    NOW,
    " WHERE id = $1"
);
const OF_JOB: Sql = sql!(
    "SELECT id, job_id, endpoint, input_file_id, batch_id, output_file_id, error_file_id, \
     status, requests, created_at FROM batches WHERE job_id = $1 ORDER BY id"
);
const REQUESTS_OF_JOB: Sql = sql!(
    "SELECT id, batch, custom_id, judge_name, judge_hash, conversation_a, conversation_b, \
     ord, sample, prompt_hash, attempt, status, error FROM batch_requests \
     WHERE job_id = $1 ORDER BY id"
);
const REQUEST_OF_BATCH: Sql = sql!(
    "SELECT id, batch, custom_id, judge_name, judge_hash, conversation_a, conversation_b, \
     ord, sample, prompt_hash, attempt, status, error FROM batch_requests \
     WHERE batch = $1 AND custom_id = $2"
);
const SETTLE_REQUEST: Sql = sql!(
    "UPDATE batch_requests SET status = $3, error = $4 \
     WHERE batch = $1 AND custom_id = $2 AND status = 'submitted'"
);
const INGESTED: Sql = sql!(
    "UPDATE batches SET status = 'ingested', updated_at = ",
    NOW,
    " WHERE id = $1"
);

pub(super) async fn create(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
    endpoint: &str,
    requests: &[NewBatchRequest],
) -> Result<Option<(i64, Vec<String>)>, StoreError> {
    let mut tx = store.begin_write().await?;
    let id = tx
        .fetch_one(&INSERT_BATCH, &[Param::Int(job_id), Param::Text(endpoint)])
        .await?
        .int("id")?;
    let mut stored = Vec::with_capacity(requests.len());
    for r in requests {
        let row = tx
            .fetch_optional(
                &INSERT_REQUEST,
                &[
                    Param::Int(id),
                    Param::Int(job_id),
                    Param::Text(&r.custom_id),
                    Param::Text(&r.judge_name),
                    Param::Text(&r.judge_hash),
                    Param::Int(r.conversation_a),
                    Param::OptInt(r.conversation_b),
                    Param::Text(&r.order),
                    Param::Int(r.sample),
                    Param::Text(&r.prompt_hash),
                    Param::Int(r.attempt),
                ],
            )
            .await?;
        if let Some(row) = row {
            stored.push(row.text("custom_id")?);
        }
    }
    if stored.is_empty() {
        // Dropped with the transaction: nothing of it was ours.
        return Ok(None);
    }
    tx.execute(
        &COUNT_REQUESTS,
        &[Param::Int(id), Param::Int(stored.len() as i64)],
    )
    .await?;
    tx.commit().await?;
    Ok(Some((id, stored)))
}

pub(super) async fn update(
    store: &SqlStore<impl Dialect>,
    id: i64,
    u: &BatchUpdate,
) -> Result<(), StoreError> {
    store
        .writer()
        .execute(
            &UPDATE,
            &[
                Param::Int(id),
                Param::OptText(u.input_file_id.as_deref()),
                Param::OptText(u.batch_id.as_deref()),
                Param::OptText(u.output_file_id.as_deref()),
                Param::OptText(u.error_file_id.as_deref()),
                Param::OptText(u.status.as_deref()),
            ],
        )
        .await?;
    Ok(())
}

pub(super) async fn delete(store: &SqlStore<impl Dialect>, id: i64) -> Result<(), StoreError> {
    store.writer().execute(&DELETE, &[Param::Int(id)]).await?;
    Ok(())
}

pub(super) async fn of_job(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<Vec<BatchRow>, StoreError> {
    let rows = store
        .reader()
        .fetch_all(&OF_JOB, &[Param::Int(job_id)])
        .await?;
    rows.iter()
        .map(|row| {
            Ok(BatchRow {
                id: row.int("id")?,
                job_id: row.int("job_id")?,
                endpoint: row.text("endpoint")?,
                input_file_id: row.opt_text("input_file_id")?,
                batch_id: row.opt_text("batch_id")?,
                output_file_id: row.opt_text("output_file_id")?,
                error_file_id: row.opt_text("error_file_id")?,
                status: row.text("status")?,
                requests: row.int("requests")?,
                created_at: row.int("created_at")?,
            })
        })
        .collect()
}

fn request(row: &impl StoredRow) -> Result<BatchRequestRow, StoreError> {
    Ok(BatchRequestRow {
        id: row.int("id")?,
        batch: row.int("batch")?,
        request: NewBatchRequest {
            custom_id: row.text("custom_id")?,
            judge_name: row.text("judge_name")?,
            judge_hash: row.text("judge_hash")?,
            conversation_a: row.int("conversation_a")?,
            conversation_b: row.opt_int("conversation_b")?,
            order: row.text("ord")?,
            sample: row.int("sample")?,
            prompt_hash: row.text("prompt_hash")?,
            attempt: row.int("attempt")?,
        },
        status: row.text("status")?,
        error: row.opt_text("error")?,
    })
}

pub(super) async fn requests_of_job(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<Vec<BatchRequestRow>, StoreError> {
    let rows = store
        .reader()
        .fetch_all(&REQUESTS_OF_JOB, &[Param::Int(job_id)])
        .await?;
    rows.iter().map(request).collect()
}

/// Each answer settles its request if it is still `submitted` (a batch
/// ingested twice, by a restarted job, changes nothing the second time), and
/// stores its call; then the batch is `ingested`.
pub(super) async fn ingest(
    store: &SqlStore<impl Dialect>,
    id: i64,
    answers: &[BatchAnswer],
) -> Result<(), StoreError> {
    let mut tx = store.begin_write().await?;
    for answer in answers {
        let Some(row) = tx
            .fetch_optional(
                &REQUEST_OF_BATCH,
                &[Param::Int(id), Param::Text(&answer.custom_id)],
            )
            .await?
        else {
            continue;
        };
        let stored = request(&row)?;
        if stored.status != "submitted" {
            continue;
        }
        tx.execute(
            &SETTLE_REQUEST,
            &[
                Param::Int(id),
                Param::Text(&answer.custom_id),
                Param::Text(&answer.status),
                Param::OptText(answer.error.as_deref()),
            ],
        )
        .await?;
        if let Some(call) = &answer.call {
            let r = &stored.request;
            let key = CallKey {
                judge_name: &r.judge_name,
                judge_hash: &r.judge_hash,
                conversation_a: r.conversation_a,
                conversation_b: r.conversation_b,
            };
            upsert_call(&mut tx, &key, call).await?;
        }
    }
    tx.execute(&INGESTED, &[Param::Int(id)]).await?;
    tx.commit().await?;
    Ok(())
}
