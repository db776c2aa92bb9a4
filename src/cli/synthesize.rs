//! `sparring synthesize SYNTH.toml` (and `--resume ID`): work the synthesis
//! job until its target is met, write the accepted scenarios as a scenarios
//! JSONL `sparring run` reads, and print the counts per stage with the
//! commonest reasons.

use std::path::Path;

use crate::config::synth::load_synth;
use crate::export::file_set::write_file;
use crate::export::target::{check_writable, TargetError};
use crate::jobs::synthesis::{prepare, synthesize as run_synthesis, SynthesisReport};
use crate::jobs::{RunError, RunOptions, WorkEnd};
use crate::persona::Scenario;
use crate::report::synthesis::SynthesisStats;

use super::context::{context, exit_for};
use super::{report_problems, DEFAULT_DATABASE, EXIT_INVALID};

pub async fn synthesize(path: &Path, options: &RunOptions) -> anyhow::Result<i32> {
    let config = match load_synth(path) {
        Ok(c) => c,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    if let Some(code) = refuse_output(config.head.output())? {
        return Ok(code);
    }
    let inputs = match prepare(&config).await {
        Ok(inputs) => inputs,
        Err(e) => return exit_for(e),
    };
    let ctx = context(&config.head.database).await?;
    let result = run_synthesis(&ctx, &config, inputs, options).await;
    ctx.store.close().await;
    report(result, &config.head.database)
}

/// Write the job's scenarios and print what it did; exit 1 when fewer than
/// its target were accepted.
pub fn report(result: Result<SynthesisReport, RunError>, database: &str) -> anyhow::Result<i32> {
    let r = match result {
        Ok(r) => r,
        Err(e) => return exit_for(e),
    };
    let s = &r.summary;
    let c = &r.counts;
    println!(
        "synthesis job {} '{}' {} in {:.1}s ({}): accepted {} of {} scenarios; {} proposals made here, {:.1} proposals/s",
        r.job.id,
        r.job.name,
        r.job.status.as_str(),
        r.elapsed.as_secs_f64(),
        if r.resumed { "resumed" } else { "new" },
        r.accepted.len(),
        r.target,
        s.made_here,
        s.proposals_per_second(),
    );
    let stats = SynthesisStats::new(
        &r.summary,
        r.target as u64,
        r.max_proposals,
        c,
        &r.errors,
        r.coverage.clone(),
    );
    print!("{stats}");
    let database_flag = if database == DEFAULT_DATABASE {
        String::new()
    } else {
        format!(" --database {database}")
    };
    match &r.end {
        WorkEnd::Finished => {}
        WorkEnd::Interrupted { released } | WorkEnd::Cancelled { released } => {
            println!(
                "stopped: {released} proposals in flight were returned to pending; `sparring synthesize --resume {}{database_flag}` finishes the job",
                r.job.id
            );
            return Ok(1);
        }
        WorkEnd::Tripped { reason } => {
            println!("stopped by the circuit breaker: {reason}");
            println!("fix the cause, then rerun with --retry-failed");
            return Ok(1);
        }
    }
    match write_scenarios(&r.output, &r.accepted) {
        Ok(()) => {}
        Err(e @ TargetError::NotRegular { .. }) => {
            eprintln!("output: {e}");
            return Ok(EXIT_INVALID);
        }
        Err(e) => return Err(e.into()),
    }
    println!(
        "wrote {} scenarios to {}",
        r.accepted.len(),
        r.output.display()
    );
    if c.failed > 0 {
        println!(
            "{} proposals failed; rerun with --retry-failed to try them again",
            c.failed
        );
    }
    if r.accepted.len() < r.target {
        println!(
            "only {} of {} scenarios were accepted before max_proposals ran out; raise max_proposals, or read the reasons above",
            r.accepted.len(),
            r.target
        );
        return Ok(1);
    }
    println!(
        "next: sparring stats --job {}{database_flag}; then run the scenarios: [dataset] scenarios = \"{}\"",
        r.job.id,
        r.output.display()
    );
    Ok(0)
}

/// Write the scenarios as every file sparring writes is written
/// (`export::file_set`): checked, to `FILE.partial`, renamed when complete.
fn write_scenarios(output: &Path, scenarios: &[Scenario]) -> Result<(), TargetError> {
    write_file(output, |out| {
        for s in scenarios {
            serde_json::to_writer(&mut *out, s)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    })
}

/// `output` can be written (missing or a regular file); else says why and
/// gives the exit code.
fn refuse_output(output: &Path) -> anyhow::Result<Option<i32>> {
    match check_writable(output) {
        Ok(()) => Ok(None),
        Err(e @ TargetError::NotRegular { .. }) => {
            eprintln!("output: {e}");
            Ok(Some(EXIT_INVALID))
        }
        Err(e) => Err(e.into()),
    }
}
