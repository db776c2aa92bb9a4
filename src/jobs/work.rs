//! Working a job's items: lease one at a time per task, run it as an episode,
//! store the conversation or the failure. A heartbeat renews the leases this
//! process holds, so a worker that dies has its items redone once they expire;
//! the circuit breaker stops the work, and cancels the items in flight, when
//! too many items fail in a row.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tracing::Instrument;

use crate::config::{CircuitBreakerConfig, Job};
use crate::store::{
    self, ItemRow, JobKind, NewConversation, NewJudgment, NewProposal, Store, StoreError,
};

use super::breaker::{CircuitBreaker, ItemEnd, Started};
use super::commit::Committer;
use super::progress::{Progress, ProgressSink};
use super::totals::{self, ItemTotals};

#[derive(Clone)]
pub struct WorkOptions {
    pub concurrency: usize,
    /// Wait for items leased by others (perhaps dead) until they are done or their
    /// leases expire, instead of stopping when nothing is leasable right now.
    pub wait_for_others: bool,
    /// How often to look again while waiting.
    pub poll: Duration,
    /// Where progress goes; none for no progress.
    pub progress: Option<Arc<dyn ProgressSink>>,
    /// The job's model endpoints (name, timeout), whose calls in flight and
    /// retries the progress shows.
    pub endpoints: Vec<(String, Duration)>,
    /// Stop as on Ctrl-C once this turns true (a job cancelled in the service).
    pub stop: Option<tokio::sync::watch::Receiver<bool>>,
}

/// Resolves when `stop` turns true; never without one (or once its sender is gone).
pub(in crate::jobs) async fn stop_requested(stop: Option<tokio::sync::watch::Receiver<bool>>) {
    if let Some(mut stop) = stop {
        if stop.wait_for(|stop| *stop).await.is_ok() {
            return;
        }
    }
    std::future::pending::<()>().await
}

/// How often a process working a job reads whether it was cancelled.
const CANCEL_POLL: Duration = Duration::from_secs(2);

/// Resolves once the job's status in the store is `cancelled`: the service
/// cancels a job for every process working it by writing that status.
/// Failing reads are logged and tried again at the next poll.
async fn cancelled_in_store(store: Arc<dyn Store>, job_id: i64) {
    loop {
        tokio::time::sleep(CANCEL_POLL).await;
        match store.get_job(job_id).await {
            Ok(Some(job)) if job.status == store::JobStatus::Cancelled => return,
            Ok(_) => {}
            Err(e) => tracing::warn!("cannot read whether job {job_id} was cancelled: {e}"),
        }
    }
}

/// Why the work stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkEnd {
    /// Nothing left that this process could do.
    Finished,
    /// Ctrl-C or SIGTERM (or a stop asked for by the service): in-flight
    /// conversations were dropped and their items released.
    Interrupted { released: u64 },
    /// The circuit breaker stopped the job.
    Tripped { reason: String },
    /// The job was cancelled in the store (by the service, for every process
    /// working it): in-flight conversations were dropped and their items
    /// released, to be redone if the job is resumed.
    Cancelled { released: u64 },
}

impl WorkEnd {
    /// The job's status after this end of the work, given its item counts.
    pub fn job_status(&self, counts: &store::ItemCounts) -> store::JobStatus {
        match self {
            WorkEnd::Interrupted { .. } | WorkEnd::Cancelled { .. } => store::JobStatus::Cancelled,
            WorkEnd::Tripped { .. } => store::JobStatus::Failed,
            WorkEnd::Finished if counts.pending + counts.leased == 0 => store::JobStatus::Done,
            WorkEnd::Finished => store::JobStatus::Running,
        }
    }
}

/// Most items leased in one transaction, for the tasks waiting at that moment.
const LEASE_BATCH: u32 = 64;
/// Most conversations stored in one transaction.
const COMMIT_BATCH: usize = 64;

/// What one item of a job does: a conversation to store (generation), work
/// already stored (judging), or a failure with its class.
pub enum Outcome {
    Conversation(Box<NewConversation>),
    /// A conversation and the judgments its reward rests on (`judge:NAME`),
    /// stored under its id once it is stored.
    Judged(Box<NewConversation>, Vec<NewJudgment>),
    Finished,
    /// A synthesis item's proposal, stored with the item in one transaction.
    Proposal(Box<NewProposal>),
    Failed {
        class: String,
        message: String,
    },
}

impl Outcome {
    pub fn failed(class: &str, message: impl Into<String>) -> Outcome {
        Outcome::Failed {
            class: class.to_string(),
            message: message.into(),
        }
    }
}

/// The kind-specific part of working an item; leasing, heartbeats, storing,
/// the circuit breaker and progress are the worker's, the same for every kind.
#[async_trait]
pub trait ItemRunner: Send + Sync {
    async fn run(&self, item: &ItemRow) -> Outcome;
}

/// The job settings the worker itself uses.
#[derive(Debug, Clone, Copy)]
pub struct WorkSettings {
    pub lease: Duration,
    pub circuit_breaker: CircuitBreakerConfig,
}

impl WorkSettings {
    pub fn of(job: &Job) -> WorkSettings {
        WorkSettings {
            lease: job.lease,
            circuit_breaker: job.circuit_breaker,
        }
    }
}

/// One process's work on one job.
struct Worker {
    store: Arc<dyn Store>,
    runner: Arc<dyn ItemRunner>,
    settings: WorkSettings,
    job_id: i64,
    owner: String,
    held: Mutex<HashSet<i64>>,
    /// Items leased in a batch and not yet started (also in `held`).
    leased: Mutex<VecDeque<ItemRow>>,
    /// Taken by the one task that leases the next batch; the others wait.
    refill: tokio::sync::Mutex<()>,
    /// Most items per lease transaction.
    lease_batch: u32,
    /// Tasks waiting for an item right now: how many to lease next.
    hungry: std::sync::atomic::AtomicUsize,
    /// The store's last lease came back empty.
    exhausted: std::sync::atomic::AtomicBool,
    committer: Committer,
    /// Whether one task already waits for items others hold (see `lease_loop`).
    waiting: std::sync::atomic::AtomicBool,
    /// Told when this process holds no item any more, so the waiting task
    /// need not sleep out its poll when the items it waited for were this
    /// process's own (the end of every synthesis wave).
    drained: tokio::sync::Notify,
    breaker: CircuitBreaker,
    progress: Progress,
    /// This process's finished items of this kind of job, for `/metrics`.
    totals: &'static ItemTotals,
    options: WorkOptions,
}

/// A name for this process's leases, unique across machines and restarts.
pub fn owner_name(kind: &str) -> String {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "host".into());
    format!("{kind}-{host}-{}-{}", std::process::id(), store::now_ms())
}

/// Work job `job_id`'s items here until nothing is left for this process, the
/// circuit breaker trips, or Ctrl-C, SIGTERM or `options.stop` asks to stop.
pub async fn work(
    store: Arc<dyn Store>,
    job_id: i64,
    runner: Arc<dyn ItemRunner>,
    settings: WorkSettings,
    owner: String,
    options: WorkOptions,
) -> Result<WorkEnd, StoreError> {
    let (name, kind) = match store.get_job(job_id).await? {
        Some(row) => (row.name, row.kind),
        None => (String::new(), JobKind::Generation),
    };
    // `job_name`, not `name`: JSON logs already give each span a `name` key.
    let span = tracing::info_span!("job", id = job_id, job_name = %name, kind = %kind);
    let totals = totals::of_kind(kind);
    work_job(
        store,
        (job_id, kind),
        runner,
        settings,
        owner,
        options,
        totals,
    )
    .instrument(span)
    .await
}

/// Tasks that start their first conversation at once; the rest follow at
/// [`RAMP_PER_MS`] a millisecond. A thousand first requests sent in the
/// same instant queue at the model server (the mock answers about ten a
/// millisecond on one core), and that wait made the first wave the slowest
/// 1% of a job's conversations; spread over ~120 ms they are not.
const RAMP_AT_ONCE: usize = 64;
const RAMP_PER_MS: usize = 8;

/// How long task number `task` (0-based) waits before its first lease.
fn first_start_delay(task: usize) -> Duration {
    let after = task.saturating_sub(RAMP_AT_ONCE) as u64;
    Duration::from_millis(after.div_ceil(RAMP_PER_MS as u64))
}

/// Tasks spawned = min(concurrency, items left), at least one: a job of 3
/// items with concurrency = 10,000 runs 3 tasks, not ten thousand.
fn task_count(concurrency: usize, counts: &crate::store::ItemCounts) -> usize {
    let left = usize::try_from(counts.pending + counts.leased).unwrap_or(0);
    concurrency.min(left).max(1)
}

async fn work_job(
    store: Arc<dyn Store>,
    (job_id, kind): (i64, JobKind),
    runner: Arc<dyn ItemRunner>,
    settings: WorkSettings,
    owner: String,
    options: WorkOptions,
    totals: &'static ItemTotals,
) -> Result<WorkEnd, StoreError> {
    let before = store.item_counts(job_id).await?;
    let progress = Progress::new(
        job_id,
        kind,
        (before.total() as u64, before.done as u64),
        &options.endpoints,
        options.progress.clone(),
    );
    let concurrency = task_count(options.concurrency, &before);
    let (committer, committing) = Committer::start(store.clone(), owner.clone(), COMMIT_BATCH);
    let worker = Arc::new(Worker {
        store: store.clone(),
        runner,
        settings,
        job_id,
        owner,
        held: Mutex::new(HashSet::new()),
        leased: Mutex::new(VecDeque::new()),
        refill: tokio::sync::Mutex::new(()),
        lease_batch: LEASE_BATCH,
        hungry: std::sync::atomic::AtomicUsize::new(0),
        exhausted: std::sync::atomic::AtomicBool::new(false),
        committer,
        waiting: std::sync::atomic::AtomicBool::new(false),
        drained: tokio::sync::Notify::new(),
        breaker: CircuitBreaker::new(settings.circuit_breaker),
        progress: progress.clone(),
        totals,
        options: options.clone(),
    });

    let heartbeat = tokio::spawn(worker.clone().heartbeat().in_current_span());
    let ticker = tokio::spawn(progress.clone().ticking().in_current_span());
    let mut tasks = tokio::task::JoinSet::new();
    for task in 0..concurrency {
        let worker = worker.clone();
        let ramp = first_start_delay(task);
        tasks.spawn(
            async move {
                if !ramp.is_zero() {
                    tokio::time::sleep(ramp).await;
                }
                worker.lease_loop().await
            }
            .in_current_span(),
        );
    }
    let mut first_error = None;
    let mut interrupted = false;
    let interrupt = super::shutdown::shutdown_signal();
    tokio::pin!(interrupt);
    let stop = stop_requested(options.stop.clone());
    tokio::pin!(stop);
    let cancelled = cancelled_in_store(store.clone(), job_id);
    tokio::pin!(cancelled);
    let mut cancelled_here = false;
    let tripped = worker.breaker.wait_tripped();
    tokio::pin!(tripped);
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
            signal = &mut interrupt, if !interrupted => {
                // Conversations in flight are dropped unfinished: nothing of them
                // is stored, and their items are released below.
                tracing::info!(signal = signal.name(), "stopping: no new leases, items in flight released");
                interrupted = true;
                tasks.abort_all();
            }
            _ = &mut stop, if !interrupted => {
                interrupted = true;
                tasks.abort_all();
            }
            () = &mut cancelled, if !interrupted => {
                tracing::info!("the job was cancelled: no new leases, items in flight released");
                interrupted = true;
                cancelled_here = true;
                tasks.abort_all();
            }
            () = &mut tripped, if !interrupted => {
                // Said once here, not by each item that fails after the trip.
                let reason = worker.breaker.tripped().unwrap_or_default();
                tracing::error!("circuit breaker tripped: {reason}; items in flight are cancelled and released");
                interrupted = true;
                tasks.abort_all();
            }
        }
    }
    heartbeat.abort();
    ticker.abort();
    // Every task has ended: what is queued for the committer is stored
    // before the leases still held are released.
    worker.committer.close();
    let _ = committing.await;
    progress.finish();
    let released = store.release_items(job_id, &worker.owner).await?;
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(if cancelled_here {
        WorkEnd::Cancelled { released }
    } else if let Some(reason) = worker.breaker.tripped() {
        WorkEnd::Tripped { reason }
    } else if interrupted {
        WorkEnd::Interrupted { released }
    } else {
        WorkEnd::Finished
    })
}

impl Worker {
    fn lease_ms(&self) -> i64 {
        self.settings.lease.as_millis() as i64
    }

    async fn lease_loop(&self) -> Result<(), StoreError> {
        let mut after_wait = false;
        loop {
            if self.breaker.tripped().is_some() {
                return Ok(());
            }
            let Some(item) = self.next_item(after_wait).await? else {
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
                // Until the poll, or until this process's own items are
                // done (a stale wake-up only checks the counts once more).
                let _ = tokio::time::timeout(self.options.poll, self.drained.notified()).await;
                self.waiting
                    .store(false, std::sync::atomic::Ordering::Release);
                after_wait = true;
                continue;
            };
            after_wait = false;
            let outcome = self.run_item(&item).await;
            self.hold(item.id, false);
            outcome?;
        }
    }

    /// The next item for a task: one already leased for it, or a new lease
    /// for every task waiting at this moment (at most `lease_batch`), taken
    /// in one transaction by whichever task gets there first. Leasing only
    /// for tasks that wait means no item sits leased here while another
    /// worker could have run it. `None` when the store has nothing leasable;
    /// once it said so, only a task that waited (`after_wait`) asks it again.
    async fn next_item(&self, after_wait: bool) -> Result<Option<ItemRow>, StoreError> {
        use std::sync::atomic::Ordering;
        self.hungry.fetch_add(1, Ordering::AcqRel);
        let item = self.lease_for_waiting(after_wait).await;
        self.hungry.fetch_sub(1, Ordering::AcqRel);
        item
    }

    async fn lease_for_waiting(&self, after_wait: bool) -> Result<Option<ItemRow>, StoreError> {
        use std::sync::atomic::Ordering;
        if let Some(item) = self.pop_leased() {
            return Ok(Some(item));
        }
        let _turn = self.refill.lock().await;
        if let Some(item) = self.pop_leased() {
            return Ok(Some(item));
        }
        if self.exhausted.load(Ordering::Acquire) && !after_wait {
            return Ok(None);
        }
        let want = (self.hungry.load(Ordering::Acquire) as u32).clamp(1, self.lease_batch);
        let mut items = self
            .store
            .lease_items(self.job_id, &self.owner, want, self.lease_ms())
            .await?;
        self.exhausted.store(items.is_empty(), Ordering::Release);
        for item in &items {
            self.hold(item.id, true);
        }
        if items.is_empty() {
            return Ok(None);
        }
        let first = items.remove(0);
        if let Ok(mut queue) = self.leased.lock() {
            queue.extend(items);
        }
        Ok(Some(first))
    }

    fn pop_leased(&self) -> Option<ItemRow> {
        self.leased.lock().ok()?.pop_front()
    }

    fn hold(&self, item: i64, held: bool) {
        if let Ok(mut set) = self.held.lock() {
            if held {
                set.insert(item);
            } else {
                set.remove(&item);
                if set.is_empty() {
                    self.drained.notify_one();
                }
            }
        }
    }

    /// Renew the leases of the items in flight, three times per lease period.
    async fn heartbeat(self: Arc<Self>) {
        let every = (self.settings.lease / 3).max(Duration::from_millis(100));
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

    async fn fail(
        &self,
        item: &ItemRow,
        started: Started,
        class: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        match self
            .store
            .fail_item(item.id, &self.owner, class, message)
            .await
        {
            Ok(()) => {
                self.progress.item_failed();
                self.totals.failed();
                let error = format!("{class}: {message}");
                self.breaker.finish(started, ItemEnd::Failed(&error));
                Ok(())
            }
            Err(StoreError::LeaseLost { .. }) => {
                tracing::warn!(item = %item.key, "lease lost; failure not recorded");
                self.breaker.finish(started, ItemEnd::Abandoned);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Store the judgments a conversation's reward rests on. They are the
    /// judge cache of later judging jobs; one that cannot be stored is only
    /// judged again by them, so a failure is logged, not the item's.
    async fn keep_judgments(&self, conversation_id: i64, judgments: Vec<NewJudgment>) {
        for mut judgment in judgments {
            judgment.conversation_a = conversation_id;
            if let Err(e) = self.store.save_judgment(&judgment).await {
                tracing::warn!(
                    conversation = conversation_id,
                    judge = %judgment.judge_name,
                    "the reward judge's judgment was not stored: {e}"
                );
            }
        }
    }

    #[tracing::instrument(name = "item", skip_all, fields(id = item.id, key = %item.key))]
    async fn run_item(&self, item: &ItemRow) -> Result<(), StoreError> {
        let started = self.breaker.start();
        let stored = match self.runner.run(item).await {
            Outcome::Failed { class, message } => {
                tracing::warn!(item = %item.key, class, "item failed: {message}");
                return self.fail(item, started, &class, &message).await;
            }
            Outcome::Conversation(conversation) => self
                .committer
                .complete(item.id, *conversation)
                .await
                .map(|_| ()),
            Outcome::Judged(conversation, judgments) => {
                match self.committer.complete(item.id, *conversation).await {
                    Ok(id) => {
                        self.keep_judgments(id, judgments).await;
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
            Outcome::Finished => self.store.finish_item(item.id, &self.owner).await,
            Outcome::Proposal(proposal) => self
                .store
                .complete_proposal(item.id, &self.owner, &proposal)
                .await
                .map(|_| ()),
        };
        match stored {
            Ok(()) => {
                self.progress.item_done();
                self.totals.completed();
                self.breaker.finish(started, ItemEnd::Succeeded);
                Ok(())
            }
            // Someone else owns it now; their result stands.
            Err(StoreError::LeaseLost { .. }) => {
                tracing::warn!(item = %item.key, "lease lost; result discarded");
                self.breaker.finish(started, ItemEnd::Abandoned);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_wave_starts_64_at_once_then_8_a_millisecond() {
        assert_eq!(first_start_delay(0), Duration::ZERO);
        assert_eq!(first_start_delay(RAMP_AT_ONCE), Duration::ZERO);
        assert_eq!(
            first_start_delay(RAMP_AT_ONCE + 1),
            Duration::from_millis(1)
        );
        assert_eq!(
            first_start_delay(RAMP_AT_ONCE + 8),
            Duration::from_millis(1)
        );
        assert_eq!(
            first_start_delay(RAMP_AT_ONCE + 9),
            Duration::from_millis(2)
        );
        assert_eq!(first_start_delay(999), Duration::from_millis(117));
    }

    #[test]
    fn a_job_spawns_no_more_tasks_than_it_has_items_left() {
        let counts = |pending, leased, done| crate::store::ItemCounts {
            pending,
            leased,
            done,
            failed: 0,
        };
        assert_eq!(task_count(10_000, &counts(3, 0, 0)), 3);
        assert_eq!(task_count(10_000, &counts(2, 1, 500)), 3);
        assert_eq!(task_count(4, &counts(300, 0, 0)), 4);
        assert_eq!(task_count(16, &counts(0, 0, 9)), 1);
    }
}
