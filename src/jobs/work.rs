//! Working a job's items: lease one at a time per task, run it as an episode,
//! store the conversation or the failure. A heartbeat renews the leases this
//! process holds, so a worker that dies has its items redone once they expire;
//! the circuit breaker stops the work when too many recent items fail.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use crate::config::Job;
use crate::llm::ChatModel;
use crate::persona::knobs;
use crate::prompt::{user_simulator_context, USER_SIMULATOR};
use crate::sim::{run_episode, Episode, EpisodeSpec, PolicyAgent, UserSimulator};
use crate::store::{self, ItemRow, NewConversation, NewMessage, Store, StoreError, UsageRow};

use super::breaker::CircuitBreaker;
use super::progress::Progress;
use super::setup::{Models, Prepared};

#[derive(Debug, Clone)]
pub struct WorkOptions {
    pub concurrency: usize,
    /// Wait for items leased by others (perhaps dead) until they are done or their
    /// leases expire, instead of stopping when nothing is leasable right now.
    pub wait_for_others: bool,
    /// How often to look again while waiting.
    pub poll: Duration,
    pub quiet: bool,
}

/// Why the work stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkEnd {
    /// Nothing left that this process could do.
    Finished,
    /// Ctrl-C: in-flight conversations were dropped and their items released.
    Interrupted { released: u64 },
    /// The circuit breaker stopped the job.
    Tripped { reason: String },
}

/// One process's work on one job.
struct Worker {
    store: Arc<dyn Store>,
    prepared: Prepared,
    policy: PolicyAgent,
    user_model: Arc<dyn ChatModel>,
    job: Job,
    job_id: i64,
    owner: String,
    held: Mutex<HashSet<i64>>,
    /// Whether one task already waits for items others hold (see `lease_loop`).
    waiting: std::sync::atomic::AtomicBool,
    breaker: CircuitBreaker,
    progress: Progress,
    options: WorkOptions,
}

/// A name for this process's leases, unique across machines and restarts.
pub fn owner_name(kind: &str) -> String {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "host".into());
    format!("{kind}-{host}-{}-{}", std::process::id(), store::now_ms())
}

pub async fn work(
    store: Arc<dyn Store>,
    job_id: i64,
    job: &Job,
    prepared: Prepared,
    models: &Models,
    owner: String,
    options: WorkOptions,
) -> Result<WorkEnd, StoreError> {
    let before = store.item_counts(job_id).await?;
    let progress = Progress::new(before.total() as u64, before.done as u64, options.quiet);
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
        job_id,
        owner,
        held: Mutex::new(HashSet::new()),
        waiting: std::sync::atomic::AtomicBool::new(false),
        breaker: CircuitBreaker::new(job.circuit_breaker),
        progress: progress.clone(),
        options: options.clone(),
    });

    let heartbeat = tokio::spawn(worker.clone().heartbeat());
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..options.concurrency.max(1) {
        let worker = worker.clone();
        tasks.spawn(async move { worker.lease_loop().await });
    }
    let mut first_error = None;
    let mut interrupted = false;
    let interrupt = tokio::signal::ctrl_c();
    tokio::pin!(interrupt);
    loop {
        tokio::select! {
            joined = tasks.join_next() => match joined {
                None => break,
                Some(Ok(Ok(()))) => {}
                Some(Ok(Err(e))) => {
                    first_error.get_or_insert(e);
                    tasks.abort_all();
                }
                Some(Err(e)) if e.is_cancelled() => {}
                Some(Err(e)) => tracing::error!("a worker task panicked: {e}"),
            },
            _ = &mut interrupt, if !interrupted => {
                // Conversations in flight are dropped unfinished: nothing of them
                // is stored, and their items are released below.
                interrupted = true;
                tasks.abort_all();
            }
        }
    }
    heartbeat.abort();
    progress.finish();
    let released = store.release_items(job_id, &worker.owner).await?;
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(if interrupted {
        WorkEnd::Interrupted { released }
    } else if let Some(reason) = worker.breaker.tripped() {
        WorkEnd::Tripped { reason }
    } else {
        WorkEnd::Finished
    })
}

impl Worker {
    fn lease_ms(&self) -> i64 {
        self.job.lease.as_millis() as i64
    }

    async fn lease_loop(&self) -> Result<(), StoreError> {
        loop {
            if self.breaker.tripped().is_some() {
                return Ok(());
            }
            let leased = self
                .store
                .lease_items(self.job_id, &self.owner, 1, self.lease_ms())
                .await?;
            let Some(item) = leased.into_iter().next() else {
                // Nothing leasable now. One task per process stays to wait for
                // items others hold (another worker's, or a dead one's whose
                // lease will expire); the rest end. With every idle task polling,
                // the tail of a 1,000-wide job flooded the store's one writer.
                if !self.options.wait_for_others
                    || self.waiting.swap(true, std::sync::atomic::Ordering::AcqRel)
                {
                    return Ok(());
                }
                let counts = self.store.item_counts(self.job_id).await?;
                if counts.pending + counts.leased == 0 {
                    return Ok(());
                }
                tokio::time::sleep(self.options.poll).await;
                self.waiting
                    .store(false, std::sync::atomic::Ordering::Release);
                continue;
            };
            self.hold(item.id, true);
            let outcome = self.run_item(&item).await;
            self.hold(item.id, false);
            outcome?;
        }
    }

    fn hold(&self, item: i64, held: bool) {
        if let Ok(mut set) = self.held.lock() {
            if held {
                set.insert(item);
            } else {
                set.remove(&item);
            }
        }
    }

    /// Renew the leases of the items in flight, three times per lease period.
    async fn heartbeat(self: Arc<Self>) {
        let every = (self.job.lease / 3).max(Duration::from_millis(100));
        loop {
            tokio::time::sleep(every).await;
            let ids: Vec<i64> = self
                .held
                .lock()
                .map(|s| s.iter().copied().collect())
                .unwrap_or_default();
            if ids.is_empty() {
                continue;
            }
            match self
                .store
                .renew_leases(&self.owner, &ids, self.lease_ms())
                .await
            {
                Ok(n) if (n as usize) < ids.len() => tracing::warn!(
                    held = ids.len(),
                    renewed = n,
                    "some leases were lost (expired and taken over); their results will be discarded"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!("lease heartbeat failed: {e}"),
            }
        }
    }

    async fn fail(&self, item: &ItemRow, class: &str, message: &str) -> Result<(), StoreError> {
        match self
            .store
            .fail_item(item.id, &self.owner, class, message)
            .await
        {
            Ok(()) => {
                self.progress.item_failed();
                if let Some(reason) = self.breaker.record(Some(&format!("{class}: {message}"))) {
                    tracing::error!("circuit breaker tripped: {reason}");
                }
                Ok(())
            }
            Err(StoreError::LeaseLost { .. }) => {
                tracing::warn!(item = %item.key, "lease lost; failure not recorded");
                Ok(())
            }
            Err(e) => Err(e),
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
            return self.fail(item, "dataset", &message).await;
        };
        let scenario = &p.scenarios[s];
        let seed = item.seed as u64;
        let persona = knobs::resolve(&p.personas[pi], seed);
        let user_prompt = match p.prompts.render(
            USER_SIMULATOR,
            &user_simulator_context(&persona, &scenario.user),
        ) {
            Ok(text) => text,
            Err(e) => return self.fail(item, "template", &e.to_string()).await,
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
        let episode = match run_episode(&spec, &self.policy, &user, p.environment.as_ref()).await {
            Ok(episode) => episode,
            Err(e) => {
                tracing::warn!(item = %item.key, class = e.class(), "item failed: {e}");
                return self.fail(item, e.class(), &e.to_string()).await;
            }
        };
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
            Ok(_) => {
                self.progress.item_done();
                self.breaker.record(None);
                Ok(())
            }
            // Someone else owns it now; their result stands.
            Err(StoreError::LeaseLost { .. }) => {
                tracing::warn!(item = %item.key, "lease lost; result discarded");
                Ok(())
            }
            Err(e) => Err(e),
        }
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
