//! Judging jobs: judges × stored conversations (or matched pairs of
//! conversations from two jobs) as items, worked like any other job (leases,
//! limits, retries, resume, workers, progress). Each item stores one judgment
//! with the model calls it made; calls already stored for the same judge hash
//! and conversations are reused, so re-judging only does what is missing.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::config::{EndpointConfig, Job, Problem};
use crate::judge::hash::sha256_hex;
use crate::judge::{
    judges_of_job, load_judges_file, load_judges_text, resolved_persona, run as run_judge,
    unknown_endpoints, JudgeInputs, JudgeStatus, Mode, Other,
};
use crate::judge::{Judge, JudgeOutcome};
use crate::llm::ChatModel;
use crate::persona::dataset::{load_job_personas, load_job_scenarios};
use crate::persona::{Persona, Scenario};
use crate::store::{
    self, ItemRow, JobKind, JobRow, JobStatus, NewItem, NewJob, NewJudgment, Store,
    StoredConversation,
};

use super::context::Context;
use super::error::RunError;
use super::judge_calls::{from_call, to_call};
use super::models::{connect_endpoints, Connected};
use super::options::RunOptions;
pub use super::report::JudgingReport;
use super::stored::{find_or_create, stored_job, ByName};
use super::work::{owner_name, work, ItemRunner, Outcome, WorkOptions, WorkSettings};

/// Where a judging job's judges come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum JudgesSource {
    /// A `judges.toml` (absolute path; read again on resume).
    File { path: PathBuf },
    /// The `[[judges]]` of a generation job's stored config.
    Job { job_id: i64 },
    /// Judges TOML sent with the job (the service), kept here so that a
    /// resumed job judges with the same judges; template paths are relative
    /// to `base`.
    Inline { toml: String, base: PathBuf },
}

/// What problems in inline judges name as their file.
pub const INLINE_JUDGES: &str = "judges";

/// What a judging job judges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JudgingTarget {
    /// Every conversation of a job, with the judges that judge one conversation.
    Job { job_id: i64 },
    /// Conversations of job A against those of job B for the same scenario,
    /// persona and sample, with the pairwise judges.
    Pairwise { a: i64, b: i64 },
}

/// A judging job as stored in its job row (JSON): enough to rebuild it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgingSpec {
    pub judges: JudgesSource,
    pub target: JudgingTarget,
    /// Only conversations with at least this reward (A's, when pairwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_reward: Option<f64>,
}

/// Everything a judging job needs, loaded.
struct Loaded {
    judges: Vec<Judge>,
    endpoints: BTreeMap<String, EndpointConfig>,
    /// The job whose conversations are judged (A's, when pairwise).
    source: Job,
    source_id: i64,
    scenarios: Vec<Scenario>,
    personas: Vec<Persona>,
}

fn invalid(problems: Vec<Problem>) -> RunError {
    RunError::Invalid(problems)
}

fn problem(what: &str, message: String) -> RunError {
    invalid(vec![Problem::in_file(Path::new(what), message)])
}

async fn load(store: &dyn Store, spec: &JudgingSpec) -> Result<Loaded, RunError> {
    let source_id = match spec.target {
        JudgingTarget::Job { job_id } => job_id,
        JudgingTarget::Pairwise { a, .. } => a,
    };
    let source_row = store
        .get_job(source_id)
        .await?
        .ok_or(RunError::NoSuchJob(source_id))?;
    if source_row.kind != JobKind::Generation {
        return Err(problem(
            "--job",
            format!(
                "job {source_id} is a {} job; judges judge the conversations of a generation job",
                source_row.kind
            ),
        ));
    }
    let source = stored_job(&source_row)?;
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
    let mut endpoints = source.endpoints.clone();
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
    let scenarios =
        load_job_scenarios(&source.dataset, source.user_simulator.mode).unwrap_or_else(|p| {
            tracing::warn!(
                "the judged job's scenarios cannot be read now ({} problems); judging without them",
                p.len()
            );
            Vec::new()
        });
    let personas = load_job_personas(&source.dataset).unwrap_or_default();
    Ok(Loaded {
        judges,
        endpoints,
        source,
        source_id,
        scenarios,
        personas,
    })
}

/// The job's hash: the judges' own hashes (template text and model
/// included), the target and the filter.
fn spec_hash(loaded: &Loaded, spec: &JudgingSpec) -> String {
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
    fn judge_hash(&self, judge: &Judge) -> String {
        let model = self
            .endpoints
            .get(&judge.endpoint)
            .map_or("", |e| e.model.as_str());
        judge.config_hash(model)
    }
}

/// Item key: `JUDGE:A` or `JUDGE:A:B` (conversation ids).
fn item_key(judge: &str, a: i64, b: Option<i64>) -> String {
    match b {
        Some(b) => format!("{judge}:{a}:{b}"),
        None => format!("{judge}:{a}"),
    }
}

fn parse_key(key: &str) -> Option<(&str, i64, Option<i64>)> {
    let mut parts = key.rsplitn(3, ':').collect::<Vec<_>>();
    parts.reverse();
    match parts.as_slice() {
        [judge, a, b] if b.parse::<i64>().is_ok() && a.parse::<i64>().is_ok() => {
            Some((judge, a.parse().ok()?, Some(b.parse().ok()?)))
        }
        _ => {
            let (judge, a) = key.rsplit_once(':')?;
            Some((judge, a.parse().ok()?, None))
        }
    }
}

async fn plan(
    store: &dyn Store,
    loaded: &Loaded,
    spec: &JudgingSpec,
) -> Result<Vec<NewItem>, RunError> {
    let keep = |reward: Option<f64>| {
        spec.min_reward
            .is_none_or(|m| reward.is_some_and(|r| r >= m))
    };
    let mut items = Vec::new();
    match spec.target {
        JudgingTarget::Job { job_id } => {
            let conversations = store.conversation_keys(job_id).await?;
            for judge in &loaded.judges {
                for c in conversations.iter().filter(|c| keep(c.reward)) {
                    items.push(NewItem {
                        key: item_key(&judge.name, c.conversation_id, None),
                        scenario_id: c.scenario_id.clone(),
                        persona_id: c.persona_id.clone(),
                        sample: c.sample,
                        seed: 0,
                    });
                }
            }
        }
        JudgingTarget::Pairwise { a, b } => {
            let others: HashMap<(String, String, i64), i64> = store
                .conversation_keys(b)
                .await?
                .into_iter()
                .map(|c| ((c.scenario_id, c.persona_id, c.sample), c.conversation_id))
                .collect();
            let mine = store.conversation_keys(a).await?;
            for judge in &loaded.judges {
                for c in mine.iter().filter(|c| keep(c.reward)) {
                    let key = (c.scenario_id.clone(), c.persona_id.clone(), c.sample);
                    if let Some(&other) = others.get(&key) {
                        items.push(NewItem {
                            key: item_key(&judge.name, c.conversation_id, Some(other)),
                            scenario_id: c.scenario_id.clone(),
                            persona_id: c.persona_id.clone(),
                            sample: c.sample,
                            seed: 0,
                        });
                    }
                }
            }
        }
    }
    Ok(items)
}

impl Loaded {
    /// The endpoint configs the judges use.
    fn used_endpoints(&self) -> impl Iterator<Item = &EndpointConfig> {
        self.endpoints
            .iter()
            .filter(|(name, _)| self.judges.iter().any(|j| &j.endpoint == *name))
            .map(|(_, config)| config)
    }
}

/// The judge models, one `Endpoint` per endpoint name the judges use; mock
/// endpoints talk to a mock started by the context's starter.
async fn connect(ctx: &Context, loaded: &Loaded) -> Result<Connected, RunError> {
    Ok(connect_endpoints(
        loaded.used_endpoints(),
        &loaded.scenarios,
        &loaded.source.mock,
        ctx.mock(),
    )
    .await?)
}

/// Submit (or find) the judging job for `spec` and work it here until done.
pub async fn judge(
    ctx: &Context,
    spec: JudgingSpec,
    name: &str,
    options: &RunOptions,
) -> Result<JudgingReport, RunError> {
    let started = Instant::now();
    let store = &ctx.store;
    let (row, resumed, loaded) =
        submit_loaded(store.as_ref(), &spec, name, options.new_job).await?;
    if options.retry_failed {
        store.reset_failed_items(row.id).await?;
    }
    work_judging(ctx, row, resumed, loaded, options, started).await
}

/// Check `spec` (its judges, their endpoints, the jobs it names), then store
/// the judging job with its items, or find the one with the same judges and
/// target (adding items for conversations stored since). Returns the job and
/// whether it existed; nothing is judged yet.
pub async fn submit_judging(
    store: &dyn Store,
    spec: &JudgingSpec,
    name: &str,
    new_job: bool,
) -> Result<(JobRow, bool), RunError> {
    let (row, existed, _) = submit_loaded(store, spec, name, new_job).await?;
    Ok((row, existed))
}

async fn submit_loaded(
    store: &dyn Store,
    spec: &JudgingSpec,
    name: &str,
    new_job: bool,
) -> Result<(JobRow, bool, Loaded), RunError> {
    let loaded = load(store, spec).await?;
    let hash = spec_hash(&loaded, spec);
    let (row, resumed) = find_or_create(store, &hash, ByName::Ignored, new_job, || {
        Ok(NewJob {
            name: format!("{name}-{}", &hash[..8]),
            kind: JobKind::Judging,
            config_snapshot: serde_json::to_string_pretty(spec)
                .map_err(|e| store::StoreError::Corrupt(e.to_string()))?,
            config_hash: hash.clone(),
        })
    })
    .await?;
    let items = plan(store, &loaded, spec).await?;
    store.add_items(row.id, &items).await?;
    Ok((row, resumed, loaded))
}

/// A name for a judging job of `target` (the job's hash is appended).
pub fn job_name(target: &JudgingTarget) -> String {
    match target {
        JudgingTarget::Job { job_id } => format!("judge-job-{job_id}"),
        JudgingTarget::Pairwise { a, b } => format!("judge-{a}-vs-{b}"),
    }
}

/// `usersim run`: judge a generation job with its own `[[judges]]`.
pub async fn judge_generation_job(
    ctx: &Context,
    job_id: i64,
    options: &RunOptions,
) -> Result<JudgingReport, RunError> {
    let spec = JudgingSpec {
        judges: JudgesSource::Job { job_id },
        target: JudgingTarget::Job { job_id },
        min_reward: None,
    };
    let name = job_name(&spec.target);
    judge(ctx, spec, &name, options).await
}

/// Rebuild a stored judging job and work it here (resume, workers, the
/// service): see `runner::work_stored`.
pub(super) async fn resume_judging(
    ctx: &Context,
    row: JobRow,
    options: &RunOptions,
) -> Result<JudgingReport, RunError> {
    let started = Instant::now();
    let spec: JudgingSpec = serde_json::from_str(&row.config_snapshot).map_err(|e| {
        problem(
            &format!("job {}", row.id),
            format!("the stored judging job cannot be read: {e}"),
        )
    })?;
    let loaded = load(ctx.store.as_ref(), &spec).await?;
    if options.retry_failed {
        ctx.store.reset_failed_items(row.id).await?;
    }
    work_judging(ctx, row, true, loaded, options, started).await
}

async fn work_judging(
    ctx: &Context,
    row: JobRow,
    resumed: bool,
    loaded: Loaded,
    options: &RunOptions,
    started: Instant,
) -> Result<JudgingReport, RunError> {
    let store = ctx.store.clone();
    store.set_job_status(row.id, JobStatus::Running).await?;
    let (models, mock) = connect(ctx, &loaded).await?;
    let endpoints = loaded
        .used_endpoints()
        .map(|e| (e.name.clone(), e.timeout))
        .collect();
    let settings = WorkSettings::of(&loaded.source);
    let concurrency = options.concurrency.unwrap_or(loaded.source.concurrency);
    let source_job = loaded.source_id;
    let runner = Arc::new(Judging::new(
        store.clone(),
        row.id,
        source_job,
        loaded,
        models,
    ));
    let end = work(
        store.clone(),
        row.id,
        runner.clone(),
        settings,
        owner_name("judge"),
        WorkOptions {
            concurrency,
            wait_for_others: true,
            poll: Duration::from_millis(500).min(settings.lease / 2),
            progress: options.progress.clone(),
            endpoints,
            stop: options.stop.clone(),
        },
    )
    .await?;
    drop(mock);
    let counts = store.item_counts(row.id).await?;
    store
        .set_job_status(row.id, end.job_status(&counts))
        .await?;
    let outcomes = runner.outcomes(store.as_ref()).await?;
    Ok(JudgingReport {
        job: store.get_job(row.id).await?.unwrap_or(row),
        resumed,
        end,
        counts,
        outcomes,
        calls_made: runner.calls_made.load(std::sync::atomic::Ordering::Relaxed),
        elapsed: started.elapsed(),
    })
}

/// The judges of a generation job configured with `drop_flagged = true`,
/// whose failed conversations exports leave out unless told to keep them
/// (none when its stored config cannot be read, e.g. a judging job).
pub fn drop_flagged_judges(row: &JobRow) -> Vec<String> {
    let Ok(job) = stored_job(row) else {
        return Vec::new();
    };
    judges_of_job(&job)
        .map(|judges| {
            judges
                .into_iter()
                .filter(|j| j.drop_flagged)
                .map(|j| j.name)
                .collect()
        })
        .unwrap_or_default()
}

/// The judging item runner.
struct Judging {
    store: Arc<dyn Store>,
    job_id: i64,
    judges: HashMap<String, (Judge, String)>,
    models: HashMap<String, Arc<dyn ChatModel>>,
    scenarios: HashMap<String, Scenario>,
    personas: HashMap<String, Persona>,
    /// The job whose conversations are judged (A's, when pairwise).
    source_job: i64,
    calls_made: std::sync::atomic::AtomicU64,
}

impl Judging {
    fn new(
        store: Arc<dyn Store>,
        job_id: i64,
        source_job: i64,
        loaded: Loaded,
        models: HashMap<String, Arc<dyn ChatModel>>,
    ) -> Judging {
        let judges = loaded
            .judges
            .iter()
            .map(|j| (j.name.clone(), (j.clone(), loaded.judge_hash(j))))
            .collect();
        Judging {
            store,
            job_id,
            judges,
            models,
            scenarios: loaded
                .scenarios
                .into_iter()
                .map(|s| (s.id.clone(), s))
                .collect(),
            personas: loaded
                .personas
                .into_iter()
                .map(|p| (p.id.clone(), p))
                .collect(),
            source_job,
            calls_made: Default::default(),
        }
    }

    /// Judgments per judge that this job stored: [ok, unparseable, failed].
    async fn outcomes(
        &self,
        store: &dyn Store,
    ) -> Result<BTreeMap<String, [u64; 3]>, store::StoreError> {
        let mut out: BTreeMap<String, [u64; 3]> = self
            .judges
            .keys()
            .map(|name| (name.clone(), [0; 3]))
            .collect();
        for j in store.judgments_of_job(self.source_job).await? {
            let ours = self
                .judges
                .get(&j.judge_name)
                .is_some_and(|(_, hash)| *hash == j.judge_hash);
            if j.job_id != self.job_id || !ours {
                continue;
            }
            let slot = match j.status.as_str() {
                "ok" => 0,
                "unparseable" => 1,
                _ => 2,
            };
            out.entry(j.judge_name).or_default()[slot] += 1;
        }
        Ok(out)
    }

    async fn conversation(&self, id: i64) -> Result<StoredConversation, Outcome> {
        match self.store.get_conversation(id).await {
            Ok(Some(c)) => Ok(c),
            Ok(None) => Err(Outcome::failed(
                "dataset",
                format!("conversation {id} is not in the database"),
            )),
            Err(e) => Err(Outcome::failed("store", e.to_string())),
        }
    }
}

#[async_trait]
impl ItemRunner for Judging {
    async fn run(&self, item: &ItemRow) -> Outcome {
        let Some((name, a, b)) = parse_key(&item.key) else {
            return Outcome::failed("dataset", format!("'{}' is not a judging item", item.key));
        };
        let Some((judge, hash)) = self.judges.get(name) else {
            return Outcome::failed(
                "dataset",
                format!("judge '{name}' is no longer in the judges file"),
            );
        };
        let Some(model) = self.models.get(&judge.endpoint) else {
            return Outcome::failed(
                "config",
                format!(
                    "judge '{name}': endpoint '{}' is not connected",
                    judge.endpoint
                ),
            );
        };
        let conversation = match self.conversation(a).await {
            Ok(c) => c,
            Err(outcome) => return outcome,
        };
        let other = match b {
            Some(b) => match self.conversation(b).await {
                Ok(c) => Some(c),
                Err(outcome) => return outcome,
            },
            None => None,
        };
        let scenario = self.scenarios.get(&conversation.conversation.scenario_id);
        let persona = self
            .personas
            .get(&conversation.conversation.persona_id)
            .map(|p| resolved_persona(p, &conversation));
        let policy_text = conversation
            .messages
            .iter()
            .find(|m| m.role == "system")
            .map(|m| m.content.clone());
        let mut inputs = JudgeInputs::new(&conversation);
        inputs.other = other.as_ref().map(Other::Conversation);
        inputs.scenario = scenario;
        inputs.persona = persona.as_ref();
        inputs.domain_policy = policy_text.as_deref();
        let cached = match self.store.judge_calls(hash, a, b).await {
            Ok(rows) => rows.into_iter().filter_map(to_call).collect::<Vec<_>>(),
            Err(e) => return Outcome::failed("store", e.to_string()),
        };
        let ran = match run_judge(judge, model.as_ref(), &inputs, &cached).await {
            Ok(ran) => ran,
            Err(e) => return Outcome::failed("judge_input", e.to_string()),
        };
        self.calls_made
            .fetch_add(ran.made.len() as u64, std::sync::atomic::Ordering::Relaxed);
        let outcome: &JudgeOutcome = &ran.outcome;
        let judgment = NewJudgment {
            job_id: self.job_id,
            judge_name: judge.name.clone(),
            judge_hash: hash.clone(),
            conversation_a: a,
            conversation_b: b,
            status: outcome.status.as_str().to_string(),
            verdict: outcome
                .verdict
                .as_ref()
                .and_then(|v| serde_json::to_value(v).ok()),
            score: outcome.score(),
            consistent: outcome.consistent,
            reason: outcome.reason.clone(),
            calls: ran.made.iter().map(from_call).collect(),
        };
        if let Err(e) = self.store.save_judgment(&judgment).await {
            return Outcome::failed("store", e.to_string());
        }
        match outcome.status {
            JudgeStatus::Ok => Outcome::Finished,
            // Kept as a judgment (never a loss or a zero) and the item failed,
            // so `--retry-failed` makes the missing calls again.
            JudgeStatus::Unparseable => Outcome::failed(
                "unparseable",
                outcome
                    .reason
                    .clone()
                    .unwrap_or_else(|| "no verdict".into()),
            ),
            JudgeStatus::Failed => Outcome::failed(
                "judge_call",
                outcome.reason.clone().unwrap_or_else(|| "failed".into()),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_keys_round_trip_with_colons_in_judge_names() {
        assert_eq!(
            parse_key(&item_key("helpful", 12, None)),
            Some(("helpful", 12, None))
        );
        assert_eq!(
            parse_key(&item_key("pref", 3, Some(40))),
            Some(("pref", 3, Some(40)))
        );
        assert_eq!(parse_key(&item_key("a:b", 7, None)), Some(("a:b", 7, None)));
        assert_eq!(parse_key("nonsense"), None);
    }
}
