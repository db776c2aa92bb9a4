//! `usersim synthesize SYNTH.toml` (and `--resume ID`): work the synthesis
//! job until its target is met, write the accepted scenarios as a scenarios
//! JSONL `usersim run` reads, and print the counts per stage with the
//! commonest reasons.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use crate::config::synth::load_synth;
use crate::jobs::synthesis::{prepare, synthesize as run_synthesis, SynthesisReport};
use crate::jobs::{RunError, RunOptions, WorkEnd};
use crate::persona::Scenario;
use crate::report::synthesis::SynthesisStats;

use super::run::{context, exit_for};
use super::{report_problems, DEFAULT_DATABASE, EXIT_INVALID};

pub async fn synthesize(path: &Path, options: &RunOptions) -> anyhow::Result<i32> {
    let config = match load_synth(path) {
        Ok(c) => c,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let inputs = match prepare(&config).await {
        Ok(inputs) => inputs,
        Err(e) => return exit_for(e),
    };
    let ctx = context(&config.database).await?;
    let result = run_synthesis(&ctx, &config, inputs, options).await;
    ctx.store.close().await;
    report(result, &config.database)
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
                "stopped: {released} proposals in flight were returned to pending; `usersim synthesize --resume {}{database_flag}` finishes the job",
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
    write_scenarios(&r.output, &r.accepted)?;
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
        "next: usersim stats --job {}{database_flag}; then run the scenarios: [dataset] scenarios = \"{}\"",
        r.job.id,
        r.output.display()
    );
    Ok(0)
}

/// Write to a temporary file beside `output`, then rename: a reader never sees half a file.
fn write_scenarios(output: &Path, scenarios: &[Scenario]) -> anyhow::Result<()> {
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the folder of {}", output.display()))?;
    }
    let tmp = output.with_extension("jsonl.partial");
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?,
    );
    for s in scenarios {
        serde_json::to_writer(&mut out, s)?;
        out.write_all(b"\n")?;
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, output).with_context(|| format!("cannot write {}", output.display()))?;
    Ok(())
}
