//! What a resources server says about itself in the OpenAPI document FastAPI
//! serves at `/openapi.json`: which protocol it speaks, and what its own
//! pydantic models declare for `/verify` and `/seed_session`.
//!
//! Re-verification builds its request from these as NeMo Gym's own does from
//! the input row (`rollout_reverification.py`): the fields the verify reply
//! model adds to the request model's (`reward`, `equivalence_score`,
//! `extracted_answer`, ...) are the previous verify's output and are never
//! sent back (servers that build their reply as `Reply(**request, field=…)`
//! answer 500 to them); only the request models' required fields are what a
//! rollout must carry.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::server::ResourcesServer;

/// The protocol a server's paths say it speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `/seed_session`, tools, `/verify`: what sparring drives.
    Resources,
    /// `/reset` and `/step` (NeMo Gym's `GymnasiumServer`), no `/verify`.
    Gymnasium,
    /// Neither (or no document).
    Unknown,
}

/// The verify reply's own fields in every NeMo Gym server
/// (`BaseVerifyResponse`), also when the document cannot be read.
pub const BASE_OUTPUTS: [&str; 4] = ["reward", "mask_sample", "failure_kind", "failure_reason"];

/// What a server's models declare.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Declared {
    /// The verify request model's required fields (`response` among them).
    pub verify_required: Vec<String>,
    /// The fields the verify reply model declares and the request model
    /// does not: the previous verify's output.
    pub outputs: BTreeSet<String>,
    /// The seed-session request model's required fields.
    pub seed_required: Vec<String>,
}

/// A server's OpenAPI document, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerModels {
    pub protocol: Protocol,
    /// `None` when the document does not describe `/verify`'s models.
    pub declared: Option<Declared>,
}

impl ServerModels {
    /// What is known of a server that publishes no document.
    pub fn unknown() -> ServerModels {
        ServerModels {
            protocol: Protocol::Unknown,
            declared: None,
        }
    }

    /// Read an OpenAPI document.
    pub fn read(document: &Value) -> ServerModels {
        let paths = document.get("paths").and_then(Value::as_object);
        let has = |path: &str| paths.is_some_and(|p| p.contains_key(path));
        let protocol = if has("/verify") && has("/seed_session") {
            Protocol::Resources
        } else if has("/reset") && has("/step") {
            Protocol::Gymnasium
        } else {
            Protocol::Unknown
        };
        let schemas = document
            .pointer("/components/schemas")
            .and_then(Value::as_object);
        let body = |path: &str| {
            let operation = paths?.get(path)?.get("post")?;
            model(
                operation.pointer("/requestBody/content/application~1json/schema")?,
                schemas,
            )
        };
        let reply = |path: &str| {
            let operation = paths?.get(path)?.get("post")?;
            model(
                operation.pointer("/responses/200/content/application~1json/schema")?,
                schemas,
            )
        };
        let declared = match (body("/verify"), reply("/verify")) {
            (Some(request), Some(reply)) => Some(Declared {
                verify_required: required(request),
                outputs: properties(reply)
                    .difference(&properties(request))
                    .cloned()
                    .collect(),
                seed_required: body("/seed_session").map(required).unwrap_or_default(),
            }),
            _ => None,
        };
        ServerModels { protocol, declared }
    }

    /// The fields a rollout carries that are the previous verify's output.
    pub fn is_output(&self, field: &str) -> bool {
        BASE_OUTPUTS.contains(&field)
            || self
                .declared
                .as_ref()
                .is_some_and(|d| d.outputs.contains(field))
    }
}

/// The server's document, read; what is unknown when it serves none (a
/// server that is not FastAPI, or one that is down).
pub async fn fetch(server: &ResourcesServer) -> ServerModels {
    match server.get_once("/openapi.json").await {
        Ok(reply) if reply.is_success() => serde_json::from_slice(&reply.body)
            .map(|document| ServerModels::read(&document))
            .unwrap_or_else(|_| ServerModels::unknown()),
        Ok(_) | Err(_) => ServerModels::unknown(),
    }
}

/// The object schema `schema` names (a `$ref` into the components followed).
fn model<'d>(schema: &'d Value, schemas: Option<&'d Map<String, Value>>) -> Option<&'d Value> {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => schemas?.get(reference.strip_prefix("#/components/schemas/")?)?,
        None => schema,
    };
    schema.get("properties").is_some().then_some(schema)
}

fn properties(schema: &Value) -> BTreeSet<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

fn required(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The shape of equivalence_rule's document (nemo-gym 0.7.0), cut down.
    fn equivalence_rule() -> Value {
        json!({
            "paths": {
                "/seed_session": {"post": {"responses": {}}},
                "/verify": {"post": {
                    "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/VerifyRequest"}}}},
                    "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/VerifyResponse"}}}}}
                }}
            },
            "components": {"schemas": {
                "VerifyRequest": {"properties": {"responses_create_params": {}, "response": {}, "expected_answer": {}},
                                  "required": ["responses_create_params", "response", "expected_answer"]},
                "VerifyResponse": {"properties": {"responses_create_params": {}, "response": {}, "reward": {},
                                                  "mask_sample": {}, "equivalence_score": {}},
                                   "required": ["reward", "equivalence_score"]}
            }}
        })
    }

    #[test]
    fn the_reply_models_own_fields_are_outputs_and_the_request_models_required_fields_are_required()
    {
        let models = ServerModels::read(&equivalence_rule());
        assert_eq!(models.protocol, Protocol::Resources);
        let declared = models.declared.clone().unwrap();
        assert_eq!(
            declared.verify_required,
            ["responses_create_params", "response", "expected_answer"]
        );
        assert!(models.is_output("equivalence_score"));
        assert!(models.is_output("reward") && models.is_output("failure_kind"));
        assert!(!models.is_output("expected_answer"));
        assert!(
            !models.is_output("uuid"),
            "a field neither model declares is input"
        );
        assert!(declared.seed_required.is_empty());
    }

    #[test]
    fn reset_and_step_without_verify_is_the_gymnasium_protocol() {
        let document = json!({"paths": {"/reset": {"post": {}}, "/step": {"post": {}},
                                        "/aggregate_metrics": {"post": {}}}});
        let models = ServerModels::read(&document);
        assert_eq!(models.protocol, Protocol::Gymnasium);
        assert_eq!(models.declared, None);
        assert!(models.is_output("reward") && !models.is_output("equivalence_score"));
        assert_eq!(ServerModels::read(&json!({})).protocol, Protocol::Unknown);
    }
}
