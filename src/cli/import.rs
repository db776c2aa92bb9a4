//! `sparring import FILE… --name NAME [--format F] [--skip-invalid]`: store
//! conversations sparring did not generate as the items of an import job.

use std::path::PathBuf;

use crate::import::{Format, ImportRequest, Source};
use crate::jobs::import::{self as importing, ImportReport};
use crate::jobs::RunOptions;

use super::{report_problems, DEFAULT_DATABASE, EXIT_INVALID};

#[derive(clap::Args)]
pub struct ImportArgs {
    /// JSONL files of conversations, read line by line (any size), or
    /// tau2-bench / tau-bench JSON documents.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The import job: made by the first import of this name, added to by
    /// the next ones (a conversation already in it is not added again).
    #[arg(long)]
    name: String,
    /// openai (`messages`, `tools`; a NAME.metadata.jsonl sidecar beside the
    /// file is read too), hf (`messages`, `tools`, `metadata`), sharegpt
    /// (`conversations` of from/value), nemo_gym (rollouts:
    /// `responses_create_params` and `response`, or `usersim_result`), tau2
    /// (a `tau2 run` results file, one JSON document, or a bare list of its
    /// simulations), tau_bench (tau-bench's trajectories: a list of
    /// `{task_id, reward, info, traj, trial}`), or auto (told from each
    /// file's first line or, for tau2 and tau_bench, its first bytes; and
    /// said).
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    format: FormatArg,
    /// Store the valid conversations and count the invalid lines, instead of
    /// storing nothing when a line is invalid.
    #[arg(long)]
    skip_invalid: bool,
    #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
    database: String,
    /// No progress bar or lines.
    #[arg(long)]
    quiet: bool,
}

/// `auto` or a format (clap needs a `Clone` value).
#[derive(Debug, Clone, Copy)]
pub struct FormatArg(Option<Format>);

fn parse_format(s: &str) -> Result<FormatArg, String> {
    Format::from_user(s).map(FormatArg)
}

pub async fn import(args: ImportArgs) -> anyhow::Result<i32> {
    let request = ImportRequest {
        name: args.name.clone(),
        sources: args
            .files
            .iter()
            .map(|path| Source::file(path, path.display().to_string()))
            .collect(),
        format: args.format.0,
        skip_invalid: args.skip_invalid,
    };
    let problems = request.problems("--name", "FILE");
    if !problems.is_empty() {
        report_problems(&problems);
        return Ok(EXIT_INVALID);
    }
    let options = RunOptions {
        progress: Some(super::progress::CliProgress::new(args.quiet, "import")),
        ..RunOptions::default()
    };
    // Every line is read before the store is opened: invalid input makes
    // no database and changes none. Ctrl-C or SIGTERM ends the reading at
    // once (main exits the process; the reading thread goes with it).
    let checked = tokio::select! {
        checked = importing::check(&request, &options) => match checked {
            Ok(checked) => checked,
            Err(e) => return super::context::exit_for(e),
        },
        signal = crate::jobs::shutdown_signal() => {
            eprintln!("interrupted ({}) while reading the files: nothing was stored", signal.name());
            return Ok(signal.exit_code());
        }
    };
    let ctx = super::context::context(&args.database).await?;
    let result = importing::import(ctx.store.clone(), checked, &options).await;
    ctx.store.close().await;
    match result {
        Ok(report) => {
            print_report(&report);
            Ok(0)
        }
        Err(e) => super::context::exit_for(e),
    }
}

fn print_report(report: &ImportReport) {
    for problem in &report.skipped {
        eprintln!("skipped: {problem}");
    }
    for warning in report.sources.iter().flat_map(|s| s.warnings()) {
        eprintln!("warning: {warning}");
    }
    for source in &report.sources {
        println!(
            "{}: {} conversations as {}{}, {} added, {} already in the job{}",
            source.shown,
            source.conversations,
            source.format.as_str(),
            if source.detected { " (detected)" } else { "" },
            source.added,
            source.conversations - source.added.min(source.conversations),
            if source.invalid > 0 {
                format!(", {} invalid lines skipped", source.invalid)
            } else {
                String::new()
            }
        );
    }
    let job = &report.job;
    println!(
        "job {} '{}' (import, {}): {} conversations read, {} added{}",
        job.id,
        job.name,
        if report.created { "new" } else { "added to" },
        report.conversations(),
        report.added(),
        if report.invalid() > 0 {
            format!(", {} invalid lines skipped", report.invalid())
        } else {
            String::new()
        }
    );
    if report.interrupted {
        println!("interrupted: what was read is stored; run the same command to import the rest");
        return;
    }
    println!("next: sparring judge JUDGES.toml --job {}", job.id);
    println!("next: sparring stats --job {}", job.id);
    println!(
        "next: sparring export --job {} --format hf --out data.jsonl",
        job.id
    );
}
