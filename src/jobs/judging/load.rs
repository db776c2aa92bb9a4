//! Everything a judging job needs, loaded from its spec and the store: the
//! judges (checked against the target), their endpoints, the judged job's
//! config, scenarios and personas; and the job's hash.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::{EndpointConfig, Job, MockConfig, Problem};
use crate::judge::hash::sha256_hex;
use crate::judge::{
    judges_of_job, load_judges_file, load_judges_text, unknown_endpoints, Judge, Mode,
};
use crate::persona::dataset::{load_job_personas, load_job_scenarios};
use crate::persona::{Persona, Scenario};
use crate::store::{JobKind, JobStore};

use super::super::error::RunError;
use super::super::stored::stored_job;
use super::super::work::WorkSettings;
use super::spec::{JudgesSource, JudgingSpec, JudgingTarget, INLINE_JUDGES};

/// Everything a judging job needs, loaded.
pub(super) struct Loaded {
    pub(super) judges: Vec<Judge>,
    pub(super) endpoints: BTreeMap<String, EndpointConfig>,
    /// How the job whose conversations are judged (A's, when pairwise) is
    /// worked.
    pub(super) source: Judged,
    pub(super) source_id: i64,
    pub(super) scenarios: Vec<Scenario>,
    pub(super) personas: Vec<Persona>,
}

/// What a judging job takes from the judged job's config: how many items
/// at once, leases and the circuit breaker, the mock's behaviour. An import
/// job has no config: the defaults a job config has.
#[derive(Debug, Clone)]
pub(super) struct Judged {
    pub(super) concurrency: usize,
    pub(super) settings: WorkSettings,
    pub(super) mock: MockConfig,
}

impl Judged {
    fn of(job: &Job) -> Judged {
        Judged {
            concurrency: job.concurrency,
            settings: WorkSettings::of(job),
            mock: job.mock.clone(),
        }
    }

    fn imported() -> Judged {
        let defaults = crate::config::file::JobDefaults::get();
        Judged {
            concurrency: defaults.concurrency,
            settings: WorkSettings {
                lease: defaults.lease,
                circuit_breaker: defaults.circuit_breaker,
            },
            mock: MockConfig::default(),
        }
    }
}

fn invalid(problems: Vec<Problem>) -> RunError {
    RunError::Invalid(problems)
}

pub(super) fn problem(what: &str, message: String) -> RunError {
    invalid(vec![Problem::in_file(Path::new(what), message)])
}

pub(super) async fn load(store: &dyn JobStore, spec: &JudgingSpec) -> Result<Loaded, RunError> {
    let source_id = match spec.target {
        JudgingTarget::Job { job_id } => job_id,
        JudgingTarget::Pairwise { a, .. } => a,
    };
    let source_row = store
        .get_job(source_id)
        .await?
        .ok_or(RunError::NoSuchJob(source_id))?;
    // The judged job's config, when it has one (an import job has none).
    let source = match source_row.kind {
        JobKind::Generation => Some(stored_job(&source_row)?),
        JobKind::Import => None,
        JobKind::Judging | JobKind::Synthesis => {
            return Err(problem(
                "--job",
                format!(
                    "job {source_id} is a {} job; judges judge the conversations of a generation \
                     or import job",
                    source_row.kind
                ),
            ))
        }
    };
    if let JudgingTarget::Pairwise { b, .. } = spec.target {
        store.get_job(b).await?.ok_or(RunError::NoSuchJob(b))?;
    }
    let (judges, own_endpoints, file) = match &spec.judges {
        JudgesSource::File { path } => {
            let set = load_judges_file(path).map_err(invalid)?;
            (set.judges, set.endpoints, path.clone())
        }
        JudgesSource::Job { job_id } => {
            let row = store
                .get_job(*job_id)
                .await?
                .ok_or(RunError::NoSuchJob(*job_id))?;
            let job = stored_job(&row)?;
            let judges = judges_of_job(&job).map_err(invalid)?;
            (judges, BTreeMap::new(), job.source.clone())
        }
        JudgesSource::Inline { toml, base } => {
            let label = PathBuf::from(INLINE_JUDGES);
            let set = load_judges_text(&label, toml, base).map_err(invalid)?;
            (set.judges, set.endpoints, label)
        }
    };
    let mut endpoints = source
        .as_ref()
        .map(|s| s.endpoints.clone())
        .unwrap_or_default();
    endpoints.extend(own_endpoints);
    let mut problems = unknown_endpoints(&file, &judges, |name| endpoints.contains_key(name));
    let pairwise = matches!(spec.target, JudgingTarget::Pairwise { .. });
    for judge in &judges {
        if pairwise != (judge.mode == Mode::Pairwise) {
            problems.push(Problem::in_file(
                &file,
                if pairwise {
                    format!(
                        "judge '{}' is not pairwise; pairs (--pairwise, or a target with a and b) are judged only by pairwise judges (mode = \"pairwise\")",
                        judge.name
                    )
                } else {
                    format!(
                        "judge '{}' is pairwise; it judges pairs: --pairwise --a JOB_A --b JOB_B, or a target with a and b",
                        judge.name
                    )
                },
            ));
        }
    }
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    // An import job's scenarios are in its conversations' metadata.
    let (scenarios, personas) = match &source {
        Some(source) => {
            let scenarios = load_job_scenarios(&source.dataset, source.user_simulator.mode())
                .unwrap_or_else(|p| {
                    tracing::warn!(
                        "the judged job's scenarios cannot be read now ({} problems); judging without them",
                        p.len()
                    );
                    Vec::new()
                });
            let personas = load_job_personas(source, scenarios.len()).unwrap_or_default();
            (scenarios, personas)
        }
        None => (Vec::new(), Vec::new()),
    };
    Ok(Loaded {
        judges,
        endpoints,
        source: source.as_ref().map_or_else(Judged::imported, Judged::of),
        source_id,
        scenarios,
        personas,
    })
}

/// The job's hash: the judges' own hashes (template text and model
/// included), the target and the filter.
pub(super) fn spec_hash(loaded: &Loaded, spec: &JudgingSpec) -> String {
    let mut text = String::from("judging v1\n");
    for judge in &loaded.judges {
        text.push_str(&format!("{}={}\n", judge.name, loaded.judge_hash(judge)));
    }
    text.push_str(&serde_json::to_string(&spec.target).unwrap_or_default());
    text.push_str(&format!("{:?}", spec.min_reward));
    sha256_hex(text.as_bytes())
}

impl Loaded {
    /// The judge's hash with the model of the endpoint it names: what its
    /// judgments and calls are cached by.
    pub(super) fn judge_hash(&self, judge: &Judge) -> String {
        let model = self
            .endpoints
            .get(&judge.endpoint)
            .map_or("", |e| e.settings.model.as_str());
        judge.config_hash(model)
    }

    /// The endpoint configs the judges use.
    pub(super) fn used_endpoints(&self) -> impl Iterator<Item = &EndpointConfig> {
        self.endpoints
            .iter()
            .filter(|(name, _)| self.judges.iter().any(|j| &j.endpoint == *name))
            .map(|(_, config)| config)
    }
}
