//! `usersim run JOB.toml`

use std::path::Path;

use crate::config;
use crate::jobs::{self, RunError, RunOptions};

use super::{report_problems, EXIT_INVALID};

pub async fn run(
    path: &Path,
    concurrency: Option<usize>,
    retry_failed: bool,
    quiet: bool,
) -> anyhow::Result<i32> {
    let job = match config::load(path) {
        Ok(job) => job,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let options = RunOptions {
        concurrency,
        retry_failed,
        quiet,
    };
    let report = match jobs::run(&job, &options).await {
        Ok(report) => report,
        Err(RunError::Invalid(problems)) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
        Err(e) => return Err(e.into()),
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
        job.database
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
    println!("terminations: {}", terminations.join(", "));
    for u in &s.usage {
        println!(
            "tokens ({}): {} calls, {} prompt, {} completion",
            u.role, u.calls, u.prompt_tokens, u.completion_tokens
        );
    }
    if c.failed > 0 {
        println!(
            "{} items failed; rerun with --retry-failed to try them again",
            c.failed
        );
    }
    println!(
        "next: usersim export --job {} --format openai --out out/job{}.jsonl",
        report.job.id, report.job.id
    );
    Ok(0)
}
