//! `sparring stats --job ID [--json] [--k 1,2,4] [--by ATTR [--min-cell N] [--bins N]]`

use crate::report::{job_stats, StatsError};
use crate::store::{self, Store};

use crate::report::strata::{self, job_strata, StrataError, StrataRequest};

use super::{DEFAULT_DATABASE, EXIT_INVALID, EXIT_NOT_FOUND};

/// The flags of a job report (`stats`, `compare-users`).
#[derive(clap::Args)]
pub struct ReportArgs {
    /// Print the report as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The k of pass^k (comma-separated, each 1 to 1,000; a success is a
    /// conversation with full reward, 1.0).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4",
        value_parser = clap::value_parser!(u64).range(1..=1000)
    )]
    pub k: Vec<u64>,
    #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
    pub database: String,
}

impl ReportArgs {
    /// The store, or the exit code when the database does not exist.
    pub async fn open(&self) -> anyhow::Result<Result<std::sync::Arc<dyn Store>, i32>> {
        if let Some(code) = super::refuse_missing_database(&self.database) {
            return Ok(Err(code));
        }
        Ok(Ok(store::open(&self.database).await?))
    }

    /// Print `report` as JSON or text; a missing job is exit code 3.
    pub fn print<R: serde::Serialize + std::fmt::Display>(
        &self,
        report: Result<R, StatsError>,
    ) -> anyhow::Result<i32> {
        let report = match report {
            Ok(report) => report,
            Err(StatsError::NoSuchJob(job)) => {
                eprintln!("job {job} is not in {}", self.database);
                return Ok(EXIT_NOT_FOUND);
            }
            Err(e) => return Err(e.into()),
        };
        if self.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print!("{report}");
        }
        Ok(0)
    }
}

#[derive(clap::Args)]
pub struct StatsArgs {
    /// The job whose conversations are reported, with every judgment of them
    /// (made by the job itself or by judging jobs).
    #[arg(long)]
    job: i64,
    /// Break the conversations down by an attribute: a persona attribute
    /// (e.g. `country`, `age`; numbers are binned), `persona`, `scenario`
    /// or `knob.NAME` (the knob value drawn for each conversation); for
    /// probes, `probe.family`, `probe.strategy` or `probe.scored_by` (each
    /// cell's hold rate, held^k, turn of flip and blast radius).
    #[arg(long)]
    by: Option<String>,
    /// With --by: a cell with fewer conversations is marked too small and
    /// not ordered (1 to 1,000,000).
    #[arg(long, default_value_t = strata::DEFAULT_MIN_CELL, requires = "by",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    min_cell: u64,
    /// With --by: how many bins a numeric attribute is cut into, by
    /// quantiles (2 to 20).
    #[arg(long, default_value_t = strata::DEFAULT_BINS, requires = "by",
          value_parser = clap::value_parser!(u64).range(2..=20))]
    bins: u64,
    #[command(flatten)]
    report: ReportArgs,
}

pub async fn stats(args: StatsArgs) -> anyhow::Result<i32> {
    let store = match args.report.open().await? {
        Ok(store) => store,
        Err(code) => return Ok(code),
    };
    if let Some(by) = &args.by {
        return by_attribute(store, &args, by).await;
    }
    let report = job_stats(store.as_ref(), args.job, &args.report.k).await;
    store.close().await;
    args.report.print(report)
}

/// `--by ATTR`: the job's strata; an unknown attribute is invalid input.
async fn by_attribute(
    store: std::sync::Arc<dyn Store>,
    args: &StatsArgs,
    by: &str,
) -> anyhow::Result<i32> {
    let request = match StrataRequest::new(by, args.min_cell, args.bins) {
        Ok(request) => request,
        Err(problem) => {
            eprintln!("--{}: {}", problem.field.replace('_', "-"), problem.message);
            return Ok(EXIT_INVALID);
        }
    };
    let report = job_strata(store.as_ref(), args.job, &request, &args.report.k).await;
    store.close().await;
    let report = match report {
        Ok(report) => report,
        Err(StrataError::NoSuchJob(job)) => {
            eprintln!("job {job} is not in {}", args.report.database);
            return Ok(EXIT_NOT_FOUND);
        }
        Err(e @ StrataError::UnknownAttribute { .. }) => {
            eprintln!("--{e}");
            return Ok(EXIT_INVALID);
        }
        Err(e) => return Err(e.into()),
    };
    if args.report.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{report}");
    }
    Ok(0)
}
