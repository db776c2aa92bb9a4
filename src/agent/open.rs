//! An agent server over one job config: its inputs checked as `sparring run`
//! checks them, its models connected, and its job in the store, found again
//! by its config hash when the agent restarts.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

use sha2::{Digest, Sha256};

use crate::config::UserMode;
use crate::config::{DatasetFormat, Job, Problem};
use crate::jobs::generation::item::Generation;
use crate::jobs::generation::setup::with_tools_model;
use crate::jobs::generation::{job_persona, prepare};
use crate::jobs::models::{connect_models, Models};
use crate::jobs::Context;
use crate::persona::nemo_gym::scenario_key;
use crate::persona::Scenario;
use crate::store::{JobKind, JobRow, JobStatus, NewJob, Store};

use super::error::OpenError;

/// A job config serving run requests.
pub struct Agent {
    pub(super) store: std::sync::Arc<dyn Store>,
    pub(super) job_row: JobRow,
    pub(super) job: Job,
    pub(super) generation: Generation,
    /// The job's own rows by the input a run request of the same row shares
    /// with them (NeMo Gym rows only, [`scenario_key`]): such a request
    /// takes their id, gold calls and replays. Rows whose keys are the same
    /// are left out: a request could be either.
    pub(super) rows_by_input: HashMap<String, usize>,
    /// For run requests without NeMo Gym's indices: a fresh key each.
    pub(super) runs: AtomicU64,
    /// For each item key collected more than once (a trainer's next step
    /// sends the same task and repeat indices again): the `#n` to try
    /// next, so storing the n-th copy tries one key, not n.
    pub(super) next_copy: std::sync::Mutex<HashMap<String, u32>>,
    /// Kept alive as long as the agent: the mock they may talk to.
    _models: Models,
}

/// The agent's job's config hash: the job's, marked as an agent's, so that
/// `sparring run` of the same config makes its own job.
pub fn agent_job_hash(config_hash: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"sparring agent\n");
    hasher.update(config_hash.as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Agent {
    /// Check `job`'s inputs, connect its models and find or make its job.
    pub async fn open(ctx: &Context, job: Job) -> Result<Agent, OpenError> {
        let prepared = prepare(&job).await.map_err(OpenError::Invalid)?;
        let judged: Vec<&str> = prepared
            .scenarios
            .iter()
            .filter(|s| {
                s.evaluation
                    .reward_basis
                    .iter()
                    .any(|c| c.judge_name().is_some())
            })
            .map(|s| s.id.as_str())
            .take(3)
            .collect();
        if !judged.is_empty() {
            return Err(OpenError::Invalid(vec![Problem::in_file(
                &job.source,
                format!(
                    "scenarios {} have `judge:NAME` rewards, which the agent server does not \
                     score yet (their judgments are stored under a conversation id); use \
                     `sparring run` for them, or rewards the environment and rules give",
                    judged.join(", ")
                ),
            )]));
        }
        let models = connect_models(&job, &prepared.scenarios, ctx.mock()).await?;
        let prepared = with_tools_model(&job, prepared, &models)
            .await
            .map_err(|p| OpenError::Invalid(vec![p]))?;
        let rows_by_input = match job.dataset.format() {
            DatasetFormat::NemoGym => rows_by_key(&prepared.scenarios, job.user_simulator.mode()),
            DatasetFormat::Scenarios => HashMap::new(),
        };
        let hash = agent_job_hash(&prepared.config_hash);
        // Any of them may play a request's user.
        let personas: Vec<_> = prepared.personas.iter().map(job_persona).collect();
        let generation = Generation::new(&job, prepared, &models);
        generation
            .prepare_policy()
            .await
            .map_err(|p| OpenError::Invalid(vec![p]))?;
        let store = ctx.store.clone();
        let job_row = match store.find_job_by_config_hash(&hash).await? {
            Some(row) => row,
            None => {
                store
                    .create_job(&NewJob {
                        name: format!("{} (agent)", job.name),
                        kind: JobKind::Generation,
                        config_snapshot: job.snapshot.clone(),
                        config_hash: hash,
                    })
                    .await?
            }
        };
        store.put_job_personas(job_row.id, &personas).await?;
        store.set_job_status(job_row.id, JobStatus::Running).await?;

        Ok(Agent {
            store,
            job_row,
            job,
            generation,
            rows_by_input,
            runs: AtomicU64::new(0),
            next_copy: std::sync::Mutex::new(HashMap::new()),
            _models: models,
        })
    }

    /// The agent's job in the store.
    pub fn job(&self) -> &JobRow {
        &self.job_row
    }

    /// The job config's name.
    pub fn name(&self) -> &str {
        &self.job.name
    }

    /// Mark the job done (the agent stops); a restart makes it running again.
    pub async fn close(&self) -> Result<(), OpenError> {
        self.store
            .set_job_status(self.job_row.id, JobStatus::Done)
            .await?;
        Ok(())
    }
}

/// The rows of `scenarios` by [`scenario_key`], those that share a key left
/// out.
fn rows_by_key(scenarios: &[Scenario], mode: UserMode) -> HashMap<String, usize> {
    let mut rows: HashMap<String, Option<usize>> = HashMap::new();
    for (i, scenario) in scenarios.iter().enumerate() {
        if let Some(key) = scenario_key(scenario, mode) {
            rows.entry(key)
                .and_modify(|row| *row = None)
                .or_insert(Some(i));
        }
    }
    rows.into_iter()
        .filter_map(|(key, row)| Some((key, row?)))
        .collect()
}
