//! Which of a generation job's synthesized scenarios are solved, unsolved or
//! undecided (the rule is `verify::solved`), derived on every read rather
//! than stored: from one aggregate query over the job's items and their
//! rewards, and the tags of the scenarios file the job's stored config
//! names (the store keeps a conversation's scenario id, not its tags).
//! Exports leave out the conversations of the unsolved ones unless asked to
//! keep them, and `sparring stats` reports all three.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::Serialize;

use crate::config::load::from_snapshot;
use crate::persona::dataset::load_job_scenarios;
use crate::persona::Scenario;
use crate::store::{ItemStore, JobKind, JobRow, ScenarioAttempts, Store, StoreError};
use crate::verify::solved::{is_synthesized, outcome, ScenarioOutcome, SUCCESS_REWARD};

/// The ids of scenarios whose conversations an export leaves out: the
/// job's unsolved synthesized scenarios. Empty drops nothing; cheap to clone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnsolvedScenarios(Arc<BTreeSet<String>>);

impl UnsolvedScenarios {
    pub fn of(ids: impl IntoIterator<Item = String>) -> Self {
        UnsolvedScenarios(Arc::new(ids.into_iter().collect()))
    }

    pub fn contains(&self, scenario_id: &str) -> bool {
        self.0.contains(scenario_id)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One synthesized scenario's attempts and what they decide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decided {
    pub attempts: ScenarioAttempts,
    pub outcome: ScenarioOutcome,
}

/// The synthesized scenarios of a job and how their attempts ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SynthesizedOutcomes {
    /// Each synthesized scenario the job has items for, by id.
    pub scenarios: Vec<Decided>,
    /// Scenarios of the job's file without the tag: never unsolved.
    pub hand_written: u64,
    /// Scenario ids the job has items for that its scenarios file no longer
    /// holds (the file changed since the job ran): not classified.
    pub not_in_file: u64,
    /// Why the job's scenarios could not be read, when they could not: then
    /// no scenario is known to be synthesized, and none is unsolved.
    pub unreadable: Option<String>,
}

impl SynthesizedOutcomes {
    /// How many synthesized scenarios ended `which` way.
    pub fn count(&self, which: ScenarioOutcome) -> u64 {
        self.scenarios.iter().filter(|d| d.outcome == which).count() as u64
    }

    /// The ids of the scenarios that ended `which` way, sorted.
    pub fn ids(&self, which: ScenarioOutcome) -> impl Iterator<Item = &str> {
        self.scenarios
            .iter()
            .filter(move |d| d.outcome == which)
            .map(|d| d.attempts.scenario_id.as_str())
    }

    /// The unsolved ones, for an export's filter.
    pub fn unsolved(&self) -> UnsolvedScenarios {
        UnsolvedScenarios::of(self.ids(ScenarioOutcome::Unsolved).map(str::to_string))
    }

    /// The outcome of scenario `id`, when it is a synthesized scenario of the job.
    pub fn outcome_of(&self, id: &str) -> Option<ScenarioOutcome> {
        self.scenarios
            .binary_search_by(|d| d.attempts.scenario_id.as_str().cmp(id))
            .ok()
            .map(|at| self.scenarios[at].outcome)
    }
}

/// The outcomes of job `row`'s synthesized scenarios (none for a judging
/// job, or a job whose scenarios carry no `synthesized` tag).
pub async fn synthesized_outcomes(
    store: &dyn Store,
    row: &JobRow,
) -> Result<SynthesizedOutcomes, StoreError> {
    Ok(with_scenarios(store, row).await?.1)
}

/// [`synthesized_outcomes`] with the job's scenarios as its file holds them
/// now, in file order (none when it cannot be read).
pub async fn with_scenarios(
    store: &dyn ItemStore,
    row: &JobRow,
) -> Result<(Vec<Scenario>, SynthesizedOutcomes), StoreError> {
    if row.kind != JobKind::Generation {
        return Ok((Vec::new(), SynthesizedOutcomes::default()));
    }
    let scenarios = match job_scenarios(row) {
        Ok(scenarios) => scenarios,
        Err(reason) => {
            let outcomes = SynthesizedOutcomes {
                unreadable: Some(reason),
                ..Default::default()
            };
            return Ok((Vec::new(), outcomes));
        }
    };
    let synthesized: BTreeSet<&str> = scenarios
        .iter()
        .filter(|s| is_synthesized(&s.tags))
        .map(|s| s.id.as_str())
        .collect();
    let mut outcomes = SynthesizedOutcomes {
        hand_written: (scenarios.len() - synthesized.len()) as u64,
        ..Default::default()
    };
    // A job of hand-written scenarios only (most jobs) costs no query.
    if !synthesized.is_empty() {
        let known: BTreeSet<&str> = scenarios.iter().map(|s| s.id.as_str()).collect();
        for attempts in store.scenario_attempts(row.id, SUCCESS_REWARD).await? {
            let id = attempts.scenario_id.as_str();
            if synthesized.contains(id) {
                let outcome = outcome(&attempts);
                outcomes.scenarios.push(Decided { attempts, outcome });
            } else if !known.contains(id) {
                outcomes.not_in_file += 1;
            }
        }
    }
    Ok((scenarios, outcomes))
}

/// The scenarios of the file job `row`'s stored config names, or why they
/// cannot be read.
fn job_scenarios(row: &JobRow) -> Result<Vec<Scenario>, String> {
    let first = |problems: Vec<crate::config::Problem>| {
        problems
            .first()
            .map_or_else(|| "unknown problem".to_string(), ToString::to_string)
    };
    let job = from_snapshot(
        &format!("job {} (stored config)", row.id),
        &row.config_snapshot,
    )
    .map_err(|problems| {
        format!(
            "the job's stored config no longer loads: {}",
            first(problems)
        )
    })?;
    load_job_scenarios(&job.dataset, job.user_simulator.mode()).map_err(|problems| {
        format!(
            "the job's scenarios file {} no longer loads: {}",
            job.dataset.data().display(),
            first(problems)
        )
    })
}
