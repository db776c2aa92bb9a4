//! Synthesis jobs (`sparring synthesize`): one item per proposal number,
//! worked like any job (leases, heartbeats, limits, the circuit breaker,
//! resume, workers, progress), each storing its proposal with the item. Items
//! are planned in waves (`waves.rs`) until `target` scenarios are accepted or
//! the cap on proposals is reached; which proposals become scenarios is
//! decided in proposal order from what is stored (`tally.rs`), so a job
//! killed at any point and resumed writes the same scenarios as one that ran
//! through.

mod item;
pub mod setup;
pub mod spec;
pub mod waves;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::synth::SynthConfig;
use crate::config::CircuitBreakerConfig;
use crate::store::{JobKind, JobRow, JobStatus, NewItem, NewJob, Store};
use crate::synth::coverage::Coverage;
use crate::synth::diversity::plan_brief;
use crate::synth::propose::scenario_id;

use super::context::Context;
use super::error::RunError;
use super::options::{Mode, RunOptions};
use super::progress::Notice;
pub use super::report::SynthesisReport;
use super::seed::item_seed;
use super::stored::{find_or_create, ByName};
use super::work::{owner_name, work, WorkEnd, WorkOptions, WorkSettings};
use crate::config::synth::SynthSpec;
use crate::synth::tally::tally;
use item::ProposalItems;
use setup::connect;
pub use setup::{prepare, Inputs};
use spec::{config_hash, stored_config};
use waves::{next_wave, WaveState};

/// The circuit breaker of every synthesis job: half of the last 20 proposals
/// failing (a dead generator, a bad key) stops it.
const BREAKER: CircuitBreakerConfig = CircuitBreakerConfig {
    window: 20,
    max_error_rate: 0.5,
};

/// Distinct failed-item errors a report reads (it groups them by kind).
const ERRORS_READ: u32 = 100;

fn settings(config: &SynthConfig) -> WorkSettings {
    WorkSettings {
        lease: config.head.lease(),
        circuit_breaker: BREAKER,
    }
}

/// `sparring synthesize SYNTH.toml`: submit (or find) the job and work it
/// here until `target` scenarios are accepted or proposals run out.
/// `inputs` are [`prepare`]'s, read before the store is opened so that bad
/// input leaves nothing behind.
pub async fn synthesize(
    ctx: &Context,
    config: &SynthConfig,
    inputs: Inputs,
    options: &RunOptions,
) -> Result<SynthesisReport, RunError> {
    let started = Instant::now();
    let (row, resumed) =
        submit_prepared(ctx.store.as_ref(), config, &inputs, options.new_job).await?;
    let run = (row, resumed, started);
    work_synthesis(ctx, run, config, inputs, options, Mode::Run).await
}

/// Check `config`'s inputs and store its job with the first wave of items,
/// or find the job with the same config: the service's `POST
/// /v1/synthesis-jobs`. Nothing is proposed yet.
pub async fn submit_synthesis(
    store: &dyn Store,
    config: &SynthConfig,
    new_job: bool,
) -> Result<(JobRow, bool), RunError> {
    let inputs = prepare(config).await?;
    submit_prepared(store, config, &inputs, new_job).await
}

async fn submit_prepared(
    store: &dyn Store,
    config: &SynthConfig,
    inputs: &Inputs,
    new_job: bool,
) -> Result<(JobRow, bool), RunError> {
    let spec = SynthSpec::of(config);
    let hash = config_hash(&spec, &inputs.examples_text, &inputs.policy);
    let (row, resumed) = find_or_create(
        store,
        &hash,
        ByName::RefusedUnlessSameHash(&config.head.name),
        new_job,
        || {
            Ok(NewJob {
                name: config.head.name.clone(),
                kind: JobKind::Synthesis,
                config_snapshot: spec.to_json(),
                config_hash: hash.clone(),
            })
        },
    )
    .await?;
    plan_wave(store, row.id, config).await?;
    Ok((row, resumed))
}

/// Rebuild a stored synthesis job and work it here (resume, workers, the
/// service): see `jobs::work_stored`.
pub(super) async fn resume_synthesis(
    ctx: &Context,
    row: JobRow,
    options: &RunOptions,
    mode: Mode,
) -> Result<SynthesisReport, RunError> {
    let started = Instant::now();
    let config = stored_config(&row)?;
    let inputs = prepare(&config).await?;
    let hash = config_hash(
        &SynthSpec::of(&config),
        &inputs.examples_text,
        &inputs.policy,
    );
    if hash != row.config_hash {
        options.notice(Notice::InputsChanged { job_id: row.id });
    }
    work_synthesis(ctx, (row, true, started), &config, inputs, options, mode).await
}

/// Add the next wave of items when none is pending or leased and more
/// scenarios are wanted; returns how many were added.
async fn plan_wave(store: &dyn Store, job_id: i64, config: &SynthConfig) -> Result<u64, RunError> {
    let counts = store.item_counts(job_id).await?;
    if counts.pending + counts.leased > 0 {
        return Ok(0);
    }
    let planned = u64::try_from(counts.total()).unwrap_or(0);
    let tallied = tally(store, job_id, config, |_, _| {}).await?;
    let n = next_wave(WaveState {
        planned,
        decided: tallied.summary.proposals,
        accepted: tallied.summary.accepted,
        target: config.head.target as u64,
        max_proposals: config.head.max_proposals(),
        concurrency: config.head.concurrency as u64,
    });
    let items: Vec<NewItem> = (planned..planned + n)
        .map(|index| {
            let key = item_key(index);
            NewItem {
                seed: item_seed(config.head.seed, &key) as i64,
                key,
                scenario_id: scenario_id(config.head.seed, index),
                persona_id: String::new(),
                sample: i64::try_from(index).unwrap_or(i64::MAX),
            }
        })
        .collect();
    store.add_items(job_id, &items).await?;
    Ok(n)
}

/// Item key of proposal `index`; zero-padded, so keys sort as indices do.
fn item_key(index: u64) -> String {
    format!("proposal/{index:08}")
}

async fn work_synthesis(
    ctx: &Context,
    (row, resumed, started): (JobRow, bool, Instant),
    config: &SynthConfig,
    inputs: Inputs,
    options: &RunOptions,
    mode: Mode,
) -> Result<SynthesisReport, RunError> {
    let store = ctx.store.clone();
    if options.retry_failed {
        store.reset_failed_items(row.id).await?;
    }
    store.set_job_status(row.id, JobStatus::Running).await?;
    let (proposer, mock) = connect(ctx, config, inputs).await?;
    let runner = Arc::new(ProposalItems {
        proposer: Arc::new(proposer),
        plan: {
            let (diversity, seed) = (config.diversity.clone(), config.head.seed);
            Box::new(move |index| plan_brief(&diversity, seed, index))
        },
        made: Default::default(),
    });
    let wait_for_others = match mode {
        Mode::Run => true,
        Mode::Worker { wait_for_others } => wait_for_others,
    };
    let end = loop {
        plan_wave(store.as_ref(), row.id, config).await?;
        let counts = store.item_counts(row.id).await?;
        if counts.pending + counts.leased == 0 {
            break WorkEnd::Finished;
        }
        let end = work(
            store.clone(),
            row.id,
            runner.clone(),
            settings(config),
            owner_name("synthesize"),
            WorkOptions {
                concurrency: options.concurrency.unwrap_or(config.head.concurrency),
                wait_for_others,
                poll: Duration::from_millis(500).min(config.head.lease() / 2),
                progress: options.progress.clone(),
                endpoints: vec![(config.generator.name.clone(), config.generator.timeout())],
                stop: options.stop.clone(),
            },
        )
        .await?;
        if end != WorkEnd::Finished {
            break end;
        }
        let after = store.item_counts(row.id).await?;
        if after.done == counts.done && after.failed > counts.failed {
            // The circuit breaker sees one wave; a wave of failures alone
            // (a dead generator, a bad key) must not plan the next one.
            let commonest = store
                .item_errors(row.id, 1)
                .await?
                .into_iter()
                .next()
                .map_or_else(String::new, |(error, _)| {
                    format!("; the commonest error: {error}")
                });
            let reason = format!(
                "no proposal of the last wave was stored and {} failed{commonest}",
                after.failed - counts.failed
            );
            tracing::error!("{reason}");
            break WorkEnd::Tripped { reason };
        }
        if after.pending + after.leased > 0 && !wait_for_others {
            // Others hold the rest, and this process does not wait for them.
            // (A process that waits goes on: another one may have planned
            // the next wave between this one's last item and this check.)
            break end;
        }
    };
    drop(mock);
    let mut tallied = tally(store.as_ref(), row.id, config, |_, _| {}).await?;
    let counts = store.item_counts(row.id).await?;
    store
        .set_job_status(row.id, end.job_status(&counts))
        .await?;
    tallied.summary.failed = u64::try_from(counts.failed).unwrap_or(0);
    tallied.summary.made_here = runner.made.load(std::sync::atomic::Ordering::Relaxed);
    tallied.summary.elapsed = started.elapsed();
    let errors = store.item_errors(row.id, ERRORS_READ).await?;
    let accepted = tallied.acceptance.into_accepted();
    Ok(SynthesisReport {
        coverage: Coverage::of(&config.diversity, &accepted),
        job: store.get_job(row.id).await?.unwrap_or(row),
        resumed,
        end,
        counts,
        summary: tallied.summary,
        errors,
        target: config.head.target,
        max_proposals: config.head.max_proposals(),
        accepted,
        output: config.head.output().to_path_buf(),
        elapsed: started.elapsed(),
    })
}
