//! Conversations with their messages and usage: storing one as its item
//! completes, reading them back, summing them up.

use sqlx::sqlite::SqlitePool;
use sqlx::{AssertSqlSafe, Row, Sqlite, Transaction};

use super::decode::{self, conversation_columns, message_columns, usage_columns};
use super::{multi_row_sql, power_of_two_chunks, BEGIN_WRITE};
use crate::store::{
    now_ms, JobSummary, LatencyHistogram, NewConversation, NewMessage, StoreError,
    StoredConversation, UsageRow,
};

/// Bound parameters per row of the messages INSERT.
const MESSAGE_PARAMETERS: usize = 10;
/// Bound parameters per row of the usage INSERT.
const USAGE_PARAMETERS: usize = 6;

/// Store each conversation as the result of its item and mark the item done,
/// all in one transaction, where `owner` still holds the item's lease.
///
/// A lease that expired but was not taken over by anyone is still honoured:
/// nobody else is working on the item, so the work is not wasted.
pub(super) async fn complete_items(
    writer: &SqlitePool,
    owner: &str,
    batch: &[(i64, &NewConversation)],
) -> Result<Vec<Result<i64, StoreError>>, StoreError> {
    let mut tx = writer.begin_with(BEGIN_WRITE).await?;
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
    tx: &mut Transaction<'static, Sqlite>,
    item_id: i64,
    owner: &str,
    conversation: &NewConversation,
) -> Result<Result<i64, StoreError>, StoreError> {
    let claimed = sqlx::query(
        "UPDATE items SET status = 'done', lease_expires_at = NULL, updated_at = ? \
         WHERE id = ? AND status = 'leased' AND lease_owner = ? RETURNING job_id",
    )
    .bind(now_ms())
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
    tx: &mut Transaction<'static, Sqlite>,
    job_id: i64,
    item_id: i64,
    c: &NewConversation,
) -> Result<i64, StoreError> {
    let row = sqlx::query(
        "INSERT INTO conversations (job_id, item_id, item_key, scenario_id, persona_id, sample, \
         seed, policy_model, user_model, termination, reward, reward_breakdown, metadata, tools, \
         started_at, finished_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
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

async fn insert_messages(
    tx: &mut Transaction<'static, Sqlite>,
    conversation_id: i64,
    messages: &[NewMessage],
) -> Result<(), StoreError> {
    let mut idx: i64 = 0;
    for chunk in power_of_two_chunks(messages, MESSAGE_PARAMETERS) {
        let sql = multi_row_sql(
            concat!("INSERT INTO messages (", message_columns!(), ") VALUES "),
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            chunk.len(),
            "",
        );
        let mut insert = sqlx::query(AssertSqlSafe(sql));
        for m in chunk {
            insert = insert
                .bind(conversation_id)
                .bind(idx)
                .bind(m.role.as_str())
                .bind(&*m.content)
                .bind(m.tool_calls.as_ref().map(|calls| calls.to_string()))
                .bind(m.tool_call_id.as_deref())
                .bind(m.author.as_str())
                .bind(m.prompt_tokens)
                .bind(m.completion_tokens)
                .bind(m.latency_ms);
            idx += 1;
        }
        insert.execute(&mut **tx).await?;
    }
    Ok(())
}

async fn insert_usage(
    tx: &mut Transaction<'static, Sqlite>,
    conversation_id: i64,
    usage: &[UsageRow],
) -> Result<(), StoreError> {
    for chunk in power_of_two_chunks(usage, USAGE_PARAMETERS) {
        let sql = multi_row_sql(
            concat!(
                "INSERT INTO conversation_usage (",
                usage_columns!(),
                ") VALUES "
            ),
            "(?, ?, ?, ?, ?, ?)",
            chunk.len(),
            "",
        );
        let mut insert = sqlx::query(AssertSqlSafe(sql));
        for u in chunk {
            insert = insert
                .bind(conversation_id)
                .bind(u.role.as_str())
                .bind(u.calls)
                .bind(u.prompt_tokens)
                .bind(u.completion_tokens)
                .bind(u.latency_ms);
        }
        insert.execute(&mut **tx).await?;
    }
    Ok(())
}

pub(super) async fn get(
    reader: &SqlitePool,
    id: i64,
) -> Result<Option<StoredConversation>, StoreError> {
    let mut tx = reader.begin().await?;
    let Some(row) = sqlx::query(concat!(
        "SELECT ",
        conversation_columns!(),
        " FROM conversations WHERE id = ?"
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
        " FROM messages WHERE conversation_id = ? ORDER BY idx"
    ))
    .bind(id)
    .fetch_all(&mut *tx)
    .await?;
    let usage = sqlx::query(concat!(
        "SELECT ",
        usage_columns!(),
        " FROM conversation_usage WHERE conversation_id = ? ORDER BY role"
    ))
    .bind(id)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    let mut page = decode::assemble(&[row], &messages, &usage)?;
    Ok(page.pop())
}

pub(super) async fn page(
    reader: &SqlitePool,
    job_id: i64,
    after_id: i64,
    limit: u32,
) -> Result<Vec<StoredConversation>, StoreError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    // One read transaction, so the three queries see the same snapshot.
    let mut tx = reader.begin().await?;
    let conversations = sqlx::query(concat!(
        "SELECT ",
        conversation_columns!(),
        " FROM conversations WHERE job_id = ? AND id > ? ORDER BY id LIMIT ?"
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
         WHERE c.job_id = ? AND c.id > ? AND c.id <= ? \
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
         WHERE c.job_id = ? AND c.id > ? AND c.id <= ? \
         ORDER BY u.conversation_id, u.role",
    )
    .bind(job_id)
    .bind(after_id)
    .bind(last_id)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    decode::assemble(&conversations, &messages, &usage)
}

pub(super) async fn summary(reader: &SqlitePool, job_id: i64) -> Result<JobSummary, StoreError> {
    let mut tx = reader.begin().await?;
    let totals = sqlx::query(
        "SELECT COUNT(*) AS conversations, AVG(reward) AS mean_reward \
         FROM conversations WHERE job_id = ?",
    )
    .bind(job_id)
    .fetch_one(&mut *tx)
    .await?;
    let terminations = sqlx::query(
        "SELECT termination, COUNT(*) AS n FROM conversations WHERE job_id = ? \
         GROUP BY termination ORDER BY n DESC, termination",
    )
    .bind(job_id)
    .fetch_all(&mut *tx)
    .await?;
    let usage = sqlx::query(
        "SELECT 0 AS conversation_id, u.role, SUM(u.calls) AS calls, \
         SUM(u.prompt_tokens) AS prompt_tokens, SUM(u.completion_tokens) AS completion_tokens, \
         SUM(u.latency_ms) AS latency_ms \
         FROM conversation_usage u JOIN conversations c ON c.id = u.conversation_id \
         WHERE c.job_id = ? GROUP BY u.role ORDER BY u.role",
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
    executor: impl sqlx::Executor<'e, Database = Sqlite>,
    job_id: i64,
) -> Result<Vec<LatencyHistogram>, StoreError> {
    let rows = sqlx::query(
        "SELECT m.author, m.latency_ms, COUNT(*) AS calls \
         FROM messages m JOIN conversations c ON c.id = m.conversation_id \
         WHERE c.job_id = ? AND m.latency_ms IS NOT NULL \
         GROUP BY m.author, m.latency_ms ORDER BY m.author, m.latency_ms",
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
