//! `sparring mine REAL_JOB --endpoints FILE --endpoint NAME --out DIR`: each
//! conversation of an import job turned into a scenario and a persona by a
//! model (docs/mining.md); the output folder written only when its job
//! config passes `sparring validate`'s checks.

use std::path::{Path, PathBuf};

use crate::config::environment::BUILTIN_ENVIRONMENTS;
use crate::config::{MockConfig, OperatorEndpoints};
use crate::mine::output::{check_out, Staged};
use crate::mine::private::{PrivacyRules, PrivateKind, Redactor};
use crate::mine::{mine as run_mine, MineError, MineOutcome, MineRequest};
use crate::mock_llm::InProcessMock;

use super::progress::Counter;
use super::{report_problems, DEFAULT_DATABASE, EXIT_INVALID, EXIT_NOT_FOUND};

/// Most model calls in flight.
const MAX_CONCURRENCY: usize = 256;

#[derive(clap::Args)]
pub struct MineArgs {
    /// The import job whose conversations are mined.
    job: i64,
    /// An endpoints file: [endpoints.NAME] tables, as `serve --endpoints`
    /// reads (a server with base_url, model, api_key_env, limits; or
    /// `mock = true` with model = "mock-miner").
    #[arg(long, value_name = "FILE")]
    endpoints: PathBuf,
    /// The endpoint of that file that mines.
    #[arg(long, value_name = "NAME")]
    endpoint: String,
    /// The output folder (must not exist): scenarios.jsonl, personas.jsonl,
    /// job.toml, summary.json, SHA256SUMS.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The built-in environment the scenarios are for and checked against.
    #[arg(long, default_value = "builtin:chat")]
    environment: String,
    /// What is private (comma-separated: email, phone, id, payment, card,
    /// secret, password, ssn, iban, ip, zip, name, address, dob; `all` for
    /// every kind, `none` for nothing).
    #[arg(long, default_value = "all", value_name = "KINDS")]
    private: String,
    /// A further regular expression whose matches are private (repeatable).
    #[arg(long = "private-pattern", value_name = "REGEX")]
    private_patterns: Vec<String>,
    /// Seeds the fakes: the same seed gives the same fake for a value.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Model calls in flight at most (1..=256).
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
    database: String,
    /// No progress bar or lines.
    #[arg(long)]
    quiet: bool,
}

pub async fn mine(args: MineArgs) -> anyhow::Result<i32> {
    let request = match request_of(&args) {
        Ok(request) => request,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(EXIT_INVALID);
        }
    };
    if let Err(e) = check_out(&args.out) {
        eprintln!("error: --out: {e}");
        return Ok(EXIT_INVALID);
    }
    let endpoints = match OperatorEndpoints::load(&args.endpoints) {
        Ok(endpoints) => endpoints,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let Some(config) = endpoints.config(&args.endpoints, &args.endpoint) else {
        eprintln!(
            "error: --endpoint: '{}' is not an endpoint of {}; it defines: {}",
            args.endpoint,
            args.endpoints.display(),
            endpoints.names()
        );
        return Ok(EXIT_INVALID);
    };
    if let Some(code) = super::refuse_missing_database(&args.database) {
        return Ok(code);
    }
    let environment = crate::env::builtin::open_builtin(&request.environment)?;
    let (models, _mock) = crate::jobs::models::connect_endpoints(
        [&config],
        &[],
        &MockConfig::default(),
        Some(&InProcessMock),
    )
    .await?;
    let model = models
        .get(&config.name)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("endpoint '{}' was not connected", config.name))?;
    let store = crate::store::open(&args.database).await?;
    let progress = Counter::new("mining", args.quiet);
    let mined = run_mine(
        store.as_ref(),
        model,
        environment.as_ref(),
        &request,
        &|done, total| {
            let message = format!("{done}/{total} conversations answered");
            progress.show(done as u64, Some(total as u64), &message)
        },
    )
    .await;
    store.close().await;
    progress.finish();
    let outcome = match mined {
        Ok(outcome) => outcome,
        Err(e @ MineError::NoSuchJob(_)) => {
            eprintln!("error: {e}");
            return Ok(EXIT_NOT_FOUND);
        }
        Err(e @ (MineError::NotImport { .. } | MineError::Empty { .. })) => {
            eprintln!("error: {e}");
            return Ok(EXIT_INVALID);
        }
        Err(e) => return Err(e.into()),
    };
    print_counts(&outcome);
    if outcome.mined.is_empty() {
        eprintln!("error: no conversation gave a scenario; nothing written");
        return Ok(1);
    }
    write(&args.out, &outcome, &request.environment).await
}

/// The flags read into a request; `Err`: what is wrong, in the flags' names.
fn request_of(args: &MineArgs) -> Result<MineRequest, String> {
    let environment = match args.environment.contains(':') {
        true => args.environment.clone(),
        false => format!("builtin:{}", args.environment),
    };
    if !BUILTIN_ENVIRONMENTS.contains(&environment.as_str()) {
        return Err(format!(
            "--environment: '{}' is not a built-in environment; give one of {}",
            args.environment,
            BUILTIN_ENVIRONMENTS.join(", ")
        ));
    }
    if !(1..=MAX_CONCURRENCY).contains(&args.concurrency) {
        return Err(format!(
            "--concurrency: {} is out of range; give 1 to {MAX_CONCURRENCY}",
            args.concurrency
        ));
    }
    let mut kinds = Vec::new();
    for name in args
        .private
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        if name == "none" {
            continue;
        }
        if name == "all" {
            kinds.extend(PrivateKind::ALL);
            continue;
        }
        match PrivateKind::parse(name) {
            Some(kind) => kinds.push(kind),
            None => {
                return Err(format!(
                    "--private: '{name}' is not a kind of private value; give a comma-separated \
                     list of {} (or all, or none)",
                    PrivateKind::names()
                ))
            }
        }
    }
    kinds.sort();
    kinds.dedup();
    let privacy = PrivacyRules {
        kinds,
        extra: args.private_patterns.clone(),
        seed: args.seed,
    };
    Redactor::new(&privacy).map_err(|e| format!("--private-pattern: {e}"))?;
    Ok(MineRequest {
        job_id: args.job,
        environment,
        privacy,
        concurrency: args.concurrency,
    })
}

fn print_counts(outcome: &MineOutcome) {
    println!(
        "mined import job {} '{}': {} conversations, {} scenarios kept, {} rejected; {} private values replaced by fakes",
        outcome.job.id,
        outcome.job.name,
        outcome.conversations,
        outcome.mined.len(),
        outcome.rejected.len(),
        outcome.private_values_replaced
    );
    for (rejection, count) in outcome.rejections() {
        let example = outcome
            .rejected
            .iter()
            .find(|r| r.rejection == rejection)
            .map(|r| format!(" (e.g. conversation {}: {})", r.conversation_id, r.reason))
            .unwrap_or_default();
        println!("rejected {}: {count}{example}", rejection.as_str());
    }
}

/// Stage the folder, hold its job config to `sparring validate`'s checks, and
/// only then put it in place.
async fn write(out: &Path, outcome: &MineOutcome, environment: &str) -> anyhow::Result<i32> {
    let staged = match Staged::write(out, outcome, environment) {
        Ok(staged) => staged,
        Err(e) => {
            eprintln!("error: {}", crate::error_chain::error_chain(&e));
            return Ok(1);
        }
    };
    let problems = match crate::config::load(&staged.job_config()) {
        Err(problems) => problems,
        Ok(job) => crate::jobs::generation::prepare(&job)
            .await
            .err()
            .unwrap_or_default(),
    };
    if !problems.is_empty() {
        report_problems(&problems);
        eprintln!("error: the mined files do not validate; nothing written");
        return Ok(1);
    }
    match staged.commit() {
        Ok(dir) => {
            println!(
                "wrote {}: {n} scenarios, {n} personas, job.toml (valid), summary.json; run it with `sparring run {}`",
                dir.display(),
                dir.join("job.toml").display(),
                n = outcome.mined.len()
            );
            Ok(0)
        }
        Err(e) => {
            eprintln!("error: {}", crate::error_chain::error_chain(&e));
            Ok(1)
        }
    }
}
