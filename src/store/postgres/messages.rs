//! A conversation's messages and usage, each in one INSERT of arrays.

use sqlx::{Postgres, Transaction};

use crate::store::decode::{message_columns, usage_columns};
use crate::store::sql::dialect::BulkInsert;
use crate::store::{NewConversation, NewItem, NewMessage, StoreError, UsageRow};

type Tx = Transaction<'static, Postgres>;

impl BulkInsert for Postgres {
    async fn insert_rows(tx: &mut Tx, id: i64, c: &NewConversation) -> Result<(), StoreError> {
        insert_messages(tx, id, &c.messages).await?;
        insert_usage(tx, id, &c.usage).await
    }

    /// A statement or three a conversation: Postgres is a server many
    /// workers share, not the embedded store an import benchmark measures.
    async fn insert_imported(
        tx: &mut Tx,
        job_id: i64,
        batch: &[(NewItem, NewConversation)],
    ) -> Result<u64, StoreError> {
        crate::store::sql::imports::each_row::<Postgres>(tx, job_id, batch).await
    }
}

/// All messages in one INSERT: one array per column, so the statement binds
/// ten parameters however long the conversation is.
async fn insert_messages(tx: &mut Tx, id: i64, messages: &[NewMessage]) -> Result<(), StoreError> {
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
    .bind(id)
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

async fn insert_usage(tx: &mut Tx, id: i64, usage: &[UsageRow]) -> Result<(), StoreError> {
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
    .bind(id)
    .bind(&roles)
    .bind(&calls)
    .bind(&prompt_tokens)
    .bind(&completion_tokens)
    .bind(&latencies)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
