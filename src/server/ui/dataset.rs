//! Who the simulated user was and what they wanted: a conversation's
//! scenario and persona, read again from the files its job's stored config
//! names, for a person who sees only their ids otherwise.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::load::from_snapshot;
use crate::persona::dataset::{load_job_personas, load_job_scenarios};
use crate::persona::Scenario;
use crate::store::JobRow;
use crate::verify::Criteria;

#[derive(Debug, Clone, Serialize, Default)]
pub struct ScenarioView {
    pub id: String,
    pub description: String,
    pub reason_for_contact: String,
    pub known_info: String,
    pub unknown_info: String,
    /// Hidden from the policy: how the user is told to behave.
    pub task_instructions: String,
    pub turns: Vec<String>,
    pub facts: Vec<String>,
    pub gold_actions: usize,
    pub reward_basis: String,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct PersonaView {
    pub id: String,
    pub name: String,
    pub background: String,
    pub traits: Vec<String>,
    pub speaking_style: String,
    pub language: String,
    /// The knob values drawn for this conversation (stored with it).
    pub knobs: BTreeMap<String, String>,
}

/// What could be read; `missing` says why something could not.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    pub scenario: Option<ScenarioView>,
    pub criteria: Option<Criteria>,
    pub persona: Option<PersonaView>,
    pub missing: Vec<String>,
}

/// The scenario and persona of a conversation of generation job `job`, with
/// the persona knobs it drew (`metadata.persona_knobs`).
pub fn read(
    job: &JobRow,
    scenario_id: &str,
    persona_id: &str,
    knobs: &serde_json::Value,
) -> Dataset {
    let mut out = Dataset::default();
    let config = match from_snapshot(&format!("job {}", job.id), &job.config_snapshot) {
        Ok(config) => config,
        Err(problems) => {
            out.missing.push(format!(
                "the job's stored config no longer loads ({}), so its scenarios and personas cannot be read",
                problems.first().map_or_else(String::new, |p| p.message.clone())
            ));
            return out;
        }
    };
    let loaded = load_job_scenarios(&config.dataset, config.user_simulator.mode());
    let scenario_count = loaded.as_ref().map_or(1, Vec::len);
    match loaded {
        Ok(scenarios) => match scenarios.into_iter().find(|s| s.id == scenario_id) {
            Some(s) => {
                out.criteria = Some(s.evaluation.clone());
                out.scenario = Some(scenario_view(s));
            }
            None => out.missing.push(format!(
                "scenario '{scenario_id}' is no longer in {}",
                config.dataset.data().display()
            )),
        },
        Err(problems) => out.missing.push(format!(
            "the scenarios file {} no longer loads: {}",
            config.dataset.data().display(),
            problems
                .first()
                .map_or_else(String::new, |p| p.message.clone())
        )),
    }
    match load_job_personas(&config, scenario_count) {
        Ok(personas) => match personas.into_iter().find(|p| p.id == persona_id) {
            Some(p) => {
                out.persona = Some(PersonaView {
                    id: p.id,
                    name: p.name,
                    background: p.background,
                    traits: p.traits,
                    speaking_style: p.speaking_style,
                    language: p.language,
                    knobs: knobs_of(knobs),
                })
            }
            None => out.missing.push(format!(
                "persona '{persona_id}' is no longer in the job's personas"
            )),
        },
        Err(problems) => out.missing.push(format!(
            "the job's personas no longer load: {}",
            problems
                .first()
                .map_or_else(String::new, |p| p.message.clone())
        )),
    }
    out
}

/// The scenario and its gold of an imported conversation, as its import
/// stored them in its metadata (`scenario`, `evaluation`): an import job
/// has no scenario file to read again.
pub fn imported(scenario_id: &str, metadata: &serde_json::Value) -> Dataset {
    let mut out = Dataset::default();
    let user = metadata
        .get("scenario")
        .and_then(|s| serde_json::from_value::<crate::persona::UserScenario>(s.clone()).ok());
    let criteria = metadata
        .get(crate::jobs::import::EVALUATION_KEY)
        .and_then(|e| serde_json::from_value::<Criteria>(e.clone()).ok());
    if user.is_none() && criteria.is_none() {
        out.missing
            .push("the imported file gave no scenario for this conversation".into());
        return out;
    }
    let scenario = Scenario {
        id: scenario_id.to_string(),
        description: String::new(),
        difficulty: None,
        tags: Vec::new(),
        user: user.unwrap_or_default(),
        initial_state: serde_json::Value::Null,
        evaluation: criteria.clone().unwrap_or_default(),
        prelude: Vec::new(),
        tools: None,
        probe: None,
    };
    out.criteria = criteria;
    out.scenario = Some(scenario_view(scenario));
    out
}

fn knobs_of(knobs: &serde_json::Value) -> BTreeMap<String, String> {
    knobs
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str().map_or_else(|| v.to_string(), str::to_string),
            )
        })
        .collect()
}

fn scenario_view(s: Scenario) -> ScenarioView {
    let basis = serde_json::to_value(&s.evaluation.reward_basis)
        .map(|v| match v {
            serde_json::Value::String(s) => s,
            serde_json::Value::Array(parts) => parts
                .iter()
                .filter_map(serde_json::Value::as_str)
                .collect::<Vec<_>>()
                .join(" × "),
            other => other.to_string(),
        })
        .unwrap_or_default();
    ScenarioView {
        id: s.id,
        description: s.description,
        reason_for_contact: s.user.reason_for_contact,
        known_info: s.user.known_info,
        unknown_info: s.user.unknown_info,
        task_instructions: s.user.task_instructions,
        turns: s.user.turns,
        facts: s.evaluation.communicate.clone(),
        gold_actions: s.evaluation.actions.len(),
        reward_basis: basis,
    }
}
