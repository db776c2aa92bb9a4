//! Conversations with their messages and usage: storing one as its item
//! completes, reading them back, summing them up.
//!
//! Text is ordered with `COLLATE "C"` (byte order), as SQLite orders it,
//! whatever the database's locale says about underscores and case.

use sqlx::postgres::PgPool;
use sqlx::{Postgres, Row, Transaction};

use super::decode::{self, conversation_columns, message_columns, usage_columns};
use super::server_now_ms;
use crate::store::{
    JobSummary, LatencyHistogram, NewConversation, NewMessage, StoreError, StoredConversation,
    UsageRow,
};

/// Starts the transactions that read a conversation and its rows: one
/// snapshot for all their queries, as SQLite's read transactions give.
const BEGIN_READ: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";

/// Store each conversation as the result of its item and mark the item done,
/// all in one transaction, where `owner` still holds the item's lease.
///
/// A lease that expired but was not taken over by anyone is still honoured:
/// nobody else is working on the item, so the work is not wasted. The UPDATE
/// locks the item row until commit, so a leaser taking the expired lease over
/// either skips it (and finds it done) or commits first (and this finds the
/// lease lost).
pub(super) async fn complete_items(
    pool: &PgPool,
    owner: &str,
    batch: &[(i64, &NewConversation)],
) -> Result<Vec<Result<i64, StoreError>>, StoreError> {
    let mut tx = pool.begin().await?;
    let mut results = Vec::with_capacity(batch.len());
    for &(item_id, conversation) in batch {
        results.push(store_one(&mut tx, item_id, owner, conversation).await?);
    }
    tx.commit().await?;
    Ok(results)
}

/// One conversation of a batch: `Err(LeaseLost)` (and nothing written) when
/// `owner` no longer holds the item.
async fn store_one(
    tx: &mut Transaction<'static, Postgres>,
    item_id: i64,
    owner: &str,
    conversation: &NewConversation,
) -> Result<Result<i64, StoreError>, StoreError> {
    let claimed = sqlx::query(concat!(
        "UPDATE items SET status = 'done', lease_expires_at = NULL, updated_at = ",
        server_now_ms!(),
        " WHERE id = $1 AND status = 'leased' AND lease_owner = $2 RETURNING job_id"
    ))
    .bind(item_id)
    .bind(owner)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(claimed) = claimed else {
        return Ok(Err(StoreError::LeaseLost {
            item_id,
            owner: owner.to_string(),
        }));
    };
    // The leased item is the authority on which job and item this is.
    let job_id: i64 = claimed.try_get("job_id")?;
    if job_id != conversation.job_id || item_id != conversation.item_id {
        tracing::warn!(
            item_id,
            job_id,
            conversation.item_id,
            conversation.job_id,
            "complete_item: the conversation names another item or job; storing it under the leased item"
        );
    }
    let conversation_id = insert_conversation(tx, job_id, item_id, conversation).await?;
    insert_messages(tx, conversation_id, &conversation.messages).await?;
    insert_usage(tx, conversation_id, &conversation.usage).await?;
    Ok(Ok(conversation_id))
}

async fn insert_conversation(
    tx: &mut Transaction<'static, Postgres>,
    job_id: i64,
    item_id: i64,
    c: &NewConversation,
) -> Result<i64, StoreError> {
    let row = sqlx::query(
        "INSERT INTO conversations (job_id, item_id, item_key, scenario_id, persona_id, sample, \
         seed, policy_model, user_model, termination, reward, reward_breakdown, metadata, tools, \
         started_at, finished_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) \
         RETURNING id",
    )
    .bind(job_id)
    .bind(item_id)
    .bind(c.item_key.as_str())
    .bind(c.scenario_id.as_str())
    .bind(c.persona_id.as_str())
    .bind(c.sample)
    .bind(c.seed)
    .bind(c.policy_model.as_str())
    .bind(c.user_model.as_str())
    .bind(c.termination.as_str())
    .bind(c.reward)
    .bind(c.reward_breakdown.to_string())
    .bind(c.metadata.to_string())
    .bind(c.tools.to_string())
    .bind(c.started_at)
    .bind(c.finished_at)
    .fetch_one(&mut **tx)
    .await?;
    Ok(row.try_get("id")?)
}

/// All messages in one INSERT: one array per column, so the statement binds
/// ten parameters however long the conversation is.
async fn insert_messages(
    tx: &mut Transaction<'static, Postgres>,
    conversation_id: i64,
    messages: &[NewMessage],
) -> Result<(), StoreError> {
    if messages.is_empty() {
        return Ok(());
    }
    let idxs: Vec<i64> = (0..messages.len() as i64).collect();
    let roles: Vec<&str> = messages.iter().map(|m| m.role.as_str()).collect();
    let contents: Vec<&str> = messages.iter().map(|m| &*m.content).collect();
    let tool_calls: Vec<Option<String>> = messages
        .iter()
        .map(|m| m.tool_calls.as_ref().map(|calls| calls.to_string()))
        .collect();
    let tool_call_ids: Vec<Option<&str>> =
        messages.iter().map(|m| m.tool_call_id.as_deref()).collect();
    let authors: Vec<&str> = messages.iter().map(|m| m.author.as_str()).collect();
    let prompt_tokens: Vec<Option<i64>> = messages.iter().map(|m| m.prompt_tokens).collect();
    let completion_tokens: Vec<Option<i64>> =
        messages.iter().map(|m| m.completion_tokens).collect();
    let latencies: Vec<Option<i64>> = messages.iter().map(|m| m.latency_ms).collect();
    sqlx::query(concat!(
        "INSERT INTO messages (",
        message_columns!(),
        ") SELECT $1, given.* FROM UNNEST($2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::TEXT[], \
         $6::TEXT[], $7::TEXT[], $8::BIGINT[], $9::BIGINT[], $10::BIGINT[]) AS given"
    ))
    .bind(conversation_id)
    .bind(&idxs)
    .bind(&roles)
    .bind(&contents)
    .bind(&tool_calls)
    .bind(&tool_call_ids)
    .bind(&authors)
    .bind(&prompt_tokens)
    .bind(&completion_tokens)
    .bind(&latencies)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn insert_usage(
    tx: &mut Transaction<'static, Postgres>,
    conversation_id: i64,
    usage: &[UsageRow],
) -> Result<(), StoreError> {
    if usage.is_empty() {
        return Ok(());
    }
    let roles: Vec<&str> = usage.iter().map(|u| u.role.as_str()).collect();
    let calls: Vec<i64> = usage.iter().map(|u| u.calls).collect();
    let prompt_tokens: Vec<i64> = usage.iter().map(|u| u.prompt_tokens).collect();
    let completion_tokens: Vec<i64> = usage.iter().map(|u| u.completion_tokens).collect();
    let latencies: Vec<i64> = usage.iter().map(|u| u.latency_ms).collect();
    sqlx::query(concat!(
        "INSERT INTO conversation_usage (",
        usage_columns!(),
        ") SELECT $1, given.* FROM UNNEST($2::TEXT[], $3::BIGINT[], $4::BIGINT[], \
         $5::BIGINT[], $6::BIGINT[]) AS given"
    ))
    .bind(conversation_id)
    .bind(&roles)
    .bind(&calls)
    .bind(&prompt_tokens)
    .bind(&completion_tokens)
    .bind(&latencies)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub(super) async fn get(pool: &PgPool, id: i64) -> Result<Option<StoredConversation>, StoreError> {
    let mut tx = pool.begin_with(BEGIN_READ).await?;
    let Some(row) = sqlx::query(concat!(
        "SELECT ",
        conversation_columns!(),
        " FROM conversations WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?
    else {
        return Ok(None);
    };
    let messages = sqlx::query(concat!(
        "SELECT ",
        message_columns!(),
        " FROM messages WHERE conversation_id = $1 ORDER BY idx"
    ))
    .bind(id)
    .fetch_all(&mut *tx)
    .await?;
    let usage = sqlx::query(concat!(
        "SELECT ",
        usage_columns!(),
        " FROM conversation_usage WHERE conversation_id = $1 ORDER BY role COLLATE \"C\""
    ))
    .bind(id)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    let mut page = decode::assemble(&[row], &messages, &usage)?;
    Ok(page.pop())
}

pub(super) async fn page(
    pool: &PgPool,
    job_id: i64,
    after_id: i64,
    limit: u32,
) -> Result<Vec<StoredConversation>, StoreError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    // One snapshot, so the three queries agree.
    let mut tx = pool.begin_with(BEGIN_READ).await?;
    let conversations = sqlx::query(concat!(
        "SELECT ",
        conversation_columns!(),
        " FROM conversations WHERE job_id = $1 AND id > $2 ORDER BY id LIMIT $3"
    ))
    .bind(job_id)
    .bind(after_id)
    .bind(i64::from(limit))
    .fetch_all(&mut *tx)
    .await?;
    let Some(last) = conversations.last() else {
        return Ok(Vec::new());
    };
    let last_id: i64 = last.try_get("id")?;
    // The page is exactly this job's conversations in (after_id, last_id], so
    // its messages and usage are one range join each.
    let messages = sqlx::query(
        "SELECT m.conversation_id, m.idx, m.role, m.content, m.tool_calls, m.tool_call_id, \
         m.author, m.prompt_tokens, m.completion_tokens, m.latency_ms \
         FROM messages m JOIN conversations c ON c.id = m.conversation_id \
         WHERE c.job_id = $1 AND c.id > $2 AND c.id <= $3 \
         ORDER BY m.conversation_id, m.idx",
    )
    .bind(job_id)
    .bind(after_id)
    .bind(last_id)
    .fetch_all(&mut *tx)
    .await?;
    let usage = sqlx::query(
        "SELECT u.conversation_id, u.role, u.calls, u.prompt_tokens, u.completion_tokens, \
         u.latency_ms \
         FROM conversation_usage u JOIN conversations c ON c.id = u.conversation_id \
         WHERE c.job_id = $1 AND c.id > $2 AND c.id <= $3 \
         ORDER BY u.conversation_id, u.role COLLATE \"C\"",
    )
    .bind(job_id)
    .bind(after_id)
    .bind(last_id)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    decode::assemble(&conversations, &messages, &usage)
}

pub(super) async fn summary(pool: &PgPool, job_id: i64) -> Result<JobSummary, StoreError> {
    let mut tx = pool.begin_with(BEGIN_READ).await?;
    let totals = sqlx::query(
        "SELECT COUNT(*) AS conversations, AVG(reward) AS mean_reward \
         FROM conversations WHERE job_id = $1",
    )
    .bind(job_id)
    .fetch_one(&mut *tx)
    .await?;
    let terminations = sqlx::query(
        "SELECT termination, COUNT(*) AS n FROM conversations WHERE job_id = $1 \
         GROUP BY termination ORDER BY n DESC, termination COLLATE \"C\"",
    )
    .bind(job_id)
    .fetch_all(&mut *tx)
    .await?;
    // SUM of BIGINT is NUMERIC in Postgres; the sums fit back in BIGINT.
    let usage = sqlx::query(
        "SELECT 0::BIGINT AS conversation_id, u.role, SUM(u.calls)::BIGINT AS calls, \
         SUM(u.prompt_tokens)::BIGINT AS prompt_tokens, \
         SUM(u.completion_tokens)::BIGINT AS completion_tokens, \
         SUM(u.latency_ms)::BIGINT AS latency_ms \
         FROM conversation_usage u JOIN conversations c ON c.id = u.conversation_id \
         WHERE c.job_id = $1 GROUP BY u.role ORDER BY u.role COLLATE \"C\"",
    )
    .bind(job_id)
    .fetch_all(&mut *tx)
    .await?;
    let call_latencies = latencies(&mut *tx, job_id).await?;
    tx.commit().await?;
    Ok(JobSummary {
        conversations: totals.try_get("conversations")?,
        mean_reward: totals.try_get("mean_reward")?,
        terminations: terminations
            .iter()
            .map(|row| Ok((row.try_get("termination")?, row.try_get("n")?)))
            .collect::<Result<_, sqlx::Error>>()?,
        usage: usage
            .iter()
            .map(|row| decode::usage(row).map(|(_, usage)| usage))
            .collect::<Result<_, _>>()?,
        call_latencies,
    })
}

/// Model-call latencies of a job per author, read as one row per distinct
/// latency (on its own or in the summary's transaction).
pub(super) async fn latencies<'e>(
    executor: impl sqlx::Executor<'e, Database = Postgres>,
    job_id: i64,
) -> Result<Vec<LatencyHistogram>, StoreError> {
    let rows = sqlx::query(
        "SELECT m.author, m.latency_ms, COUNT(*) AS calls \
         FROM messages m JOIN conversations c ON c.id = m.conversation_id \
         WHERE c.job_id = $1 AND m.latency_ms IS NOT NULL \
         GROUP BY m.author, m.latency_ms ORDER BY m.author COLLATE \"C\", m.latency_ms",
    )
    .bind(job_id)
    .fetch_all(executor)
    .await?;
    let rows = rows
        .iter()
        .map(|row| {
            Ok((
                row.try_get("author")?,
                row.try_get("latency_ms")?,
                row.try_get("calls")?,
            ))
        })
        .collect::<Result<Vec<(String, i64, i64)>, sqlx::Error>>()?;
    Ok(LatencyHistogram::from_rows(rows))
}
