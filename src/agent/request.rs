//! A run request as NeMo Gym's rollout collection sends it to `/run`: a
//! dataset row (`nemo_gym.base_resources_server.BaseRunRequest`):
//! `responses_create_params` (a Responses-API request with its `input`) and
//! the row's other fields, which go back in the answer as they came. NeMo
//! Gym's collection adds `_ng_task_index` and `_ng_rollout_index` (which
//! task of the dataset, which of its repeats).

use serde_json::{Map, Value};

use crate::persona::nemo_gym::REQUEST_FIELD;

use super::error::Invalid;

/// NeMo Gym's field for the row's position in the dataset.
pub const TASK_INDEX: &str = "_ng_task_index";
/// NeMo Gym's field for which repeat of the row this is.
pub const ROLLOUT_INDEX: &str = "_ng_rollout_index";
/// The field naming one of the job's own scenarios (a sparring scenario set).
pub const SCENARIO_FIELD: &str = "scenario_id";
/// The field naming one of the job's personas.
pub const PERSONA_FIELD: &str = "persona_id";

/// A checked run request.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    /// The body as sent.
    pub row: Map<String, Value>,
}

impl RunRequest {
    /// Read a request body; every problem names its field.
    pub fn read(body: &[u8]) -> Result<RunRequest, Invalid> {
        let value: Value = serde_json::from_slice(body).map_err(|e| {
            Invalid::at(
                &[],
                format!("the body is not JSON ({e}); send a NeMo Gym run request"),
            )
        })?;
        let Value::Object(row) = value else {
            return Err(Invalid::at(
                &[],
                "the body is not a JSON object; send a NeMo Gym row with `responses_create_params`",
            ));
        };
        let request =
            match row.get(REQUEST_FIELD) {
                Some(Value::Object(request)) => request,
                Some(_) => {
                    return Err(Invalid::at(
                        &[REQUEST_FIELD],
                        "must be an object (a Responses-API request with `input`)",
                    ))
                }
                None => return Err(Invalid::at(
                    &[REQUEST_FIELD],
                    "is missing; a run request carries the policy's Responses-API request there",
                )),
            };
        match request.get("input") {
            Some(Value::String(_) | Value::Array(_)) => {}
            Some(_) => {
                return Err(Invalid::at(
                    &[REQUEST_FIELD, "input"],
                    "must be a string or a list of input items",
                ))
            }
            None => return Err(Invalid::at(
                &[REQUEST_FIELD, "input"],
                "is missing; give the conversation's opening (a list, maybe empty, or a string)",
            )),
        }
        for field in [TASK_INDEX, ROLLOUT_INDEX] {
            match row.get(field) {
                None | Some(Value::Null) => {}
                Some(v) if v.as_u64().is_some_and(|n| n <= u64::from(u32::MAX)) => {}
                Some(_) => {
                    return Err(Invalid::at(
                        &[field],
                        format!("must be a whole number from 0 to {}", u32::MAX),
                    ))
                }
            }
        }
        for field in [SCENARIO_FIELD, PERSONA_FIELD] {
            match row.get(field) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) if !s.trim().is_empty() => {}
                Some(_) => {
                    return Err(Invalid::at(
                        &[field],
                        "must be a non-empty string naming one of the job's own",
                    ))
                }
            }
        }
        Ok(RunRequest { row })
    }

    /// The Responses-API request.
    pub fn responses_create_params(&self) -> &Map<String, Value> {
        // Checked by `read`.
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        self.row
            .get(REQUEST_FIELD)
            .and_then(Value::as_object)
            .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
    }

    pub fn task_index(&self) -> Option<u64> {
        self.row.get(TASK_INDEX).and_then(Value::as_u64)
    }

    pub fn rollout_index(&self) -> Option<u64> {
        self.row.get(ROLLOUT_INDEX).and_then(Value::as_u64)
    }

    pub fn text_field(&self, field: &str) -> Option<&str> {
        self.row.get(field).and_then(Value::as_str).map(str::trim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(body: &str) -> Result<RunRequest, Invalid> {
        RunRequest::read(body.as_bytes())
    }

    #[test]
    fn a_row_with_its_request_and_indices_is_read_as_sent() {
        let r = read(r#"{"responses_create_params": {"input": []}, "id": 3, "_ng_task_index": 2, "_ng_rollout_index": 1}"#).unwrap();
        assert_eq!(r.task_index(), Some(2));
        assert_eq!(r.rollout_index(), Some(1));
        assert_eq!(r.row["id"], 3);
    }

    #[test]
    fn each_bad_field_is_named() {
        let field = |body: &str| read(body).unwrap_err().field.join(".");
        assert_eq!(field("[1]"), "");
        assert_eq!(field("{}"), "responses_create_params");
        assert_eq!(
            field(r#"{"responses_create_params": 1}"#),
            "responses_create_params"
        );
        assert_eq!(
            field(r#"{"responses_create_params": {}}"#),
            "responses_create_params.input"
        );
        assert_eq!(
            field(r#"{"responses_create_params": {"input": 5}}"#),
            "responses_create_params.input"
        );
        assert_eq!(
            field(r#"{"responses_create_params": {"input": []}, "_ng_task_index": -1}"#),
            "_ng_task_index"
        );
        assert_eq!(
            field(r#"{"responses_create_params": {"input": []}, "scenario_id": ""}"#),
            "scenario_id"
        );
        let detail = read("{}").unwrap_err().detail();
        assert_eq!(detail["detail"][0]["loc"][1], "responses_create_params");
    }
}
