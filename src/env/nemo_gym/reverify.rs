//! Re-verifying recorded NeMo Gym rollouts: send each to `/verify` again and
//! compare the reward with the one recorded.
//!
//! The request is built as NeMo Gym's own re-verification builds it
//! (`rollout_reverification.py`, `_build_verify_payload`): the input row plus
//! the rollout's `response`, never what the previous `/verify` answered. A
//! rollout is that reply, so its input is what is left once the reply's own
//! fields are taken out: `reward`, `mask_sample`, `failure_kind`,
//! `failure_reason` and whatever else the server's verify reply model
//! declares beyond its request model (read from its OpenAPI document, see
//! `openapi`). The nulls of `responses_create_params` go too (NeMo Gym
//! answers 422 to them).
//!
//! Many shipped rollouts lack fields their verifier reads (`ground_truth`,
//! `options`, ...); when a dataset row has the same input, the missing fields
//! are taken from it (never its output fields), and the rollout says so. A
//! rollout that still lacks a field the server's verify (or seed-session)
//! request model requires, or that the server's validation names, is
//! reported as "cannot re-verify: the rollout lacks X", never as a reward.
//!
//! Some verifiers read the session's state, which the rollout's tool calls
//! built (`example_session_state_mgmt` counts its `increment_counter`
//! calls). So each rollout gets a fresh session, seeded with its input, and
//! the `function_call` items of its `response` are replayed on it, in order,
//! before `/verify`; what the tools answer is not used (the verifier reads
//! the outputs the rollout recorded).

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::persona::nemo_gym::{input_key, Numbered, REQUEST_FIELD};

use super::openapi::ServerModels;
use super::rollout::drop_nulls;
use super::server::{Cookies, ResourcesServer};
use super::tool_name::normalize_tool_name;

/// The rows of a dataset, by input, to complete rollouts from.
#[derive(Debug, Default)]
pub struct RowIndex {
    rows: HashMap<String, (usize, Map<String, Value>)>,
}

impl RowIndex {
    pub fn new(rows: Vec<Numbered>) -> RowIndex {
        let mut index = HashMap::new();
        for (line, row) in rows {
            if let Some(key) = row
                .get(REQUEST_FIELD)
                .and_then(Value::as_object)
                .and_then(input_key)
            {
                index.entry(key).or_insert((line, row));
            }
        }
        RowIndex { rows: index }
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
    /// How many of the rollout's function calls were replayed.
    pub replayed: usize,
    pub outcome: Outcome,
}

/// Re-verify one recorded rollout (the JSON object on `line`) against a
/// server whose document says `models`.
pub async fn reverify(
    server: &ResourcesServer,
    models: &ServerModels,
    rows: &RowIndex,
    line: usize,
    rollout: &Map<String, Value>,
) -> Check {
    let mut check = Check {
        line,
        completed_from: None,
        replayed: 0,
        outcome: Outcome::Failed {
            error: String::new(),
        },
    };
    let Some(recorded) = rollout.get("reward").and_then(Value::as_f64) else {
        check.outcome = Outcome::CannotReverify {
            reason: "the rollout has no recorded `reward` to compare with".into(),
        };
        return check;
    };
    for field in [REQUEST_FIELD, "response"] {
        if !rollout.get(field).is_some_and(Value::is_object) {
            check.outcome = Outcome::CannotReverify {
                reason: format!("the rollout lacks {field}"),
            };
            return check;
        }
    }
    let input = |(k, _): &(&String, &Value)| k.as_str() != "response" && !models.is_output(k);
    let mut request: Map<String, Value> = rollout
        .iter()
        .filter(input)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(r) = request.remove(REQUEST_FIELD) {
        request.insert(REQUEST_FIELD.into(), drop_nulls(r));
    }
    let key = rollout
        .get(REQUEST_FIELD)
        .and_then(Value::as_object)
        .and_then(input_key);
    let row = key.and_then(|k| rows.rows.get(&k));
    if let Some((row_line, row)) = row {
        let mut taken = Vec::new();
        for (k, v) in row.iter().filter(input) {
            if !request.contains_key(k) {
                request.insert(k.clone(), v.clone());
                taken.push(k.clone());
            }
        }
        if !taken.is_empty() {
            check.completed_from = Some((*row_line, taken));
        }
    }
    if let Some(reason) = lacking(models, &request, row.map(|(line, _)| *line)) {
        check.outcome = Outcome::CannotReverify { reason };
        return check;
    }
    let response = rollout.get("response").cloned().unwrap_or(Value::Null);
    let (outcome, replayed) = send(server, recorded, request, response).await;
    check.replayed = replayed;
    check.outcome = outcome;
    check
}

/// What the request lacks of the fields the server's request models require,
/// said as the reason it cannot be re-verified.
fn lacking(
    models: &ServerModels,
    request: &Map<String, Value>,
    row_line: Option<usize>,
) -> Option<String> {
    let declared = models.declared.as_ref()?;
    let missing = |fields: &[String]| -> Vec<String> {
        fields
            .iter()
            .filter(|f| f.as_str() != "response" && !request.contains_key(*f))
            .cloned()
            .collect()
    };
    let verify = missing(&declared.verify_required);
    let seed: Vec<String> = missing(&declared.seed_required)
        .into_iter()
        .filter(|f| !verify.contains(f))
        .collect();
    let mut because = Vec::new();
    if !verify.is_empty() {
        because.push(format!(
            "{} (the server's verify request model requires {})",
            verify.join(", "),
            if verify.len() == 1 { "it" } else { "them" }
        ));
    }
    if !seed.is_empty() {
        because.push(format!(
            "{} (its seed_session request model requires {})",
            seed.join(", "),
            if seed.len() == 1 { "it" } else { "them" }
        ));
    }
    if because.is_empty() {
        return None;
    }
    let them = if verify.len() + seed.len() == 1 {
        "it"
    } else {
        "them"
    };
    let source = match row_line {
        Some(line) => format!("nor does the dataset row of its input (line {line}) have {them}"),
        None => format!("no dataset row has the rollout's input to take {them} from"),
    };
    Some(format!(
        "the rollout lacks {}; {source}",
        because.join(" and ")
    ))
}

/// Seed a fresh session with `request`, replay the response's function calls
/// on it, then verify; the outcome and how many calls were replayed.
async fn send(
    server: &ResourcesServer,
    recorded: f64,
    mut request: Map<String, Value>,
    response: Value,
) -> (Outcome, usize) {
    let mut cookies = Cookies::default();
    let failed = |what: &str, e: String| Outcome::Failed {
        error: format!("{what}: {e}"),
    };
    let seed = Value::Object(request.clone());
    match server.post("/seed_session", &seed, &mut cookies).await {
        Ok(reply) if reply.is_success() => {}
        Ok(reply) => {
            return (
                failed(
                    "POST /seed_session",
                    format!("HTTP {}: {}", reply.status, reply.excerpt()),
                ),
                0,
            )
        }
        Err(e) => return (failed("POST /seed_session", e.to_string()), 0),
    }
    let mut replayed = 0;
    for (name, arguments) in function_calls(&response) {
        let path = format!("/{}", normalize_tool_name(&name));
        if let Err(e) = server.post(&path, &arguments, &mut cookies).await {
            let what = format!(
                "replaying the rollout's call {} (POST {path})",
                replayed + 1
            );
            return (failed(&what, e.to_string()), replayed);
        }
        replayed += 1;
    }
    request.insert("response".into(), response);
    let request = Value::Object(request);
    let result = server.post("/verify", &request, &mut cookies).await;
    let close = json!({"resources_session_id": "sparring-reverify", "episode_id": {"rollout_id": "sparring-reverify"}});
    if let Err(e) = server.post("/close_session", &close, &mut cookies).await {
        tracing::debug!("POST /close_session failed: {e}");
    }
    (judge(recorded, request, result), replayed)
}

/// The `function_call` items of a response's output, in order, as a tool
/// name and JSON arguments. A call whose arguments are not JSON is left out:
/// NeMo Gym's agent does not send it to the server either.
fn function_calls(response: &Value) -> Vec<(String, Value)> {
    response
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("function_call"))
        .filter_map(|item| {
            let name = item.get("name")?.as_str()?.to_string();
            let arguments = match item.get("arguments") {
                Some(Value::String(text)) => serde_json::from_str(text).ok()?,
                Some(object @ Value::Object(_)) => object.clone(),
                _ => return None,
            };
            Some((name, arguments))
        })
        .collect()
}

/// What `/verify` answered, against the recorded reward.
fn judge(
    recorded: f64,
    request: Value,
    result: Result<super::server::Reply, crate::llm::LlmError>,
) -> Outcome {
    let failed = |e: String| Outcome::Failed {
        error: format!("POST /verify: {e}"),
    };
    let reply = match result {
        Ok(reply) => reply,
        Err(e) => return failed(e.to_string()),
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
        return failed(format!("HTTP {}: {}", reply.status, reply.excerpt()));
    }
    let Ok(json) = json else {
        return failed(format!(
            "HTTP {} with a body that is not JSON: {}",
            reply.status,
            reply.excerpt()
        ));
    };
    let Value::Object(sent) = request else {
        return failed("the request is not an object".into());
    };
    match super::reply::verification(&sent, &json) {
        Err(e) => failed(e),
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
    fn the_response_function_calls_are_replayed_in_order_with_json_arguments() {
        let response = json!({"output": [
            {"type": "function_call", "name": "increment_counter", "arguments": "{\"count\": 2}", "call_id": "a"},
            {"type": "function_call_output", "call_id": "a", "output": "{}"},
            {"type": "function_call", "name": "mcp__counter__get_counter_value", "arguments": "{}", "call_id": "b"},
            {"type": "function_call", "name": "broken", "arguments": "{not json", "call_id": "c"},
            {"type": "message", "role": "assistant", "content": []}
        ]});
        let calls = function_calls(&response);
        assert_eq!(
            calls,
            vec![
                ("increment_counter".to_string(), json!({"count": 2})),
                ("mcp__counter__get_counter_value".to_string(), json!({})),
            ]
        );
    }

    #[test]
    fn only_fields_the_request_models_require_are_said_to_be_lacking() {
        let document = json!({
            "paths": {
                "/seed_session": {"post": {"requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Seed"}}}}}},
                "/verify": {"post": {
                    "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Req"}}}},
                    "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Res"}}}}}
                }}
            },
            "components": {"schemas": {
                "Seed": {"properties": {"initial_count": {}}, "required": ["initial_count"]},
                "Req": {"properties": {"responses_create_params": {}, "response": {}, "expected_count": {}, "uuid": {}},
                        "required": ["responses_create_params", "response", "expected_count"]},
                "Res": {"properties": {"responses_create_params": {}, "response": {}, "reward": {}}}
            }}
        });
        let models = ServerModels::read(&document);
        let request = json!({"responses_create_params": {}, "uuid": "u"});
        let reason = lacking(&models, request.as_object().unwrap(), None).unwrap();
        assert_eq!(
            reason,
            "the rollout lacks expected_count (the server's verify request model requires it) \
             and initial_count (its seed_session request model requires it); no dataset row \
             has the rollout's input to take them from"
        );
        let complete =
            json!({"responses_create_params": {}, "expected_count": 3, "initial_count": 1});
        assert_eq!(lacking(&models, complete.as_object().unwrap(), None), None);
        assert_eq!(
            lacking(&ServerModels::unknown(), request.as_object().unwrap(), None),
            None,
            "without the server's models nothing is said to be required"
        );
    }
}
