//! Imported conversations in SQLite's own words: a batch's items,
//! conversations, messages and user checks in a few multi-row INSERTs each,
//! instead of four statements a conversation. Every statement is a round
//! trip to the connection's worker thread; at 100,000 conversations the
//! round trips were most of an import's time.

use std::collections::HashMap;

use sqlx::{AssertSqlSafe, Row, Sqlite, Transaction};

use super::messages::insert_messages;
use super::multi_row::{multi_row_sql, power_of_two_chunks};
use crate::store::{now_ms, NewConversation, NewItem, StoreError};

type Tx = Transaction<'static, Sqlite>;

const ITEM_PARAMETERS: usize = 6;
const CONVERSATION_PARAMETERS: usize = 16;

/// See [`crate::store::ImportStore::store_imported`]: the items whose keys are new
/// (the first of a key the batch holds twice), each with its conversation.
pub(crate) async fn insert_imported(
    tx: &mut Tx,
    job_id: i64,
    batch: &[(NewItem, NewConversation)],
) -> Result<u64, StoreError> {
    let mut new_items = insert_items(tx, job_id, batch).await?;
    // In batch order; a key twice in the batch is stored once.
    let new: Vec<(i64, &NewConversation)> = batch
        .iter()
        .filter_map(|(item, c)| Some((new_items.remove(&item.key)?, c)))
        .collect();
    let ids = insert_conversations(tx, job_id, &new).await?;
    let mut messages = Vec::new();
    let mut checks = Vec::new();
    for (item_id, c) in &new {
        let id = *ids.get(item_id).ok_or_else(|| {
            StoreError::Corrupt(format!("item {item_id}: its conversation was not stored"))
        })?;
        messages.extend(
            c.messages
                .iter()
                .enumerate()
                .map(|(idx, m)| (id, idx as i64, m)),
        );
        if let Some(c) = &c.user_checks {
            checks.push((id, c.to_string()));
        }
        if !c.usage.is_empty() {
            return Err(StoreError::Corrupt(
                "an imported conversation has model usage; imports store none".into(),
            ));
        }
    }
    insert_messages(tx, &messages).await?;
    insert_checks(tx, &checks).await?;
    Ok(new.len() as u64)
}

/// The batch's items, done; the ids of those that were new, by key.
async fn insert_items(
    tx: &mut Tx,
    job_id: i64,
    batch: &[(NewItem, NewConversation)],
) -> Result<HashMap<String, i64>, StoreError> {
    let now = now_ms();
    let mut ids = HashMap::with_capacity(batch.len());
    for chunk in power_of_two_chunks(batch, ITEM_PARAMETERS + 1) {
        let sql = multi_row_sql(
            "INSERT INTO items (job_id, key, scenario_id, persona_id, sample, seed, updated_at, \
             status, attempts) VALUES ",
            "(?, ?, ?, ?, ?, ?, ?, 'done', 1)",
            chunk.len(),
            " ON CONFLICT (job_id, key) DO NOTHING RETURNING id, key",
        );
        let mut insert = sqlx::query(AssertSqlSafe(sql));
        for (item, _) in chunk {
            insert = insert
                .bind(job_id)
                .bind(item.key.as_str())
                .bind(item.scenario_id.as_str())
                .bind(item.persona_id.as_str())
                .bind(item.sample)
                .bind(item.seed)
                .bind(now);
        }
        for row in insert.fetch_all(&mut **tx).await? {
            ids.insert(row.try_get("key")?, row.try_get("id")?);
        }
    }
    Ok(ids)
}

/// The conversations of new items; their ids by item id.
async fn insert_conversations(
    tx: &mut Tx,
    job_id: i64,
    new: &[(i64, &NewConversation)],
) -> Result<HashMap<i64, i64>, StoreError> {
    let mut ids = HashMap::with_capacity(new.len());
    for chunk in power_of_two_chunks(new, CONVERSATION_PARAMETERS) {
        let sql = multi_row_sql(
            "INSERT INTO conversations (job_id, item_id, item_key, scenario_id, persona_id, \
             sample, seed, policy_model, user_model, termination, reward, reward_breakdown, \
             metadata, tools, started_at, finished_at) VALUES ",
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            chunk.len(),
            " RETURNING id, item_id",
        );
        let mut insert = sqlx::query(AssertSqlSafe(sql));
        for (item_id, c) in chunk {
            insert = insert
                .bind(job_id)
                .bind(*item_id)
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
                .bind(c.finished_at);
        }
        for row in insert.fetch_all(&mut **tx).await? {
            ids.insert(row.try_get("item_id")?, row.try_get("id")?);
        }
    }
    Ok(ids)
}

async fn insert_checks(tx: &mut Tx, rows: &[(i64, String)]) -> Result<(), StoreError> {
    for chunk in power_of_two_chunks(rows, 2) {
        let sql = multi_row_sql(
            "INSERT INTO user_checks (conversation_id, checks) VALUES ",
            "(?, ?)",
            chunk.len(),
            "",
        );
        let mut insert = sqlx::query(AssertSqlSafe(sql));
        for (id, checks) in chunk {
            insert = insert.bind(*id).bind(checks.as_str());
        }
        insert.execute(&mut **tx).await?;
    }
    Ok(())
}
