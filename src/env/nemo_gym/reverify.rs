//! Re-verifying recorded NeMo Gym rollouts: send each to `/verify` again and
//! compare the reward with the one recorded.
//!
//! A rollout is sent as recorded, less what `/verify` itself answered
//! (`reward`, `mask_sample`, `failure_kind`, `failure_reason`) and less the
//! nulls its `responses_create_params` carries (NeMo Gym answers 422 to them).
//! Many shipped rollouts lack fields their verifier reads (`ground_truth`,
//! `options`, ...); when a dataset row has the same input, the missing fields
//! are taken from it, and the rollout says so. A rollout that still lacks a
//! field the dataset's rows carry, or that the server's validation names, is
//! reported as "cannot re-verify: the rollout lacks X", never as a reward.

use std::collections::{BTreeSet, HashMap};

use serde_json::{json, Map, Value};

use crate::persona::nemo_gym::{input_key, Numbered, REQUEST_FIELD};

use super::rollout::drop_nulls;
use super::server::{Cookies, ResourcesServer};

/// The verify reply's own fields, left out of what is sent again.
const VERIFY_OUTPUT: [&str; 4] = ["reward", "mask_sample", "failure_kind", "failure_reason"];

/// The rows of the dataset a job names, to complete rollouts from.
#[derive(Debug, Default)]
pub struct RowIndex {
    rows: HashMap<String, (usize, Map<String, Value>)>,
    /// Fields every row carries besides the request: what the verifier reads.
    fields: BTreeSet<String>,
}

impl RowIndex {
    pub fn new(rows: Vec<Numbered>) -> RowIndex {
        let mut fields: Option<BTreeSet<String>> = None;
        let mut index = HashMap::new();
        for (line, row) in rows {
            let keys: BTreeSet<String> = row
                .keys()
                .filter(|k| *k != REQUEST_FIELD)
                .cloned()
                .collect();
            fields = Some(match fields {
                None => keys,
                Some(f) => f.intersection(&keys).cloned().collect(),
            });
            if let Some(key) = row
                .get(REQUEST_FIELD)
                .and_then(Value::as_object)
                .and_then(input_key)
            {
                index.entry(key).or_insert((line, row));
            }
        }
        RowIndex {
            rows: index,
            fields: fields.unwrap_or_default(),
        }
    }
}

/// What re-verifying one rollout found.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Agrees {
        reward: f64,
    },
    Differs {
        recorded: f64,
        now: f64,
    },
    /// The rollout cannot be sent as it is; `lacks` names missing fields.
    CannotReverify {
        reason: String,
    },
    /// `/verify` answered, but with no valid reward (masked, failed).
    Unscored {
        reason: String,
    },
    /// The server failed (down, 5xx after retries, not JSON).
    Failed {
        error: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub line: usize,
    /// The dataset line whose fields completed the rollout, and which fields.
    pub completed_from: Option<(usize, Vec<String>)>,
    pub outcome: Outcome,
}

/// Re-verify one recorded rollout (the JSON object on `line`).
pub async fn reverify(
    server: &ResourcesServer,
    rows: &RowIndex,
    line: usize,
    rollout: &Map<String, Value>,
) -> Check {
    let mut check = Check {
        line,
        completed_from: None,
        outcome: Outcome::Failed {
            error: String::new(),
        },
    };
    let recorded = match rollout.get("reward").and_then(Value::as_f64) {
        Some(r) => r,
        None => {
            check.outcome = Outcome::CannotReverify {
                reason: "the rollout has no recorded `reward` to compare with".into(),
            };
            return check;
        }
    };
    for field in [REQUEST_FIELD, "response"] {
        if !rollout.get(field).is_some_and(Value::is_object) {
            check.outcome = Outcome::CannotReverify {
                reason: format!("the rollout lacks {field}"),
            };
            return check;
        }
    }
    let mut request: Map<String, Value> = rollout
        .iter()
        .filter(|(k, _)| !VERIFY_OUTPUT.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(r) = request.remove(REQUEST_FIELD) {
        request.insert(REQUEST_FIELD.into(), drop_nulls(r));
    }
    let key = rollout
        .get(REQUEST_FIELD)
        .and_then(Value::as_object)
        .and_then(input_key);
    if let Some((row_line, row)) = key.and_then(|k| rows.rows.get(&k)) {
        let mut taken = Vec::new();
        for (k, v) in row {
            if !request.contains_key(k) {
                request.insert(k.clone(), v.clone());
                taken.push(k.clone());
            }
        }
        if !taken.is_empty() {
            check.completed_from = Some((*row_line, taken));
        }
    }
    let lacking: Vec<&str> = rows
        .fields
        .iter()
        .filter(|f| !request.contains_key(*f))
        .map(String::as_str)
        .collect();
    if !lacking.is_empty() {
        check.outcome = Outcome::CannotReverify {
            reason: format!(
                "the rollout lacks {} (every dataset row carries it; no row has the rollout's input to take it from)",
                lacking.join(", ")
            ),
        };
        return check;
    }
    check.outcome = send(server, recorded, Value::Object(request)).await;
    check
}

async fn send(server: &ResourcesServer, recorded: f64, request: Value) -> Outcome {
    let mut cookies = Cookies::default();
    let failed = |what: &str, e: String| Outcome::Failed {
        error: format!("{what}: {e}"),
    };
    match server.post("/seed_session", &request, &mut cookies).await {
        Ok(reply) if reply.is_success() => {}
        Ok(reply) => {
            return failed(
                "POST /seed_session",
                format!("HTTP {}: {}", reply.status, reply.excerpt()),
            )
        }
        Err(e) => return failed("POST /seed_session", e.to_string()),
    }
    let result = server.post("/verify", &request, &mut cookies).await;
    let close = json!({"resources_session_id": "usersim-reverify", "episode_id": {"rollout_id": "usersim-reverify"}});
    if let Err(e) = server.post("/close_session", &close, &mut cookies).await {
        tracing::debug!("POST /close_session failed: {e}");
    }
    let reply = match result {
        Ok(reply) => reply,
        Err(e) => return failed("POST /verify", e.to_string()),
    };
    let json: Result<Value, _> = serde_json::from_slice(&reply.body);
    if reply.status == 422 {
        let missing = json.as_ref().map(missing_fields).unwrap_or_default();
        if !missing.is_empty() {
            return Outcome::CannotReverify {
                reason: format!(
                    "the rollout lacks {} (the server's validation requires it)",
                    missing.join(", ")
                ),
            };
        }
    }
    if !reply.is_success() {
        return failed(
            "POST /verify",
            format!("HTTP {}: {}", reply.status, reply.excerpt()),
        );
    }
    let Ok(json) = json else {
        return failed(
            "POST /verify",
            format!(
                "HTTP {} with a body that is not JSON: {}",
                reply.status,
                reply.excerpt()
            ),
        );
    };
    let Value::Object(sent) = request else {
        return failed("POST /verify", "the request is not an object".into());
    };
    match super::reply::verification(&sent, &json) {
        Err(e) => failed("POST /verify", e),
        Ok(v) => match v.unscored {
            Some(reason) => Outcome::Unscored { reason },
            None if (v.reward - recorded).abs() <= 1e-9 => Outcome::Agrees { reward: v.reward },
            None => Outcome::Differs {
                recorded,
                now: v.reward,
            },
        },
    }
}

/// The body fields a FastAPI 422 names as missing.
fn missing_fields(reply: &Value) -> Vec<String> {
    reply
        .get("detail")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|d| d.get("type").and_then(Value::as_str) == Some("missing"))
        .filter_map(|d| {
            let loc = d.get("loc")?.as_array()?;
            let path: Vec<String> = loc
                .iter()
                .skip(1)
                .map(|p| match p {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            (!path.is_empty()).then(|| path.join("."))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_422_names_the_missing_fields() {
        let reply = json!({"detail": [
            {"type": "missing", "loc": ["body", "ground_truth"], "msg": "Field required"},
            {"type": "string_type", "loc": ["body", "id"], "msg": "bad"}
        ]});
        assert_eq!(missing_fields(&reply), vec!["ground_truth".to_string()]);
    }

    #[test]
    fn the_fields_every_row_carries_are_what_a_rollout_must_have() {
        let rows = vec![
            (
                1,
                json!({REQUEST_FIELD: {"input": "a"}, "options": [], "uuid": "x"})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
            (
                2,
                json!({REQUEST_FIELD: {"input": "b"}, "options": []})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        ];
        let index = RowIndex::new(rows);
        assert_eq!(index.fields, BTreeSet::from(["options".to_string()]));
        assert_eq!(index.rows.len(), 2);
    }
}
