//! NeMo Gym rollouts (`--format nemo_gym`): one line per conversation, as
//! NeMo Gym's own rollout collection writes them: the row's fields,
//! `responses_create_params`, `response` (Responses-API output items), and
//! what `/verify` answered (`reward` and the verifier's own fields). It is the
//! request sparring sent to `/verify` merged with the reply, kept with the
//! conversation when it was verified, so each line is what NeMo Gym's
//! `BaseVerifyResponse` reads. Only conversations of a `nemo_gym`
//! environment have one.
//!
//! Token information stored with the policy's messages (see
//! `store::tokens`) is put on the items each generation produced, as NeMo
//! Gym's `TokenIDLogProbMixin` fields ([`put_tokens`]); the stored rollout
//! itself never holds them, so `/verify` and every other reader of the
//! conversation do without them.

use serde_json::Value;

use crate::env::nemo_gym::training::{self, Turn};
use crate::llm::message::{Message, Role, ToolCall};
use crate::store::{JobKind, JobRow, JobStore, MessageRow, StoredConversation};
use crate::token_ids::TokenIds;

use super::ExportError;

/// `Ok` when job `row` can be exported as NeMo Gym rollouts: a generation
/// job whose `[environment]` kind is `nemo_gym`. Otherwise the error names
/// the jobs of `store` that can.
pub async fn check_job(store: &dyn JobStore, row: &JobRow) -> Result<(), ExportError> {
    if is_nemo_gym_job(row) {
        return Ok(());
    }
    let nemo_gym_jobs = store
        .all_jobs()
        .await?
        .iter()
        .filter(|j| is_nemo_gym_job(j))
        .map(|j| j.id)
        .collect();
    Err(ExportError::NotNemoGym {
        job: row.id,
        nemo_gym_jobs,
    })
}

/// Whether `row` is a generation job over a NeMo Gym resources server (its
/// stored config's `[environment] kind`).
fn is_nemo_gym_job(row: &JobRow) -> bool {
    row.kind == JobKind::Generation
        && toml::from_str::<toml::Table>(&row.config_snapshot)
            .ok()
            .as_ref()
            .and_then(|config| config.get("environment")?.get("kind")?.as_str())
            == Some("nemo_gym")
}

/// `NeMo Gym jobs in this database: 3, 7`, or that there are none.
pub(super) fn nemo_gym_jobs_listed(jobs: &[i64]) -> String {
    if jobs.is_empty() {
        "this database has no NeMo Gym job".into()
    } else {
        let ids: Vec<String> = jobs.iter().map(i64::to_string).collect();
        format!("NeMo Gym jobs in this database: {}", ids.join(", "))
    }
}

/// Where a conversation keeps its verifier's record (see `jobs::generation::item`).
pub const RECORD_KEY: &str = "verifier_record";

pub fn line(c: &StoredConversation) -> Result<Value, ExportError> {
    let record = c
        .conversation
        .metadata
        .get(RECORD_KEY)
        .filter(|r| r.is_object())
        .ok_or_else(|| ExportError::Corrupt {
            conversation: c.conversation.id,
            message: "it has no NeMo Gym rollout (it was not verified by a NeMo Gym resources \
                      server); --format nemo_gym exports jobs whose [environment] kind is \
                      \"nemo_gym\""
                .into(),
        })?;
    let mut line = record.clone();
    // The stored reward is the reward (the record's is the same number).
    if let (Some(reward), Some(map)) = (c.conversation.reward, line.as_object_mut()) {
        map.insert("reward".into(), Value::from(reward));
    }
    Ok(line)
}

/// Put the token information stored with `c`'s messages (`tokens`, by
/// message idx, from [`TokenStore::message_tokens`](crate::store::TokenStore::message_tokens)) on the items of its rollout
/// `line` that each generation produced. Without any, `line` is unchanged.
pub fn put_tokens(
    line: &mut Value,
    c: &StoredConversation,
    tokens: &[(i64, TokenIds)],
) -> Result<(), ExportError> {
    if tokens.is_empty() {
        return Ok(());
    }
    let id = c.conversation.id;
    let corrupt = |message: String| ExportError::Corrupt {
        conversation: id,
        message,
    };
    // The policy's view, as the rollout was written from it.
    let rows: Vec<&MessageRow> = c
        .messages
        .iter()
        .filter(|m| !super::openai::is_user_tool_use(m))
        .collect();
    let messages = rows
        .iter()
        .map(|m| message_of(m).map_err(&corrupt))
        .collect::<Result<Vec<Message>, _>>()?;
    let turns: Vec<Turn> = rows
        .iter()
        .zip(&messages)
        .map(|(row, message)| Turn {
            message,
            tokens: tokens
                .binary_search_by_key(&row.idx, |(idx, _)| *idx)
                .ok()
                .map(|at| &tokens[at].1),
        })
        .collect();
    // The row's input is the prelude, stored as the system's messages.
    let prelude = rows.iter().take_while(|m| m.author == "system").count();
    training::put_on_rollout(line, prelude, &turns).map_err(|e| {
        corrupt(format!(
            "its token information has no place in its rollout: {e}"
        ))
    })
}

/// The rollout's group fields (see [`super::groups`]) as top-level fields
/// of the row, as NeMo Gym keeps a row's other fields; none without a group.
pub fn put_group(line: &mut Value, group: Option<&super::groups::GroupFields>) {
    if let (Some(map), Some(Value::Object(fields))) =
        (line.as_object_mut(), group.map(|g| serde_json::json!(g)))
    {
        map.extend(fields);
    }
}

/// A stored message as the engine had it.
fn message_of(m: &MessageRow) -> Result<Message, String> {
    let role =
        Role::parse(&m.role).ok_or_else(|| format!("message {} has role '{}'", m.idx, m.role))?;
    let tool_calls: Vec<ToolCall> = match &m.tool_calls {
        None => Vec::new(),
        Some(calls) => serde_json::from_value(calls.clone())
            .map_err(|e| format!("message {}'s tool_calls do not read: {e}", m.idx))?,
    };
    Ok(Message {
        tool_calls,
        tool_call_id: m.tool_call_id.clone(),
        ..Message::text(role, m.content.as_str())
    })
}
