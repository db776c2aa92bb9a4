//! A job's dataset as configured: scenarios from a scenarios file or NeMo Gym
//! rows, and personas (a stand-in one when the job has no simulated user).

use std::collections::BTreeMap;

use crate::config::file::SamplePer;
use crate::config::job::DatasetFile;
use crate::config::{DatasetFormat, Job, Problem, UserMode};

use super::load::{load_personas, load_scenarios};
use super::nemo_gym::{load_rows, RowOptions};
use super::table::{load_personas as load_table_personas, TableJob};
use super::{Persona, Scenario};

/// The id of the persona used when a job has no personas (no simulated user).
pub const STAND_IN_PERSONA: &str = "dataset_user";

pub fn load_job_scenarios(
    dataset: &DatasetFile,
    mode: UserMode,
) -> Result<Vec<Scenario>, Vec<Problem>> {
    match dataset.format() {
        DatasetFormat::Scenarios => load_scenarios(dataset.data()),
        DatasetFormat::NemoGym => load_rows(
            dataset.data(),
            RowOptions {
                mode,
                user_goal_field: dataset.user_goal_field.as_deref(),
                replay: dataset.replay.as_deref(),
            },
        ),
    }
}

/// The job's personas: a folder or JSONL of personas, the rows a persona
/// table's `[persona_table]` draws (`scenarios` is the job's number of
/// scenarios, for `per = "scenario"`), or the stand-in.
pub fn load_job_personas(job: &Job, scenarios: usize) -> Result<Vec<Persona>, Vec<Problem>> {
    let dataset = &job.dataset;
    match (&dataset.personas, &dataset.persona_table) {
        (Some(path), Some(settings)) => {
            let sample = settings.sample.map(|n| match settings.per {
                SamplePer::Job => u64::from(n),
                SamplePer::Scenario => u64::from(n).saturating_mul(scenarios.max(1) as u64),
            });
            let table = TableJob {
                config: &job.source,
                table: path,
                settings,
                job_seed: job.seed,
                sample,
            };
            load_table_personas(&table, &mut |_| {}).map_err(|e| vec![e.into_problem()])
        }
        (Some(path), None) => load_personas(path),
        (None, _) => Ok(vec![stand_in_persona()]),
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
