//! Conversations with their messages and usage: storing one as its item
//! completes, reading them back, summing them up. Text is ordered byte by
//! byte in both dialects, whatever a Postgres database's locale says about
//! underscores and case.

use super::dialect::Dialect;
use super::runs::{Commit, Runs};
use super::statement::{sql, Param, Sql};
use super::SqlStore;
use crate::store::decode::{self, conversation_columns, message_columns, usage_columns, StoredRow};
use crate::store::{
    tokens, JobSummary, LatencyHistogram, NewConversation, StoreError, StoredConversation,
};
use crate::token_ids::TokenIds;

const CLAIM: Sql = sql!(
    "UPDATE items SET status = 'done', lease_expires_at = NULL, updated_at = ",
    NOW,
    " WHERE id = $1 AND status = 'leased' AND lease_owner = $2 RETURNING job_id"
);
const INSERT: Sql = sql!(
    "INSERT INTO conversations (job_id, item_id, item_key, scenario_id, persona_id, sample, \
     seed, policy_model, user_model, termination, reward, reward_breakdown, metadata, tools, \
     started_at, finished_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) \
     RETURNING id"
);
// A conversation stored before the checks existed has no `user_checks` row.
const BY_ID: Sql = sql!(
    "SELECT ",
    conversation_columns!(),
    ", user_checks.checks AS user_checks FROM conversations \
     LEFT JOIN user_checks ON user_checks.conversation_id = conversations.id WHERE id = $1"
);
const MESSAGES_OF_ONE: Sql = sql!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE conversation_id = $1 ORDER BY idx"
);
const USAGE_OF_ONE: Sql = sql!(
    "SELECT ",
    usage_columns!(),
    " FROM conversation_usage WHERE conversation_id = $1 ORDER BY role",
    BYTEWISE
);
const PAGE: Sql = sql!(
    "SELECT ",
    conversation_columns!(),
    ", user_checks.checks AS user_checks FROM conversations \
     LEFT JOIN user_checks ON user_checks.conversation_id = conversations.id \
     WHERE job_id = $1 AND id > $2 ORDER BY id LIMIT $3"
);
const INSERT_TOKENS: Sql = sql!(
    "INSERT INTO message_tokens (conversation_id, idx, prompt_token_ids, generation_token_ids, \
     generation_log_probs) VALUES ($1, $2, $3, $4, $5)"
);
const TOKENS_OF_ONE: Sql = sql!(
    "SELECT idx, prompt_token_ids, generation_token_ids, generation_log_probs \
     FROM message_tokens WHERE conversation_id = $1 ORDER BY idx"
);
const INSERT_CHECKS: Sql =
    sql!("INSERT INTO user_checks (conversation_id, checks) VALUES ($1, $2)");
const REPLACE_CHECKS: Sql = sql!(
    "INSERT INTO user_checks (conversation_id, checks) VALUES ($1, $2) \
     ON CONFLICT (conversation_id) DO UPDATE SET checks = excluded.checks"
);
// The page is exactly this job's conversations in (after_id, last_id], so
// its messages and usage are one range join each.
const MESSAGES_OF_PAGE: Sql = sql!(
    "SELECT m.conversation_id, m.idx, m.role, m.content, m.tool_calls, m.tool_call_id, \
     m.author, m.prompt_tokens, m.completion_tokens, m.latency_ms \
     FROM messages m JOIN conversations c ON c.id = m.conversation_id \
     WHERE c.job_id = $1 AND c.id > $2 AND c.id <= $3 \
     ORDER BY m.conversation_id, m.idx"
);
const USAGE_OF_PAGE: Sql = sql!(
    "SELECT u.conversation_id, u.role, u.calls, u.prompt_tokens, u.completion_tokens, \
     u.latency_ms \
     FROM conversation_usage u JOIN conversations c ON c.id = u.conversation_id \
     WHERE c.job_id = $1 AND c.id > $2 AND c.id <= $3 \
     ORDER BY u.conversation_id, u.role",
    BYTEWISE
);
// Each scenario's rewards together, in id order within it (the order
// `sparring stats` reads them in, so both sum them alike).
const SCENARIO_REWARDS: Sql = sql!(
    "SELECT scenario_id, reward FROM conversations \
     WHERE job_id = $1 AND reward IS NOT NULL ORDER BY scenario_id",
    BYTEWISE,
    ", id"
);
const TOTALS: Sql = sql!(
    "SELECT COUNT(*) AS conversations, AVG(reward) AS mean_reward \
     FROM conversations WHERE job_id = $1"
);
const TERMINATIONS: Sql = sql!(
    "SELECT termination, COUNT(*) AS n FROM conversations WHERE job_id = $1 \
     GROUP BY termination ORDER BY n DESC, termination",
    BYTEWISE
);
// SUM of BIGINT is NUMERIC in Postgres; the sums fit back in BIGINT.
const USAGE_BY_ROLE: Sql = sql!(
    "SELECT CAST(0 AS BIGINT) AS conversation_id, u.role, CAST(SUM(u.calls) AS BIGINT) AS calls, \
     CAST(SUM(u.prompt_tokens) AS BIGINT) AS prompt_tokens, \
     CAST(SUM(u.completion_tokens) AS BIGINT) AS completion_tokens, \
     CAST(SUM(u.latency_ms) AS BIGINT) AS latency_ms \
     FROM conversation_usage u JOIN conversations c ON c.id = u.conversation_id \
     WHERE c.job_id = $1 GROUP BY u.role ORDER BY u.role",
    BYTEWISE
);
const LATENCIES: Sql = sql!(
    "SELECT m.author, m.latency_ms, COUNT(*) AS calls \
     FROM messages m JOIN conversations c ON c.id = m.conversation_id \
     WHERE c.job_id = $1 AND m.latency_ms IS NOT NULL \
     GROUP BY m.author, m.latency_ms ORDER BY m.author",
    BYTEWISE,
    ", m.latency_ms"
);

/// Store each conversation as the result of its item and mark the item done,
/// all in one transaction (a group commit), where `owner` still holds the
/// item's lease.
///
/// A lease that expired but was not taken over by anyone is still honoured:
/// nobody else is working on the item, so the work is not wasted. In
/// Postgres the claiming UPDATE locks the item row until commit, so a leaser
/// taking the expired lease over either skips it (and finds it done) or
/// commits first (and this finds the lease lost).
pub(super) async fn complete_items<D: Dialect>(
    store: &SqlStore<D>,
    owner: &str,
    batch: &[(i64, &NewConversation)],
) -> Result<Vec<Result<i64, StoreError>>, StoreError> {
    let mut tx = store.begin_write().await?;
    let mut results = Vec::with_capacity(batch.len());
    for &(item_id, conversation) in batch {
        results.push(store_one::<D>(&mut tx, item_id, owner, conversation).await?);
    }
    tx.commit().await?;
    Ok(results)
}

/// One conversation of a batch: `Err(LeaseLost)` (and nothing written) when
/// `owner` no longer holds the item.
async fn store_one<D: Dialect>(
    tx: &mut D::Tx,
    item_id: i64,
    owner: &str,
    conversation: &NewConversation,
) -> Result<Result<i64, StoreError>, StoreError> {
    let claimed = tx
        .fetch_optional(&CLAIM, &[Param::Int(item_id), Param::Text(owner)])
        .await?;
    let Some(claimed) = claimed else {
        return Ok(Err(StoreError::LeaseLost {
            item_id,
            owner: owner.to_string(),
        }));
    };
    // The leased item is the authority on which job and item this is.
    let job_id = claimed.int("job_id")?;
    if job_id != conversation.job_id || item_id != conversation.item_id {
        tracing::warn!(
            item_id,
            job_id,
            conversation.item_id,
            conversation.job_id,
            "complete_item: the conversation names another item or job; storing it under the leased item"
        );
    }
    Ok(Ok(
        insert_whole::<D>(tx, job_id, item_id, conversation).await?
    ))
}

/// The conversation with its messages, usage and user checks, as the result
/// of item `item_id` of job `job_id`. Returns its id.
pub(super) async fn insert_whole<D: Dialect>(
    tx: &mut D::Tx,
    job_id: i64,
    item_id: i64,
    conversation: &NewConversation,
) -> Result<i64, StoreError> {
    let conversation_id = insert_conversation(tx, job_id, item_id, conversation).await?;
    D::insert_rows(tx, conversation_id, conversation).await?;
    insert_tokens(tx, conversation_id, conversation).await?;
    if let Some(checks) = &conversation.user_checks {
        let checks = checks.to_string();
        tx.execute(
            &INSERT_CHECKS,
            &[Param::Int(conversation_id), Param::Text(&checks)],
        )
        .await?;
    }
    Ok(conversation_id)
}

/// The token lists of the messages that carry them: a row per policy
/// generation whose server returned them, none otherwise.
async fn insert_tokens(
    tx: &mut impl Runs,
    conversation_id: i64,
    conversation: &NewConversation,
) -> Result<(), StoreError> {
    for (idx, tokens) in (0..)
        .zip(&conversation.messages)
        .filter_map(|(idx, m)| Some((idx, m.tokens.as_ref()?)))
    {
        let prompt = tokens::pack_ids(&tokens.prompt_token_ids);
        let generation = tokens::pack_ids(&tokens.generation_token_ids);
        let log_probs = tokens::pack_log_probs(&tokens.generation_log_probs);
        tx.execute(
            &INSERT_TOKENS,
            &[
                Param::Int(conversation_id),
                Param::Int(idx),
                Param::Bytes(&prompt),
                Param::Bytes(&generation),
                Param::Bytes(&log_probs),
            ],
        )
        .await?;
    }
    Ok(())
}

/// The token lists stored with conversation `id`'s messages, by message idx.
/// The user checks of each `(conversation, checks)`, replacing those stored,
/// in one transaction; how many were written.
pub(super) async fn replace_user_checks(
    store: &SqlStore<impl Dialect>,
    checks: &[(i64, serde_json::Value)],
) -> Result<u64, StoreError> {
    let mut tx = store.begin_write().await?;
    let mut written = 0;
    for (id, checks) in checks {
        let text = checks.to_string();
        written += tx
            .execute(&REPLACE_CHECKS, &[Param::Int(*id), Param::Text(&text)])
            .await?;
    }
    tx.commit().await?;
    Ok(written)
}

pub(super) async fn message_tokens(
    store: &SqlStore<impl Dialect>,
    id: i64,
) -> Result<Vec<(i64, TokenIds)>, StoreError> {
    let rows = store
        .reader()
        .fetch_all(&TOKENS_OF_ONE, &[Param::Int(id)])
        .await?;
    rows.iter()
        .map(|row| {
            let idx = row.int("idx")?;
            let tokens = tokens::unpack(
                id,
                idx,
                &row.bytes("prompt_token_ids")?,
                &row.bytes("generation_token_ids")?,
                &row.bytes("generation_log_probs")?,
            )?;
            Ok((idx, tokens))
        })
        .collect()
}

async fn insert_conversation(
    tx: &mut impl Runs,
    job_id: i64,
    item_id: i64,
    c: &NewConversation,
) -> Result<i64, StoreError> {
    let reward_breakdown = c.reward_breakdown.to_string();
    let metadata = c.metadata.to_string();
    let tools = c.tools.to_string();
    let row = tx
        .fetch_one(
            &INSERT,
            &[
                Param::Int(job_id),
                Param::Int(item_id),
                Param::Text(&c.item_key),
                Param::Text(&c.scenario_id),
                Param::Text(&c.persona_id),
                Param::Int(c.sample),
                Param::Int(c.seed),
                Param::Text(&c.policy_model),
                Param::Text(&c.user_model),
                Param::Text(&c.termination),
                Param::OptReal(c.reward),
                Param::Text(&reward_breakdown),
                Param::Text(&metadata),
                Param::Text(&tools),
                Param::Int(c.started_at),
                Param::Int(c.finished_at),
            ],
        )
        .await?;
    Ok(row.int("id")?)
}

pub(super) async fn get(
    store: &SqlStore<impl Dialect>,
    id: i64,
) -> Result<Option<StoredConversation>, StoreError> {
    let mut tx = store.begin_read().await?;
    let Some(row) = tx.fetch_optional(&BY_ID, &[Param::Int(id)]).await? else {
        return Ok(None);
    };
    let messages = tx.fetch_all(&MESSAGES_OF_ONE, &[Param::Int(id)]).await?;
    let usage = tx.fetch_all(&USAGE_OF_ONE, &[Param::Int(id)]).await?;
    tx.commit().await?;
    let mut page = decode::assemble(&[row], &messages, &usage)?;
    Ok(page.pop())
}

pub(super) async fn page(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
    after_id: i64,
    limit: u32,
) -> Result<Vec<StoredConversation>, StoreError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    // One snapshot, so the three queries agree.
    let mut tx = store.begin_read().await?;
    let conversations = tx
        .fetch_all(
            &PAGE,
            &[
                Param::Int(job_id),
                Param::Int(after_id),
                Param::Int(i64::from(limit)),
            ],
        )
        .await?;
    let Some(last) = conversations.last() else {
        return Ok(Vec::new());
    };
    let range = [
        Param::Int(job_id),
        Param::Int(after_id),
        Param::Int(last.int("id")?),
    ];
    let messages = tx.fetch_all(&MESSAGES_OF_PAGE, &range).await?;
    let usage = tx.fetch_all(&USAGE_OF_PAGE, &range).await?;
    tx.commit().await?;
    decode::assemble(&conversations, &messages, &usage)
}

/// `(scenario id, reward)` of each of a job's conversations that has a
/// reward, by scenario, then in id order.
pub(super) async fn scenario_rewards(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<Vec<(String, f64)>, StoreError> {
    let rows = store
        .reader()
        .fetch_all(&SCENARIO_REWARDS, &[Param::Int(job_id)])
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let scenario = row.text("scenario_id")?;
        // The query keeps rewards that are not NULL.
        if let Some(reward) = row.opt_float("reward")? {
            out.push((scenario, reward));
        }
    }
    Ok(out)
}

pub(super) async fn summary(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<JobSummary, StoreError> {
    let job = [Param::Int(job_id)];
    let mut tx = store.begin_read().await?;
    let totals = tx.fetch_one(&TOTALS, &job).await?;
    let terminations = tx.fetch_all(&TERMINATIONS, &job).await?;
    let usage = tx.fetch_all(&USAGE_BY_ROLE, &job).await?;
    let call_latencies = latencies(&mut tx, job_id).await?;
    tx.commit().await?;
    Ok(JobSummary {
        conversations: totals.int("conversations")?,
        mean_reward: totals.opt_float("mean_reward")?,
        terminations: terminations
            .iter()
            .map(|row| Ok((row.text("termination")?, row.int("n")?)))
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
pub(super) async fn latencies(
    on: &mut impl Runs,
    job_id: i64,
) -> Result<Vec<LatencyHistogram>, StoreError> {
    let rows = on.fetch_all(&LATENCIES, &[Param::Int(job_id)]).await?;
    let rows = rows
        .iter()
        .map(|row| {
            Ok((
                row.text("author")?,
                row.int("latency_ms")?,
                row.int("calls")?,
            ))
        })
        .collect::<Result<Vec<(String, i64, i64)>, sqlx::Error>>()?;
    Ok(LatencyHistogram::from_rows(rows))
}
