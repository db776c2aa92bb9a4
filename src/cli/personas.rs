//! `sparring personas sample JOB.toml [--sample N] --out panel.jsonl`: draw a
//! job's persona table sample once and write it as a panel that later jobs
//! name as their table (docs/populations.md).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Subcommand;

use crate::config::file::SamplePer;
use crate::config::{self, Problem};
use crate::persona::dataset::load_job_scenarios;
use crate::persona::table::{choose_rows, panel::write_panel, personas_of, TableJob};

use super::{report_problems, EXIT_INVALID};

#[derive(Subcommand)]
pub enum PersonasCommand {
    /// Draw the sample of a job's [persona_table] and write its rows as a
    /// panel (JSONL), for later jobs to name as their table with no sample.
    Sample {
        /// A job config with [persona_table].
        config: PathBuf,
        /// Rows to draw instead of the config's sample (1 to 1,000,000).
        #[arg(long, value_parser = crate::cli::number_flags::parse_persona_sample)]
        sample: Option<u32>,
        /// Where the panel is written.
        #[arg(long)]
        out: PathBuf,
    },
}

pub fn personas(command: PersonasCommand) -> anyhow::Result<i32> {
    match command {
        PersonasCommand::Sample {
            config,
            sample,
            out,
        } => sample_panel(&config, sample, &out),
    }
}

fn sample_panel(path: &Path, sample: Option<u32>, out: &Path) -> anyhow::Result<i32> {
    let job = match config::load(path) {
        Ok(job) => job,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let (Some(table), Some(settings)) = (&job.dataset.personas, &job.dataset.persona_table) else {
        report_problems(&[Problem::at_field(
            path,
            "persona_table",
            "is missing; `personas sample` draws from a persona table: set [dataset] \
             personas to a .csv, .jsonl or .parquet file and add [persona_table]",
        )]);
        return Ok(EXIT_INVALID);
    };
    let per_job = sample.or(settings.sample);
    let size = match (per_job, settings.per) {
        (Some(n), SamplePer::Scenario) => {
            match load_job_scenarios(&job.dataset, job.user_simulator.mode()) {
                Ok(scenarios) => Some(u64::from(n) * scenarios.len().max(1) as u64),
                Err(problems) => {
                    report_problems(&problems);
                    return Ok(EXIT_INVALID);
                }
            }
        }
        (n, _) => n.map(u64::from),
    };
    let table_job = TableJob {
        config: path,
        table,
        settings,
        job_seed: job.seed,
        sample: size,
    };
    let started = Instant::now();
    let mut last = started;
    let mut progress = |rows: u64| {
        if last.elapsed() >= Duration::from_secs(2) {
            last = Instant::now();
            eprintln!(
                "read {rows} rows of {} ({:.0} s)",
                table.display(),
                started.elapsed().as_secs_f64()
            );
        }
    };
    let chosen = choose_rows(&table_job, &mut progress)
        .and_then(|rows| personas_of(&table_job, &rows).map(|_| rows));
    let rows = match chosen {
        Ok(rows) => rows,
        Err(e) => {
            report_problems(&[e.into_problem()]);
            return Ok(EXIT_INVALID);
        }
    };
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(out).with_context(|| format!("cannot create {}", out.display()))?,
    );
    let written = write_panel(&rows, &mut file)
        .and_then(|n| file.flush().map(|()| n))
        .with_context(|| format!("cannot write {}", out.display()))?;
    println!(
        "wrote {written} personas to {} in {:.1} s",
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(0)
}
