//! `sparring judge JUDGES.toml --job ID` and
//! `sparring judge JUDGES.toml --pairwise --a JOB_A --b JOB_B`

use std::path::Path;

use crate::jobs::judging::{
    job_name, judge as run_judging, JudgesSource, JudgingReport, JudgingSpec, JudgingTarget,
    MatchBy,
};
use crate::jobs::{RunError, RunOptions, WorkEnd};

use super::{report_problems, EXIT_INVALID};

pub struct JudgeArgs<'a> {
    pub judges: &'a Path,
    pub job: Option<i64>,
    pub pair: Option<(i64, i64)>,
    pub match_by: MatchBy,
    pub min_reward: Option<f64>,
    pub database: &'a str,
    pub options: RunOptions,
}

pub async fn judge(args: JudgeArgs<'_>) -> anyhow::Result<i32> {
    let path = std::path::absolute(args.judges)?;
    let target = match (args.job, args.pair) {
        (_, Some((a, b))) => JudgingTarget::Pairwise {
            a,
            b,
            match_by: args.match_by.clone(),
        },
        (Some(job_id), None) => JudgingTarget::Job { job_id },
        (None, None) => {
            eprintln!("error: say what to judge: --job ID, or --pairwise --a JOB_A --b JOB_B");
            return Ok(EXIT_INVALID);
        }
    };
    if let Some(code) = super::refuse_missing_database(args.database) {
        return Ok(code);
    }
    let name = job_name(&target);
    let spec = JudgingSpec {
        judges: JudgesSource::File { path },
        target,
        min_reward: args.min_reward,
    };
    let ctx = super::context::context(args.database).await?;
    let result = run_judging(&ctx, spec, &name, &args.options).await;
    ctx.store.close().await;
    print_report(result, args.database)
}

/// Print a judging run's outcome; the exit code for it.
pub fn print_report(
    result: Result<JudgingReport, RunError>,
    database: &str,
) -> anyhow::Result<i32> {
    let report = match result {
        Ok(report) => report,
        Err(RunError::Invalid(problems)) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
        Err(e @ RunError::NoSuchJob(_)) => {
            eprintln!("error: {e}");
            return Ok(super::EXIT_NOT_FOUND);
        }
        Err(e) => return Err(e.into()),
    };
    let c = &report.counts;
    let batched = match report.batch_requests {
        0 => String::new(),
        n => format!(", {n} requests sent through the Batch API"),
    };
    println!(
        "judging job {} '{}' {} in {:.1}s ({}); {} model calls made{batched}",
        report.job.id,
        report.job.name,
        report.job.status.as_str(),
        report.elapsed.as_secs_f64(),
        if report.resumed { "resumed" } else { "new" },
        report.calls_made
    );
    println!(
        "items: {} done, {} failed, {} pending (database {database})",
        c.done,
        c.failed,
        c.pending + c.leased
    );
    for (name, [ok, unparseable, failed]) in &report.outcomes {
        println!("judge {name}: {ok} ok, {unparseable} unparseable, {failed} failed");
    }
    match &report.end {
        WorkEnd::Finished => {}
        WorkEnd::Interrupted { released } => println!(
            "interrupted: {released} judgments in flight were dropped; run the same command to resume"
        ),
        WorkEnd::Cancelled { released } => println!(
            "cancelled (in the service): {released} judgments in flight were dropped; POST /v1/jobs/{}/resume or run the same command to resume",
            report.job.id
        ),
        WorkEnd::Tripped { reason } => {
            println!("stopped by the circuit breaker: {reason}");
            println!("fix the cause, then rerun with --retry-failed");
            return Ok(1);
        }
    }
    if c.failed > 0 {
        println!(
            "{} judgments are unparseable or failed (not counted anywhere); rerun with --retry-failed to make those calls again",
            c.failed
        );
        // Not every judgment asked for was made: exit 1, as `run` does.
        return Ok(1);
    }
    Ok(0)
}
