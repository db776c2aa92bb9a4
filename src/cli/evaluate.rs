//! `sparring evaluate EVALUATION.toml`: one job config run once per policy,
//! each a job with the same items, then the leaderboard of them all
//! (docs/leaderboard.md). Every policy's job is found again by its config's
//! hash, so running the file again resumes it: a finished policy does no
//! work, a killed one finishes its items, and a policy added to the file is
//! the only one that runs.

use std::path::{Path, PathBuf};

use crate::config::{self, Job, Trust};
use crate::diagnostics::document::read_config_file;
use crate::evaluation::file::{self, EvaluationFile, Pairwise};
use crate::jobs::judging::{self, JudgesSource, JudgingSpec, JudgingTarget, MatchBy};
use crate::jobs::{self, WorkEnd};
use crate::judge::definition::Mode;
use crate::judge::file::load_judges_file;
use crate::store::EvaluationStore;

use super::context::{context, exit_for};
use super::leaderboard::{print_table, TableArgs};
use super::{report_problems, EXIT_INVALID};

#[derive(clap::Args)]
pub struct EvaluateArgs {
    /// The evaluation file: `[evaluation]` (name, job, baseline) and two to
    /// 64 `[[policies]]`.
    file: PathBuf,
    #[command(flatten)]
    work: super::WorkArgs,
    #[command(flatten)]
    table: TableArgs,
}

pub async fn evaluate(args: EvaluateArgs) -> anyhow::Result<i32> {
    let evaluation = match file::read(&args.file) {
        Ok(evaluation) => evaluation,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    // Every policy's job is read and checked before the store is opened: a
    // bad policy runs none of them and creates no database.
    let jobs = match policy_jobs(&args.file, &evaluation) {
        Ok(jobs) => jobs,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let database = jobs[0].database.clone();
    let ctx = context(&database).await?;
    let code = run_policies(&ctx, &evaluation, &jobs, &args).await;
    let code = match code {
        Ok(Ok(ran)) => {
            let baseline = Some(ran.job_ids[evaluation.baseline_index()]);
            let judge = args
                .table
                .judge
                .clone()
                .or(evaluation.pairwise.as_ref().map(|p| p.judge.clone()));
            let printed = print_table(
                ctx.store.as_ref(),
                ran.job_ids,
                baseline,
                judge,
                &args.table,
                &database,
            )
            .await;
            // Failed items are left out of the table; the exit code says
            // the work was not all done, as `run`'s does.
            printed.map(|code| if code == 0 && ran.failed > 0 { 1 } else { code })
        }
        Ok(Err(code)) => Ok(code),
        Err(e) => Err(e),
    };
    ctx.store.close().await;
    code
}

/// Each policy's job config, checked as `sparring run` checks one.
fn policy_jobs(path: &Path, evaluation: &EvaluationFile) -> Result<Vec<Job>, Vec<config::Problem>> {
    let (text, base) = read_config_file(&evaluation.job, "the job config")?;
    let mut problems = Vec::new();
    let mut jobs = Vec::new();
    for policy in &evaluation.policies {
        let label = PathBuf::from(format!(
            "{} (policy '{}' of {})",
            evaluation.job.display(),
            policy.name,
            path.display()
        ));
        let loaded = evaluation
            .job_for(policy, &text, &evaluation.job)
            .and_then(|derived| {
                config::load::from_toml(&label.to_string_lossy(), &derived, &base, Trust::Local)
            });
        match loaded {
            Ok(job) => jobs.push(job),
            Err(mut found) => problems.append(&mut found),
        }
    }
    if let Some(pairwise) = &evaluation.pairwise {
        problems.extend(check_pairwise_judge(path, pairwise));
    }
    if problems.is_empty() {
        Ok(jobs)
    } else {
        Err(problems)
    }
}

/// The judges file reads, and names the judge as a pairwise one: checked
/// before anything runs, not after every policy's job is done.
fn check_pairwise_judge(path: &Path, pairwise: &Pairwise) -> Vec<config::Problem> {
    let set = match load_judges_file(&pairwise.judges) {
        Ok(set) => set,
        Err(problems) => return problems,
    };
    match set.judges.iter().find(|j| j.name == pairwise.judge) {
        Some(judge) if judge.mode == Mode::Pairwise => Vec::new(),
        Some(_) => vec![config::Problem::at_field(
            path,
            "evaluation.pairwise.judge",
            format!(
                "'{}' in {} is not a pairwise judge; name one with `mode = \"pairwise\"` (or \
                 builtin = \"pairwise_preference\")",
                pairwise.judge,
                pairwise.judges.display()
            ),
        )],
        None => vec![config::Problem::at_field(
            path,
            "evaluation.pairwise.judge",
            format!(
                "'{}' is not a judge of {} ({}); name its pairwise judge",
                pairwise.judge,
                pairwise.judges.display(),
                set.judges
                    .iter()
                    .map(|j| j.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )],
    }
}

/// What the policies' runs did.
struct Ran {
    /// In the file's order.
    job_ids: Vec<i64>,
    /// Items that failed, over all the policies.
    failed: i64,
}

/// Run (or resume) each policy's job in turn, writing it to the stored
/// evaluation as it ends: what they did, or the exit code when a run could
/// not be done or stopped before its job finished (said on stderr).
async fn run_policies(
    ctx: &jobs::Context,
    evaluation: &EvaluationFile,
    jobs: &[Job],
    args: &EvaluateArgs,
) -> anyhow::Result<Result<Ran, i32>> {
    let store: &dyn EvaluationStore = ctx.store.as_ref();
    let id = store
        .open_evaluation(
            &evaluation.name,
            evaluation.baseline.as_deref(),
            evaluation.pairwise.as_ref().map(|p| p.judge.as_str()),
        )
        .await?;
    let mut job_ids = Vec::with_capacity(jobs.len());
    let mut failed = 0;
    let count = jobs.len();
    for (at, (policy, job)) in evaluation.policies.iter().zip(jobs).enumerate() {
        eprintln!(
            "policy {}/{count} '{}': job '{}'",
            at + 1,
            policy.name,
            job.name
        );
        let options = args.work.options();
        let prepared = match jobs::generation::prepare(job).await {
            Ok(prepared) => prepared,
            Err(problems) => {
                report_problems(&problems);
                return Ok(Err(EXIT_INVALID));
            }
        };
        let report = match jobs::run_prepared(ctx, job, prepared, &options).await {
            Ok(report) => report,
            Err(e) => return exit_for(e).map(Err),
        };
        store
            .put_evaluation_policy(id, &policy.name, at as i64, report.job.id)
            .await?;
        let c = &report.counts;
        eprintln!(
            "policy '{}': job {} {} ({}), {} done, {} failed, {} pending",
            policy.name,
            report.job.id,
            report.job.status.as_str(),
            if report.resumed { "resumed" } else { "new" },
            c.done,
            c.failed,
            c.pending + c.leased
        );
        if c.failed > 0 {
            // Why, before the table leaves the failed items out (or finds
            // none shared, when a policy failed them all).
            for (error, count) in ctx.store.item_errors(report.job.id, 3).await? {
                eprintln!("  {count} failed: {error}");
            }
        }
        if !matches!(report.end, WorkEnd::Finished) {
            eprintln!(
                "evaluation '{}' stopped at policy '{}'; run `sparring evaluate` on the same \
                 file again to resume it",
                evaluation.name, policy.name
            );
            return Ok(Err(1));
        }
        failed += c.failed;
        job_ids.push(report.job.id);
    }
    let policies: Vec<(String, i64)> = evaluation
        .policies
        .iter()
        .map(|p| p.name.clone())
        .zip(job_ids.iter().copied())
        .collect();
    store.set_evaluation_policies(id, &policies).await?;
    if let Err(code) = judge_pairs(ctx, evaluation, &job_ids, args).await? {
        return Ok(Err(code));
    }
    eprintln!(
        "evaluation '{}' (id {id}): {} policies",
        evaluation.name,
        policies.len()
    );
    Ok(Ok(Ran { job_ids, failed }))
}

/// Judge the pairs of policies the file asks for, each a pairwise judging
/// job (found again, as `sparring judge --pairwise` finds one, when run
/// again); the exit code when one could not be done.
async fn judge_pairs(
    ctx: &jobs::Context,
    evaluation: &EvaluationFile,
    job_ids: &[i64],
    args: &EvaluateArgs,
) -> anyhow::Result<Result<(), i32>> {
    let Some(pairwise) = &evaluation.pairwise else {
        return Ok(Ok(()));
    };
    for (a, b) in evaluation.judged_pairs() {
        let target = JudgingTarget::Pairwise {
            a: job_ids[a],
            b: job_ids[b],
            match_by: MatchBy::Scenario,
        };
        let name = judging::job_name(&target);
        eprintln!(
            "judging '{}' against '{}' with '{}'",
            evaluation.policies[a].name, evaluation.policies[b].name, pairwise.judge
        );
        let spec = JudgingSpec {
            judges: JudgesSource::File {
                path: pairwise.judges.clone(),
            },
            target,
            min_reward: None,
        };
        let options = args.work.options();
        let report = match judging::judge(ctx, spec, &name, &options).await {
            Ok(report) => report,
            Err(e) => return exit_for(e).map(Err),
        };
        if !matches!(report.end, WorkEnd::Finished) {
            eprintln!(
                "evaluation '{}' stopped while judging; run `sparring evaluate` on the same file \
                 again to resume it",
                evaluation.name
            );
            return Ok(Err(1));
        }
        if report.counts.failed > 0 {
            eprintln!(
                "judging job {}: {} judgments failed or did not parse; they are left out of the \
                 ratings",
                report.job.id, report.counts.failed
            );
        }
    }
    Ok(Ok(()))
}
