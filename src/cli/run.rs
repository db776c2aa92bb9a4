//! `sparring run JOB.toml` and `sparring run --resume JOB_ID`

use std::path::Path;

use crate::config;
use crate::jobs::{self, JobReport, RunError, RunOptions, RunReport, WorkEnd};
use crate::report::usage::{role_reports, total_cost, Cost};
use crate::store::{JobRow, JobSummary};

use super::context::{context, exit_for};
use super::{report_problems, EXIT_INVALID};

pub async fn run(path: &Path, options: &RunOptions) -> anyhow::Result<i32> {
    let job = match config::load(path) {
        Ok(job) => job,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    // Every input is read and checked before the store is opened: invalid
    // input creates no database and changes no existing one.
    let prepared = match jobs::generation::prepare(&job).await {
        Ok(prepared) => prepared,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let database = job.database.clone();
    let ctx = context(&database).await?;
    let result = jobs::run_prepared(&ctx, &job, prepared, options).await;
    ctx.store.close().await;
    report(result, &database)
}

pub async fn resume(database: &str, id: i64, options: &RunOptions) -> anyhow::Result<i32> {
    if let Some(code) = super::refuse_missing_database(database) {
        return Ok(code);
    }
    let ctx = context(database).await?;
    let result = jobs::work_stored(&ctx, id, options).await;
    ctx.store.close().await;
    match result {
        Ok(JobReport::Generation(r)) => report(Ok(*r), database),
        Ok(JobReport::Judging(r)) => super::judge::print_report(Ok(*r), database),
        Ok(JobReport::Synthesis(r)) => super::synthesize::report(Ok(*r), database),
        Err(e) => report(Err(e), database),
    }
}

fn report(result: Result<RunReport, RunError>, database: &str) -> anyhow::Result<i32> {
    let report = match result {
        Ok(report) => report,
        Err(e) => return exit_for(e),
    };
    let s = &report.summary;
    let c = &report.counts;
    println!(
        "job {} '{}' {} in {:.1}s ({})",
        report.job.id,
        report.job.name,
        report.job.status.as_str(),
        report.elapsed.as_secs_f64(),
        if report.resumed { "resumed" } else { "new" }
    );
    println!(
        "items: {} done, {} failed, {} pending (database {})",
        c.done,
        c.failed,
        c.pending + c.leased,
        database
    );
    println!(
        "conversations: {}   mean reward: {}",
        s.conversations,
        s.mean_reward
            .map_or("n/a".to_string(), |r| format!("{r:.3}"))
    );
    let terminations: Vec<String> = s
        .terminations
        .iter()
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    if !terminations.is_empty() {
        println!("terminations: {}", terminations.join(", "));
    }
    print_usage(s, &report.job);
    match &report.end {
        WorkEnd::Finished => {}
        WorkEnd::Interrupted { released } => println!(
            "interrupted: {released} conversations in flight were dropped and their items returned to pending; run the same command to resume"
        ),
        WorkEnd::Cancelled { released } => println!(
            "cancelled (in the service): {released} conversations in flight were dropped and their items returned to pending; `sparring run --resume {}` resumes it",
            report.job.id
        ),
        WorkEnd::Tripped { reason } => {
            println!("stopped by the circuit breaker: {reason}");
            println!("fix the cause, then rerun with --retry-failed");
            return Ok(1);
        }
    }
    // Some or all items failed: the job did not do what it was asked, so
    // the exit code says so (1), as `judge` does for failed judgments; what
    // was stored is kept, and --retry-failed does only the failed items.
    let code = if c.failed > 0 {
        println!(
            "{} items failed; rerun with --retry-failed to try them again",
            c.failed
        );
        1
    } else {
        0
    };
    if let Some(judging) = report.judging {
        let code = super::judge::print_report(Ok(judging), database)?;
        if code != 0 {
            return Ok(code);
        }
        println!(
            "next: sparring stats --job {}{}",
            report.job.id,
            if database == super::DEFAULT_DATABASE {
                String::new()
            } else {
                format!(" --database {database}")
            }
        );
    }
    if s.conversations == 0 {
        // Nothing to export yet (e.g. interrupted before the first conversation).
        return Ok(code);
    }
    let database_flag = if database == super::DEFAULT_DATABASE {
        String::new()
    } else {
        format!(" --database {database}")
    };
    println!(
        "next: sparring export --job {} --format openai --out out/job{}.jsonl{database_flag}",
        report.job.id, report.job.id
    );
    Ok(code)
}

/// Per role: calls, tokens, latency percentiles of the model calls and cost
/// from the prices of the role's endpoint (in the job's stored config).
fn print_usage(summary: &JobSummary, row: &JobRow) {
    let job = jobs::stored_job(row).ok();
    let roles = role_reports(summary, job.as_ref());
    for r in &roles {
        let latency = r.latency.map_or("latency n/a".to_string(), |l| {
            format!(
                "latency p50 {} ms, p95 {} ms, p99 {} ms",
                l.p50, l.p95, l.p99
            )
        });
        let cost = match (&r.cost, &r.endpoint) {
            (Cost::Unknown, Some(endpoint)) => {
                format!("cost unknown (endpoint '{endpoint}' has no prices)")
            }
            (cost, _) => format!("cost {cost}"),
        };
        println!(
            "tokens ({}): {} calls, {} prompt, {} completion; {latency}; {cost}",
            r.role, r.calls, r.prompt_tokens, r.completion_tokens
        );
    }
    // Requests to a remote environment (a NeMo Gym resources server).
    if let Some(env) = summary
        .usage
        .iter()
        .find(|u| u.role == crate::sim::episode::ENV_USAGE)
    {
        println!(
            "environment: {} requests, {} ms waiting in all ({:.1} ms per request)",
            env.calls,
            env.latency_ms,
            env.latency_ms as f64 / env.calls.max(1) as f64
        );
    }
    let unpriced: Vec<&str> = roles
        .iter()
        .filter(|r| r.cost == Cost::Unknown)
        .map(|r| r.role.as_str())
        .collect();
    let priced = Cost::Usd(roles.iter().filter_map(|r| r.cost.usd()).sum());
    match total_cost(&roles) {
        _ if roles.is_empty() => {}
        total @ Cost::Usd(_) => println!("cost (all roles): {total}"),
        Cost::Unknown if unpriced.len() == roles.len() => println!(
            "cost (all roles): unknown (set input_price_per_million and output_price_per_million on the endpoints)"
        ),
        Cost::Unknown => println!(
            "cost (all roles): unknown ({priced} for the priced roles; no prices for {})",
            unpriced.join(", ")
        ),
    }
}
