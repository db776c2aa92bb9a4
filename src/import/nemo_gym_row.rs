//! What every NeMo Gym rollout row says the same way, whoever played its
//! user: the task and trial it names, and how many user turns it holds.
//! Read by both row readers ([`super::nemo_gym`] and
//! [`super::nemo_user_sim`]), so neither imports the other for it.

use serde_json::{Map, Value};

use super::tau2::id_text;
use super::Origin;
use crate::llm::message::{Message, Role};

/// The task and trial a NeMo Gym row names.
pub(super) fn origin(row: &Map<String, Value>) -> Origin {
    let scenario_id = row
        .get("_ng_task_id")
        .and_then(|t| t.get("task_id"))
        .and_then(id_text)
        .or_else(|| row.get("task").and_then(|t| t.get("id")).and_then(id_text))
        .or_else(|| row.get("id").and_then(id_text))
        .or_else(|| row.get("_ng_task_index").and_then(id_text));
    Origin {
        scenario_id,
        persona_id: None,
        trial: row.get("_ng_rollout_index").and_then(Value::as_i64),
    }
}

pub(super) fn user_turns(messages: &[Message]) -> usize {
    messages.iter().filter(|m| m.role == Role::User).count()
}
