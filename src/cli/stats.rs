//! `usersim stats --job ID [--json] [--k 1,2,4]`

use crate::report::{job_stats, StatsError};
use crate::store;

use super::{DEFAULT_DATABASE, EXIT_NOT_FOUND};

#[derive(clap::Args)]
pub struct StatsArgs {
    /// The job whose conversations are reported, with every judgment of them
    /// (made by the job itself or by judging jobs).
    #[arg(long)]
    job: i64,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// The k of pass^k (comma-separated; a success is a conversation with
    /// full reward, 1.0).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    k: Vec<u64>,
    #[arg(long, env = "USERSIM_DATABASE", default_value = DEFAULT_DATABASE)]
    database: String,
}

pub async fn stats(args: StatsArgs) -> anyhow::Result<i32> {
    if let Some(code) = super::refuse_missing_database(&args.database) {
        return Ok(code);
    }
    let store = store::open(&args.database).await?;
    let report = match job_stats(store.as_ref(), args.job, &args.k).await {
        Ok(report) => report,
        Err(StatsError::NoSuchJob(job)) => {
            eprintln!("job {job} is not in {}", args.database);
            return Ok(EXIT_NOT_FOUND);
        }
        Err(e) => return Err(e.into()),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{report}");
    }
    Ok(0)
}
