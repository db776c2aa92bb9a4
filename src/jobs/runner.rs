//! The job runner: make the job's items, lease them, run each as an episode, and
//! store the conversation (or the failure) — each item done exactly once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::config::{Job, Problem};
use crate::persona::knobs;
use crate::prompt::{user_simulator_context, USER_SIMULATOR};
use crate::sim::{run_episode, Episode, EpisodeSpec, PolicyAgent, UserSimulator};
use crate::store::{
    self, ItemCounts, ItemRow, JobRow, JobStatus, JobSummary, NewConversation, NewJob, NewMessage,
    Store, StoreError, UsageRow,
};

use super::plan::plan_items;
use super::progress::Progress;
use super::setup::{connect_models, prepare, ModelsError, Prepared};

/// A lease outlives any one conversation by far; an expired lease means its
/// worker died, and the item is redone.
const LEASE_MS: i64 = 10 * 60 * 1000;

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Overrides the config's concurrency.
    pub concurrency: Option<usize>,
    /// Put failed items back to pending first.
    pub retry_failed: bool,
    /// No progress output.
    pub quiet: bool,
}

#[derive(Debug)]
pub struct RunReport {
    pub job: JobRow,
    /// Whether the job existed before this run (same config hash).
    pub resumed: bool,
    pub counts: ItemCounts,
    pub summary: JobSummary,
    pub elapsed: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the job's inputs have problems")]
    Invalid(Vec<Problem>),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Models(#[from] ModelsError),
}

/// Everything a worker task needs, shared.
struct Worker {
    store: Arc<dyn Store>,
    prepared: Prepared,
    policy: PolicyAgent,
    user_model: Arc<dyn crate::llm::ChatModel>,
    job: Job,
    job_id: i64,
    owner: String,
    progress: Progress,
}

pub async fn run(job: &Job, options: &RunOptions) -> Result<RunReport, RunError> {
    let started = Instant::now();
    let prepared = prepare(job).await.map_err(RunError::Invalid)?;
    let store = store::open(&job.database).await?;
    let (job_row, resumed) = match store.find_job_by_config_hash(&prepared.config_hash).await? {
        Some(existing) => (existing, true),
        None => {
            let row = store
                .create_job(&NewJob {
                    name: job.name.clone(),
                    kind: "generation".into(),
                    config_snapshot: job.snapshot.clone(),
                    config_hash: prepared.config_hash.clone(),
                })
                .await?;
            (row, false)
        }
    };
    let items = plan_items(
        job.seed,
        &prepared.scenarios,
        &prepared.personas,
        job.dataset.samples_per_scenario,
        job.dataset.personas_per_scenario,
    );
    store.add_items(job_row.id, &items).await?;
    if options.retry_failed {
        store.reset_failed_items(job_row.id).await?;
    }
    store.set_job_status(job_row.id, JobStatus::Running).await?;
    let before = store.item_counts(job_row.id).await?;
    let progress = Progress::new(before.total() as u64, before.done as u64, options.quiet);

    let models = connect_models(job, &prepared.scenarios).await?;
    let worker = Arc::new(Worker {
        policy: PolicyAgent::new(
            models.policy.clone(),
            prepared.tools.clone(),
            job.policy.max_steps_per_turn,
        ),
        user_model: models.user.clone(),
        store: store.clone(),
        prepared,
        job: job.clone(),
        job_id: job_row.id,
        owner: format!("run-{}-{}", std::process::id(), store::now_ms()),
        progress: progress.clone(),
    });
    let concurrency = options.concurrency.unwrap_or(job.concurrency).max(1);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let worker = worker.clone();
        tasks.spawn(async move { worker.work().await });
    }
    let mut first_error = None;
    let mut cancelled = false;
    let interrupt = tokio::signal::ctrl_c();
    tokio::pin!(interrupt);
    loop {
        tokio::select! {
            joined = tasks.join_next() => match joined {
                None => break,
                Some(Ok(Ok(()))) => {}
                Some(Ok(Err(e))) => {
                    first_error.get_or_insert(e);
                }
                Some(Err(e)) if e.is_cancelled() => {}
                Some(Err(e)) => tracing::error!("a worker task panicked: {e}"),
            },
            _ = &mut interrupt, if !cancelled => {
                // Conversations in flight are dropped unfinished: nothing of them
                // is stored, and their items go back to pending below.
                cancelled = true;
                tasks.abort_all();
            }
        }
    }
    progress.finish();
    drop(models);
    let released = store.release_items(job_row.id, &worker.owner).await?;
    if let Some(e) = first_error {
        store.set_job_status(job_row.id, JobStatus::Failed).await?;
        return Err(e.into());
    }
    let counts = store.item_counts(job_row.id).await?;
    let status = if cancelled {
        eprintln!(
            "interrupted: {released} conversations in flight were dropped and their items returned to pending; run the same command to resume"
        );
        JobStatus::Cancelled
    } else if counts.pending + counts.leased == 0 {
        JobStatus::Done
    } else {
        JobStatus::Running
    };
    store.set_job_status(job_row.id, status).await?;
    let job_row = store.get_job(job_row.id).await?.unwrap_or(job_row);
    Ok(RunReport {
        summary: store.job_summary(job_row.id).await?,
        job: job_row,
        resumed,
        counts,
        elapsed: started.elapsed(),
    })
}

impl Worker {
    /// Lease and run items until none is left. Only store errors end it early.
    async fn work(&self) -> Result<(), StoreError> {
        loop {
            let leased = self
                .store
                .lease_items(self.job_id, &self.owner, 1, LEASE_MS)
                .await?;
            let Some(item) = leased.into_iter().next() else {
                return Ok(());
            };
            self.run_item(&item).await?;
        }
    }

    #[tracing::instrument(skip_all, fields(item = %item.key))]
    async fn run_item(&self, item: &ItemRow) -> Result<(), StoreError> {
        let p = &self.prepared;
        let (Some(&s), Some(&pi)) = (
            p.scenario_index.get(&item.scenario_id),
            p.persona_index.get(&item.persona_id),
        ) else {
            let message = format!(
                "scenario '{}' or persona '{}' is no longer in the dataset",
                item.scenario_id, item.persona_id
            );
            self.store
                .fail_item(item.id, &self.owner, "dataset", &message)
                .await?;
            self.progress.item_failed();
            return Ok(());
        };
        let scenario = &p.scenarios[s];
        let seed = item.seed as u64;
        let persona = knobs::resolve(&p.personas[pi], seed);
        let user_prompt = match p.prompts.render(
            USER_SIMULATOR,
            &user_simulator_context(&persona, &scenario.user),
        ) {
            Ok(text) => text,
            Err(e) => {
                self.store
                    .fail_item(item.id, &self.owner, "template", &e.to_string())
                    .await?;
                self.progress.item_failed();
                return Ok(());
            }
        };
        let user = UserSimulator::new(self.user_model.clone(), user_prompt);
        let spec = EpisodeSpec {
            scenario,
            seed,
            policy_prompt: p.policy_prompt.clone(),
            opener: self.job.user_simulator.opens,
            greeting: &self.job.user_simulator.greeting,
            max_turns: self.job.max_turns,
        };
        let started_at = store::now_ms();
        match run_episode(&spec, &self.policy, &user, p.environment.as_ref()).await {
            Ok(episode) => {
                let conversation = NewConversation {
                    job_id: self.job_id,
                    item_id: item.id,
                    item_key: item.key.clone(),
                    scenario_id: item.scenario_id.clone(),
                    persona_id: item.persona_id.clone(),
                    sample: item.sample,
                    seed: item.seed,
                    policy_model: self.policy.model_name().to_string(),
                    user_model: user.model_name().to_string(),
                    termination: episode.termination.as_str().to_string(),
                    reward: episode.verification.as_ref().map(|v| v.reward),
                    reward_breakdown: episode
                        .verification
                        .as_ref()
                        .map_or(serde_json::Value::Null, |v| json!(v.components)),
                    metadata: json!({
                        "persona_knobs": persona.resolved_knobs,
                        "environment": p.environment.name(),
                    }),
                    tools: json!(p.tools.as_ref()),
                    usage: usage_rows(&episode),
                    started_at,
                    finished_at: store::now_ms(),
                    messages: message_rows(&episode),
                };
                match self
                    .store
                    .complete_item(item.id, &self.owner, &conversation)
                    .await
                {
                    Ok(_) => self.progress.item_done(),
                    // Someone else owns it now; their result stands.
                    Err(StoreError::LeaseLost { .. }) => {
                        tracing::warn!(item = %item.key, "lease lost; result discarded")
                    }
                    Err(e) => return Err(e),
                }
            }
            Err(e) => {
                tracing::warn!(item = %item.key, class = e.class(), "item failed: {e}");
                self.store
                    .fail_item(item.id, &self.owner, e.class(), &e.to_string())
                    .await?;
                self.progress.item_failed();
            }
        }
        Ok(())
    }
}

fn usage_rows(episode: &Episode) -> Vec<UsageRow> {
    episode
        .usage
        .iter()
        .map(|(role, u)| UsageRow {
            role: role.to_string(),
            calls: u.calls as i64,
            prompt_tokens: u.prompt_tokens as i64,
            completion_tokens: u.completion_tokens as i64,
            latency_ms: u.latency_ms as i64,
        })
        .collect()
}

fn message_rows(episode: &Episode) -> Vec<NewMessage> {
    episode
        .transcript
        .messages
        .iter()
        .map(|r| NewMessage {
            role: r.message.role.as_str().to_string(),
            content: r.message.content.clone(),
            tool_calls: (!r.message.tool_calls.is_empty()).then(|| json!(r.message.tool_calls)),
            tool_call_id: r.message.tool_call_id.clone(),
            author: r.author.as_str().to_string(),
            prompt_tokens: r.usage.map(|u| u.prompt_tokens as i64),
            completion_tokens: r.usage.map(|u| u.completion_tokens as i64),
            latency_ms: r.latency_ms.map(|l| l as i64),
        })
        .collect()
}
