//! `sparring compare-users JOB_A JOB_B [--json] [--k 1,2,4] [--realism]`

use crate::report::compare_users::compare_users as compare;
use crate::report::realism::realism;

use super::stats::ReportArgs;

#[derive(clap::Args)]
pub struct CompareUsersArgs {
    /// The baseline job (A); with `--realism`, the simulated job.
    job_a: i64,
    /// The job compared with it (B): differences are B − A. With
    /// `--realism`, the real job (imported), and differences are
    /// simulated − real.
    job_b: i64,
    /// Hold the first job's users against the second's real ones: turns,
    /// words, questions, ids, corrections, frustration, typos, disclosure
    /// order, endings and vocabulary, each with a bootstrap interval, and the
    /// three largest gaps (docs/realism.md).
    #[arg(long)]
    realism: bool,
    #[command(flatten)]
    report: ReportArgs,
}

pub async fn compare_users(args: CompareUsersArgs) -> anyhow::Result<i32> {
    let store = match args.report.open().await? {
        Ok(store) => store,
        Err(code) => return Ok(code),
    };
    if args.realism {
        let measured = realism(store.as_ref(), args.job_a, args.job_b).await;
        store.close().await;
        if let Ok(r) = &measured {
            if r.measured.distributions.sim_conversations == 0
                || r.measured.distributions.real_conversations == 0
            {
                eprintln!(
                    "warning: job {} or job {} has no conversations: nothing to compare",
                    args.job_a, args.job_b
                );
            }
        }
        return args.report.print(measured);
    }
    let compared = compare(store.as_ref(), args.job_a, args.job_b, &args.report.k).await;
    store.close().await;
    if let Ok(comparison) = &compared {
        if comparison.matched == 0 {
            eprintln!(
                "warning: no conversation of job {} matches one of job {} by scenario, persona and sample",
                args.job_a, args.job_b
            );
        }
    }
    args.report.print(compared)
}
