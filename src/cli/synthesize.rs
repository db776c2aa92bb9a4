//! `usersim synthesize SYNTH.toml`: propose scenarios, validate them by
//! execution, write the accepted ones as a scenarios JSONL `usersim run`
//! reads, and print the counts per stage with the commonest reasons.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::config::synth::{load_synth, SynthConfig};
use crate::config::MockConfig;
use crate::env::open_environment;
use crate::jobs::models::connect_endpoints;
use crate::mock_llm::starter::InProcessMock;
use crate::persona::Scenario;
use crate::synth::coverage::Coverage;
use crate::synth::propose::Proposer;
use crate::synth::run::{synthesize as run_synthesis, Summary};
use crate::synth::{prompt, Stage};

use super::{report_problems, EXIT_INVALID};

pub async fn synthesize(
    path: &Path,
    concurrency: Option<usize>,
    quiet: bool,
) -> anyhow::Result<i32> {
    let config = match load_synth(path) {
        Ok(c) => c,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let environment = open_environment(&config.environment)
        .await
        .with_context(|| format!("{}: [environment]", path.display()))?;
    let tools: Vec<&str> = environment
        .tools()
        .iter()
        .chain(environment.user_tools())
        .map(|t| t.name.as_str())
        .collect();
    let problems = config.diversity.tool_problems(&config.source, &tools);
    if !problems.is_empty() {
        report_problems(&problems);
        return Ok(EXIT_INVALID);
    }
    let examples = read_examples(&config)?;
    let policy = match &config.policy {
        Some(file) => std::fs::read_to_string(file)
            .with_context(|| format!("{}: policy {}", path.display(), file.display()))?,
        None => environment.policy_text().to_string(),
    };
    let prompts = prompt::registry().map_err(|p| {
        report_problems(&p);
        anyhow::anyhow!("the built-in proposal template does not parse")
    })?;
    let (endpoints, _mock) = connect_endpoints(
        [&config.generator],
        &[],
        &MockConfig::default(),
        Some(&InProcessMock),
    )
    .await?;
    let generator = endpoints
        .get(&config.generator.name)
        .cloned()
        .context("the generator endpoint did not connect")?;
    let proposer = Arc::new(Proposer {
        environment,
        generator,
        prompts,
        policy,
        examples,
        records_per_prompt: config.records_per_prompt,
        max_attempts: config.max_attempts,
        seed: config.seed,
        diversity: config.diversity.clone(),
    });
    let bar = progress_bar(config.target as u64, quiet);
    let (accepted, summary) = run_synthesis(
        proposer,
        config.target,
        config.max_proposals,
        concurrency.unwrap_or(config.concurrency),
        |_, _, s| {
            bar.set_position(s.accepted);
            bar.set_message(format!(
                "{} proposals, {} rejected attempts",
                s.proposals,
                s.attempts - s.accepted
            ));
        },
    )
    .await?;
    bar.finish_and_clear();
    write_scenarios(&config.output, &accepted)?;
    print_summary(&config, &summary, &accepted);
    Ok(if accepted.len() < config.target { 1 } else { 0 })
}

fn progress_bar(total: u64, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:30.cyan/blue} {pos}/{len} accepted [{elapsed_precise}] {msg}",
    ) {
        bar.set_style(style);
    }
    bar
}

fn read_examples(config: &SynthConfig) -> anyhow::Result<Vec<Scenario>> {
    let Some(file) = &config.examples else {
        return Ok(Vec::new());
    };
    let text =
        std::fs::read_to_string(file).with_context(|| format!("examples {}", file.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .take(config.examples_shown)
        .map(|(i, line)| {
            serde_json::from_str(line)
                .with_context(|| format!("{}: line {}: not a scenario row", file.display(), i + 1))
        })
        .collect()
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

fn print_summary(config: &SynthConfig, s: &Summary, accepted: &[Scenario]) {
    let rejected_attempts: u64 = s.rejected.values().sum();
    println!(
        "{}: {} proposals ({} attempts) in {:.2}s, {:.1} proposals/s; accepted {} of {} wanted ({} after feedback); wrote {}",
        config.name,
        s.proposals,
        s.attempts,
        s.elapsed.as_secs_f64(),
        s.proposals_per_second(),
        s.accepted,
        config.target,
        s.fixed_by_feedback,
        config.output.display()
    );
    println!(
        "rejected attempts: {rejected_attempts}; failed proposals (generator errors, not counted above): {}",
        s.failed
    );
    for stage in Stage::ALL {
        let n = s.rejected.get(&stage).copied().unwrap_or(0);
        if n == 0 {
            continue;
        }
        let share = 100.0 * n as f64 / (s.attempts.max(1) as f64);
        println!("  {:<12} {n:>6} ({share:.1}% of attempts)", stage.as_str());
        for (reason, count) in s.commonest(stage, 3) {
            println!("      {count:>5} × {reason}");
        }
    }
    for line in Coverage::of(&config.diversity, accepted).lines() {
        println!("{line}");
    }
}
