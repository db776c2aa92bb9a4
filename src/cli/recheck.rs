//! `sparring recheck --job ID`: the simulated-user checks of a job's stored
//! conversations made again by this version of the checks, where an older
//! version made them (see `jobs::recheck`).

use crate::jobs::recheck::recheck as recheck_job;
use crate::store;
use crate::user_checks::CHECKS_VERSION;

use super::{DEFAULT_DATABASE, EXIT_NOT_FOUND};

#[derive(clap::Args)]
pub struct RecheckArgs {
    /// The job whose conversations to check again.
    #[arg(long)]
    job: i64,
    #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
    database: String,
}

pub async fn recheck(args: RecheckArgs) -> anyhow::Result<i32> {
    if let Some(code) = super::refuse_missing_database(&args.database) {
        return Ok(code);
    }
    let store = store::open(&args.database).await?;
    let Some(job) = store.get_job(args.job).await? else {
        eprintln!("job {} is not in {}", args.job, args.database);
        store.close().await;
        return Ok(EXIT_NOT_FOUND);
    };
    let report = recheck_job(store.as_ref(), &job).await;
    store.close().await;
    let report = report?;
    println!(
        "job {} '{}': {} conversations checked again by version {CHECKS_VERSION} of the user checks, {} already were",
        job.id, job.name, report.rechecked, report.current
    );
    if let Some(why) = &report.why {
        println!("{} left as they were: {why}", report.left);
    }
    println!("next: sparring stats --job {}", job.id);
    Ok(0)
}
