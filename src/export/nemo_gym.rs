//! NeMo Gym rollouts (`--format nemo_gym`): one line per conversation, as
//! NeMo Gym's own rollout collection writes them: the row's fields,
//! `responses_create_params`, `response` (Responses-API output items), and
//! what `/verify` answered (`reward` and the verifier's own fields). It is the
//! request usersim sent to `/verify` merged with the reply, kept with the
//! conversation when it was verified, so each line is what NeMo Gym's
//! `BaseVerifyResponse` reads. Only conversations of a `nemo_gym`
//! environment have one.

use serde_json::Value;

use crate::store::StoredConversation;

use super::ExportError;

/// Where a conversation keeps its verifier's record (see `jobs::generate`).
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
