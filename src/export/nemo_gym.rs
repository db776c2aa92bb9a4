//! NeMo Gym rollouts (`--format nemo_gym`): one line per conversation, as
//! NeMo Gym's own rollout collection writes them: the row's fields,
//! `responses_create_params`, `response` (Responses-API output items), and
//! what `/verify` answered (`reward` and the verifier's own fields). It is the
//! request usersim sent to `/verify` merged with the reply, kept with the
//! conversation when it was verified, so each line is what NeMo Gym's
//! `BaseVerifyResponse` reads. Only conversations of a `nemo_gym`
//! environment have one.

use serde_json::Value;

use crate::store::{JobKind, JobRow, Store, StoredConversation};

use super::ExportError;

/// `Ok` when job `row` can be exported as NeMo Gym rollouts: a generation
/// job whose `[environment]` kind is `nemo_gym`. Otherwise the error names
/// the jobs of `store` that can.
pub async fn check_job(store: &dyn Store, row: &JobRow) -> Result<(), ExportError> {
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
