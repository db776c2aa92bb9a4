//! `sparring leaderboard --jobs A,B,C [--baseline A] [--json | --markdown]`:
//! jobs that ran the same items with different policies, in one table
//! (docs/leaderboard.md).

use crate::evaluation::{leaderboard, LeaderboardError, LeaderboardRequest};
use crate::store::{EvaluationRow, EvaluationStore, Store};

use super::leaderboard_render::render;
use super::{DEFAULT_DATABASE, EXIT_INVALID, EXIT_NOT_FOUND};

#[derive(clap::Args)]
pub struct LeaderboardArgs {
    /// The jobs compared, one per policy, comma-separated (2 to 64).
    #[arg(long, value_delimiter = ',', num_args = 1.., required_unless_present = "evaluation", conflicts_with = "evaluation")]
    jobs: Vec<i64>,
    /// A stored evaluation (`sparring evaluate`), by name or id: its
    /// policies' jobs, in its order, its baseline unless --baseline.
    #[arg(long, value_name = "NAME_OR_ID")]
    evaluation: Option<String>,
    /// The job the paired tests compare each other with (default: the first).
    #[arg(long)]
    baseline: Option<i64>,
    #[command(flatten)]
    table: TableArgs,
    #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
    database: String,
}

/// How the table is figured and printed: `leaderboard` and `evaluate`.
#[derive(clap::Args, Debug, Clone)]
pub struct TableArgs {
    /// A conversation passes at this reward or above (-1,000,000 to 1,000,000).
    #[arg(long, default_value_t = 1.0, value_parser = parse_threshold)]
    pass_threshold: f64,
    /// Bootstrap resamples of the paired reward differences and the ratings
    /// (100 to 100,000; the ratings use at most 1,000).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u32).range(100..=100_000))]
    resamples: u32,
    /// Seeds every bootstrap: the same seed gives the same table.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// A pairwise judge whose stored verdicts between the policies'
    /// conversations (`sparring judge --pairwise`) make a second set of
    /// ratings and a win-rate matrix.
    #[arg(long, value_name = "NAME")]
    pub judge: Option<String>,
    /// Print the table as Markdown.
    #[arg(long, conflicts_with = "json")]
    markdown: bool,
    /// Print every figure as JSON.
    #[arg(long)]
    json: bool,
}

fn parse_threshold(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if value.is_finite() && (-1e6..=1e6).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{text} is outside -1,000,000 to 1,000,000"))
    }
}

pub async fn leaderboard_command(args: LeaderboardArgs) -> anyhow::Result<i32> {
    if args.jobs.len() > 64 {
        eprintln!(
            "error: --jobs lists {} jobs; compare at most 64 at once",
            args.jobs.len()
        );
        return Ok(EXIT_INVALID);
    }
    if let Some(code) = super::refuse_missing_database(&args.database) {
        return Ok(code);
    }
    let store = crate::store::open(&args.database).await?;
    let code = match &args.evaluation {
        None => {
            print_table(
                store.as_ref(),
                args.jobs.clone(),
                args.baseline,
                args.table.judge.clone(),
                &args.table,
                &args.database,
            )
            .await
        }
        Some(evaluation) => match stored_evaluation(store.as_ref(), evaluation).await {
            Ok(Some(row)) => {
                let (jobs, baseline) = evaluation_jobs(&row);
                let baseline = args.baseline.or(baseline);
                let judge = args.table.judge.clone().or(row.judge.clone());
                print_table(
                    store.as_ref(),
                    jobs,
                    baseline,
                    judge,
                    &args.table,
                    &args.database,
                )
                .await
            }
            Ok(None) => {
                eprintln!(
                    "error: no evaluation named or numbered '{evaluation}' in {}",
                    args.database
                );
                Ok(EXIT_NOT_FOUND)
            }
            Err(e) => Err(e.into()),
        },
    };
    store.close().await;
    code
}

/// The evaluation `name_or_id` names: by name first, then by id.
async fn stored_evaluation(
    store: &dyn EvaluationStore,
    name_or_id: &str,
) -> Result<Option<EvaluationRow>, crate::store::StoreError> {
    if let Some(row) = store.find_evaluation_by_name(name_or_id).await? {
        return Ok(Some(row));
    }
    match name_or_id.parse::<i64>() {
        Ok(id) => store.get_evaluation(id).await,
        Err(_) => Ok(None),
    }
}

/// An evaluation's jobs in order and its baseline's job.
pub fn evaluation_jobs(row: &EvaluationRow) -> (Vec<i64>, Option<i64>) {
    let jobs = row.policies.iter().map(|p| p.job_id).collect();
    let baseline = row.baseline.as_ref().and_then(|b| {
        row.policies
            .iter()
            .find(|p| &p.policy == b)
            .map(|p| p.job_id)
    });
    (jobs, baseline)
}

/// Figure the table of `jobs` and print it; the exit code.
pub async fn print_table(
    store: &dyn Store,
    jobs: Vec<i64>,
    baseline: Option<i64>,
    judge: Option<String>,
    args: &TableArgs,
    database: &str,
) -> anyhow::Result<i32> {
    let request = LeaderboardRequest {
        jobs,
        baseline,
        judge,
        pass_threshold: args.pass_threshold,
        resamples: args.resamples,
        seed: args.seed,
    };
    let table = match leaderboard(store, &request).await {
        Ok(table) => table,
        Err(e @ LeaderboardError::NoSuchJob(_)) => {
            eprintln!("error: {e} ({database})");
            return Ok(EXIT_NOT_FOUND);
        }
        Err(LeaderboardError::Store(e)) => return Err(e.into()),
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_INVALID);
        }
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&table)?);
    } else {
        print!("{}", render(&table, args.markdown));
    }
    Ok(0)
}
