//! `usersim verify --environment CONFIG --rollouts FILE`: send recorded NeMo
//! Gym rollouts to the job's resources server's `/verify` again and report, per
//! rollout and in total, whether the recorded rewards are reproduced.

use std::path::Path;

use anyhow::Context;

use crate::config::{self, DatasetFormat, EnvironmentConfig, Problem};
use crate::env::nemo_gym::reverify::{reverify, Outcome, RowIndex};
use crate::env::nemo_gym::server::ResourcesServer;
use crate::persona::nemo_gym::json_objects;

use super::{report_problems, EXIT_INVALID};

/// Exit code when a reward was not reproduced or the server failed.
const EXIT_DIFFERS: i32 = 1;

pub async fn verify(environment: &Path, rollouts: &Path) -> anyhow::Result<i32> {
    let job = match config::load(environment) {
        Ok(job) => job,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let EnvironmentConfig::NemoGym(nemo) = &job.environment else {
        report_problems(&[Problem::at_field(
            environment,
            "environment.kind",
            "re-verifying rollouts needs a NeMo Gym resources server: kind = \"nemo_gym\" with base_url",
        )]);
        return Ok(EXIT_INVALID);
    };
    let rows = if job.dataset.format == DatasetFormat::NemoGym {
        match json_objects(&job.dataset.scenarios) {
            Ok(rows) => RowIndex::new(rows),
            Err(problems) => {
                report_problems(&problems);
                return Ok(EXIT_INVALID);
            }
        }
    } else {
        RowIndex::default()
    };
    let recorded = match json_objects(rollouts) {
        Ok(recorded) => recorded,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let server = ResourcesServer::new(nemo)
        .map_err(anyhow::Error::msg)
        .context("cannot reach the resources server")?;

    let (mut agree, mut differ, mut cannot, mut failed) = (0, 0, 0, 0);
    for (line, rollout) in &recorded {
        let check = reverify(&server, &rows, *line, rollout).await;
        let completed = match &check.completed_from {
            Some((row, fields)) => format!(" [{} from dataset line {row}]", fields.join(", ")),
            None => String::new(),
        };
        let said = match &check.outcome {
            Outcome::Agrees { reward } => {
                agree += 1;
                format!("agrees: reward {reward}")
            }
            Outcome::Differs { recorded, now } => {
                differ += 1;
                format!("differs: recorded {recorded}, verify now gives {now}")
            }
            Outcome::CannotReverify { reason } => {
                cannot += 1;
                format!("cannot re-verify: {reason}")
            }
            Outcome::Unscored { reason } => {
                failed += 1;
                format!("no valid reward: {reason}")
            }
            Outcome::Failed { error } => {
                failed += 1;
                format!("failed: {error}")
            }
        };
        println!("{}:{line}: {said}{completed}", rollouts.display());
    }
    let verified = agree + differ;
    println!(
        "{agree} of {verified} re-verified rewards agree with the recorded ones ({} rollouts: \
         {agree} agree, {differ} differ, {cannot} cannot be re-verified, {failed} failed) at {}",
        recorded.len(),
        nemo.base_url
    );
    Ok(if differ + failed > 0 { EXIT_DIFFERS } else { 0 })
}
