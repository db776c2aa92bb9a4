//! A run request as a scenario of the job: a NeMo Gym row is read as
//! `[dataset] format = "nemo_gym"` reads each row (the job's own row of
//! the same input lends it the gold calls and replay the row lacks); a
//! request naming `scenario_id` plays that scenario of the job's own set
//! (a sparring scenario set, with its simulated user and environment).

use std::borrow::Cow;

use crate::config::DatasetFormat;
use crate::persona::nemo_gym::{input_key, request_key, row_as_scenario, row_id, RowOptions};
use crate::persona::{Persona, Scenario};

use super::error::Invalid;
use super::open::Agent;
use super::request::{RunRequest, PERSONA_FIELD, SCENARIO_FIELD};

impl Agent {
    /// The scenario a request plays.
    pub(super) fn scenario_of<'a>(
        &'a self,
        request: &RunRequest,
    ) -> Result<Cow<'a, Scenario>, Invalid> {
        let prepared = self.generation.prepared();
        if let Some(id) = request.text_field(SCENARIO_FIELD) {
            return match prepared.scenario_index.get(id) {
                Some(&i) => Ok(Cow::Borrowed(&prepared.scenarios[i])),
                None => Err(Invalid::at(
                    &[SCENARIO_FIELD],
                    format!(
                        "'{id}' is not one of the job's {} scenarios",
                        prepared.scenarios.len()
                    ),
                )),
            };
        }
        if self.job.dataset.format() != DatasetFormat::NemoGym {
            return Err(Invalid::at(
                &[SCENARIO_FIELD],
                "is missing; this agent's job plays sparring scenarios ([dataset] scenarios), \
                 so a run request names one of them by `scenario_id`",
            ));
        }
        let options = RowOptions {
            mode: self.job.user_simulator.mode(),
            user_goal_field: self.job.dataset.user_goal_field.as_deref(),
            replay: None,
        };
        let mut scenario = row_as_scenario(&request.row, options)
            .map_err(|e| Invalid::at(&[crate::persona::nemo_gym::REQUEST_FIELD], e))?;
        // The job's own row: named by the row's identity (`id`, `uuid`,
        // `task_id`), else found by the input both share.
        let own = row_id(&request.row)
            .and_then(|id| prepared.scenario_index.get(&id))
            .or_else(|| {
                request_key(request.responses_create_params(), options.mode)
                    .and_then(|key| self.rows_by_input.get(&key))
            })
            .map(|&i| &prepared.scenarios[i]);
        match (own, row_id(&request.row)) {
            (Some(own), id) => {
                scenario.id = id.unwrap_or_else(|| own.id.clone());
                if scenario.evaluation.actions.is_empty() {
                    scenario.evaluation.actions = own.evaluation.actions.clone();
                }
                if scenario.evaluation.reference_reply.is_none() {
                    scenario.evaluation.reference_reply = own.evaluation.reference_reply.clone();
                }
            }
            (None, Some(id)) => scenario.id = id,
            (None, None) => scenario.id = input_id(request),
        }
        Ok(Cow::Owned(scenario))
    }

    /// The persona a request's user plays: the one it names, else one of
    /// the job's chosen by the seed.
    pub(super) fn persona_of(&self, request: &RunRequest, seed: u64) -> Result<&Persona, Invalid> {
        let prepared = self.generation.prepared();
        match request.text_field(PERSONA_FIELD) {
            Some(id) => match prepared.persona_index.get(id) {
                Some(&i) => Ok(&prepared.personas[i]),
                None => Err(Invalid::at(
                    &[PERSONA_FIELD],
                    format!(
                        "'{id}' is not one of the job's {} personas",
                        prepared.personas.len()
                    ),
                )),
            },
            None => prepared
                .personas
                .get((seed % prepared.personas.len().max(1) as u64) as usize)
                .ok_or_else(|| Invalid::at(&[PERSONA_FIELD], "the job has no personas")),
        }
    }
}

/// A row without an id of its own, not among the job's rows, is named by
/// its input: the same input is the same task.
fn input_id(request: &RunRequest) -> String {
    use sha2::{Digest, Sha256};
    let key = input_key(request.responses_create_params()).unwrap_or_default();
    let digest = Sha256::digest(key.as_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("input-{hex}")
}
