//! A job's dataset as configured: scenarios from a scenarios file or NeMo Gym
//! rows, and personas (a stand-in one when the job has no simulated user).

use std::collections::BTreeMap;

use crate::config::job::DatasetConfig;
use crate::config::{DatasetFormat, Problem, UserMode};

use super::load::{load_personas, load_scenarios};
use super::nemo_gym::{load_rows, RowOptions};
use super::{Persona, Scenario};

/// The id of the persona used when a job has no personas (no simulated user).
pub const STAND_IN_PERSONA: &str = "dataset_user";

pub fn load_job_scenarios(
    dataset: &DatasetConfig,
    mode: UserMode,
) -> Result<Vec<Scenario>, Vec<Problem>> {
    match dataset.format {
        DatasetFormat::Scenarios => load_scenarios(&dataset.scenarios),
        DatasetFormat::NemoGym => load_rows(
            &dataset.scenarios,
            RowOptions {
                mode,
                user_goal_field: dataset.user_goal_field.as_deref(),
                replay: dataset.replay.as_deref(),
            },
        ),
    }
}

pub fn load_job_personas(dataset: &DatasetConfig) -> Result<Vec<Persona>, Vec<Problem>> {
    match &dataset.personas {
        Some(path) => load_personas(path),
        None => Ok(vec![stand_in_persona()]),
    }
}

/// Who the user is when nobody simulates one: the dataset speaks for them.
fn stand_in_persona() -> Persona {
    Persona {
        id: STAND_IN_PERSONA.into(),
        name: "Dataset user".into(),
        background: "The user whose turns the dataset recorded.".into(),
        traits: Vec::new(),
        speaking_style: "As recorded.".into(),
        language: "English".into(),
        knobs: BTreeMap::new(),
        attributes: Default::default(),
    }
}
