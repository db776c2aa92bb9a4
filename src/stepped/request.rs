//! What opens a session (OpenEnv's `reset` data, the session API's body):
//! the scenario (by id, inline, or chosen by the seed), the persona (by id,
//! inline, or chosen by the seed), the seed, and what the caller's policy
//! is called. Each wrong field is named.

use serde_json::{Map, Value};

use crate::persona::load::{persona_problems, scenario_issues};
use crate::persona::{Persona, Scenario};

use super::error::Invalid;

/// The fields an open request may have.
pub const OPEN_FIELDS: &[&str] = &[
    "scenario_id",
    "scenario",
    "persona_id",
    "persona",
    "seed",
    "episode_id",
    "model",
    "sample",
];

/// Longest `episode_id` and `model` (OpenEnv's `episode_id` limit).
pub const MAX_NAME_CHARS: usize = 255;
/// Highest `sample` index.
pub const MAX_SAMPLE: u64 = 1_000_000;
/// What a session's policy is stored as when the caller does not say.
pub const DEFAULT_MODEL: &str = "external";

/// Which scenario a session plays.
#[derive(Debug, Clone, PartialEq)]
pub enum ScenarioChoice {
    /// One of the job's, by id.
    Id(String),
    /// Given in the request, as a scenarios file holds it.
    Inline(Box<Scenario>),
    /// One of the job's, chosen by the seed.
    BySeed,
}

/// Which persona plays the user.
#[derive(Debug, Clone, PartialEq)]
pub enum PersonaChoice {
    /// One of the job's (a persona file's, or a persona table's sampled row), by id.
    Id(String),
    /// Given in the request, as a personas `.jsonl` holds it.
    Inline(Box<Persona>),
    /// One of the job's, chosen by the seed.
    BySeed,
}

/// An open request, read.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenRequest {
    pub scenario: ScenarioChoice,
    pub persona: PersonaChoice,
    /// `None`: drawn from the job's seed and the session.
    pub seed: Option<u64>,
    /// The caller's own name for the episode (OpenEnv's `episode_id`).
    pub episode_id: Option<String>,
    /// What plays the policy, as stored with the conversation.
    pub model: String,
    /// The sample index stored with the conversation (pass^k and rollout
    /// groups count a scenario's samples).
    pub sample: u64,
}

impl Default for OpenRequest {
    fn default() -> Self {
        OpenRequest {
            scenario: ScenarioChoice::BySeed,
            persona: PersonaChoice::BySeed,
            seed: None,
            episode_id: None,
            model: DEFAULT_MODEL.to_string(),
            sample: 0,
        }
    }
}

impl OpenRequest {
    /// Read `value` (a JSON object, or null for every default). The first
    /// wrong field is named.
    pub fn read(value: &Value) -> Result<OpenRequest, Invalid> {
        let object = match value {
            Value::Null => return Ok(OpenRequest::default()),
            Value::Object(object) => object,
            _ => {
                return Err(Invalid::at(
                    "",
                    "is not a JSON object; send {\"scenario_id\": ..., \"seed\": ...} or {}",
                ))
            }
        };
        if let Some(unknown) = object.keys().find(|k| !OPEN_FIELDS.contains(&k.as_str())) {
            return Err(Invalid::at(
                unknown.as_str(),
                format!(
                    "is not a field of an open request; known: {}",
                    OPEN_FIELDS.join(", ")
                ),
            ));
        }
        let scenario = match (object.get("scenario_id"), object.get("scenario")) {
            (Some(_), Some(_)) => {
                return Err(Invalid::at(
                    "scenario",
                    "give either `scenario_id` (one of the job's) or `scenario` (a scenario \
                     object), not both",
                ))
            }
            (Some(id), None) => ScenarioChoice::Id(text(object, "scenario_id", id)?),
            (None, Some(inline)) => ScenarioChoice::Inline(Box::new(inline_scenario(inline)?)),
            (None, None) => ScenarioChoice::BySeed,
        };
        let persona = match (object.get("persona_id"), object.get("persona")) {
            (Some(_), Some(_)) => {
                return Err(Invalid::at(
                    "persona",
                    "give either `persona_id` (one of the job's) or `persona` (a persona \
                     object), not both",
                ))
            }
            (Some(id), None) => PersonaChoice::Id(text(object, "persona_id", id)?),
            (None, Some(inline)) => PersonaChoice::Inline(Box::new(inline_persona(inline)?)),
            (None, None) => PersonaChoice::BySeed,
        };
        let seed = match object.get("seed") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| {
                Invalid::at(
                    "seed",
                    format!("is {v}; give a whole number from 0 to {}", u64::MAX),
                )
            })?),
        };
        let episode_id = match object.get("episode_id") {
            None | Some(Value::Null) => None,
            Some(v) => Some(text(object, "episode_id", v)?),
        };
        let model = match object.get("model") {
            None | Some(Value::Null) => DEFAULT_MODEL.to_string(),
            Some(v) => text(object, "model", v)?,
        };
        let sample = match object.get("sample") {
            None | Some(Value::Null) => 0,
            Some(v) => v.as_u64().filter(|s| *s <= MAX_SAMPLE).ok_or_else(|| {
                Invalid::at(
                    "sample",
                    format!("is {v}; give a whole number from 0 to {MAX_SAMPLE}"),
                )
            })?,
        };
        Ok(OpenRequest {
            scenario,
            persona,
            seed,
            episode_id,
            model,
            sample,
        })
    }
}

/// A non-blank string of at most [`MAX_NAME_CHARS`] characters.
fn text(_object: &Map<String, Value>, field: &str, value: &Value) -> Result<String, Invalid> {
    let Some(s) = value.as_str() else {
        return Err(Invalid::at(field, format!("is {value}; give a string")));
    };
    if s.trim().is_empty() {
        return Err(Invalid::at(field, "is blank"));
    }
    if s.chars().count() > MAX_NAME_CHARS {
        return Err(Invalid::at(
            field,
            format!(
                "has {} characters; at most {MAX_NAME_CHARS}",
                s.chars().count()
            ),
        ));
    }
    Ok(s.to_string())
}

/// A scenario given in the request, checked as a scenarios file's line is.
fn inline_scenario(value: &Value) -> Result<Scenario, Invalid> {
    let scenario: Scenario = serde_json::from_value(value.clone()).map_err(|e| {
        Invalid::at(
            "scenario",
            format!("is not a scenario ({e}); give one as a line of a scenarios file holds it"),
        )
    })?;
    if let Some(issue) = scenario_issues(&scenario).into_iter().next() {
        return Err(Invalid::at("scenario", issue));
    }
    if scenario.tools.is_none() && scenario.evaluation.reward_basis.is_missing() {
        return Err(Invalid::at(
            "scenario.evaluation.reward_basis",
            "is missing or empty: nothing would score the conversation; name what does \
             (e.g. [\"db\", \"communicate\"]) or say \"none\" for an unscored one",
        ));
    }
    Ok(scenario)
}

/// A persona given in the request, checked as a personas file's is.
fn inline_persona(value: &Value) -> Result<Persona, Invalid> {
    let persona: Persona = serde_json::from_value(value.clone()).map_err(|e| {
        Invalid::at(
            "persona",
            format!("is not a persona ({e}); give one as a personas .jsonl line holds it"),
        )
    })?;
    if let Some(problem) = persona_problems(&persona).into_iter().next() {
        return Err(Invalid::at("persona", problem));
    }
    Ok(persona)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_empty_request_chooses_everything_by_the_seed() {
        assert_eq!(
            OpenRequest::read(&json!({})).unwrap(),
            OpenRequest::default()
        );
        assert_eq!(
            OpenRequest::read(&Value::Null).unwrap(),
            OpenRequest::default()
        );
    }

    #[test]
    fn each_wrong_field_is_named() {
        let field = |v: Value| OpenRequest::read(&v).unwrap_err().field;
        assert_eq!(field(json!({"seed": -1})), "seed");
        assert_eq!(field(json!({"seed": "7"})), "seed");
        assert_eq!(field(json!({"scenario_id": 3})), "scenario_id");
        assert_eq!(field(json!({"scenario_id": " "})), "scenario_id");
        assert_eq!(
            field(json!({"scenario_id": "a", "scenario": {}})),
            "scenario"
        );
        assert_eq!(field(json!({"persona": {"id": "x"}})), "persona");
        assert_eq!(field(json!({"sample": 1_000_001})), "sample");
        assert_eq!(field(json!({"episode_id": "e".repeat(256)})), "episode_id");
        assert_eq!(field(json!({"sede": 1})), "sede");
        assert_eq!(field(json!([1])), "");
    }

    #[test]
    fn an_inline_scenario_is_checked_as_a_scenarios_file_line() {
        let ok = json!({"id": "s1", "user": {"reason_for_contact": "my order is late"},
                        "evaluation": {"reward_basis": "none"}});
        let read = OpenRequest::read(&json!({"scenario": ok, "seed": 7})).unwrap();
        assert!(matches!(read.scenario, ScenarioChoice::Inline(s) if s.id == "s1"));
        assert_eq!(read.seed, Some(7));
        let unscored = json!({"id": "s1", "user": {"reason_for_contact": "x"}});
        assert_eq!(
            OpenRequest::read(&json!({"scenario": unscored}))
                .unwrap_err()
                .field,
            "scenario.evaluation.reward_basis"
        );
    }
}
