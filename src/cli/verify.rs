//! `sparring verify --environment CONFIG --rollouts FILE`: send recorded NeMo
//! Gym rollouts to the job's resources server's `/verify` again and report, per
//! rollout and in total, whether the recorded rewards are reproduced.

use std::path::Path;

use anyhow::Context;

use crate::config::verify::load_verify;
use crate::env::nemo_gym::openapi::{self, Protocol};
use crate::env::nemo_gym::reverify::{reverify, Outcome, RowIndex};
use crate::env::nemo_gym::server::ResourcesServer;
use crate::persona::nemo_gym::json_objects;

use super::{report_problems, EXIT_INVALID};

/// Exit code when a reward was not reproduced or the server failed.
const EXIT_DIFFERS: i32 = 1;

pub async fn verify(environment: &Path, rollouts: &Path) -> anyhow::Result<i32> {
    let config = match load_verify(environment) {
        Ok(config) => config,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let nemo = &config.environment;
    let rows = match &config.rows {
        Some(rows) => match json_objects(rows) {
            Ok(rows) => RowIndex::new(rows),
            Err(problems) => {
                report_problems(&problems);
                return Ok(EXIT_INVALID);
            }
        },
        None => RowIndex::default(),
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
    let models = openapi::fetch(&server).await;
    match models.protocol {
        Protocol::Gymnasium => {
            eprintln!(
                "{}: the server at {} speaks NeMo Gym's Gymnasium protocol (/reset, /step), \
                 which has no /verify to re-verify rollouts with",
                environment.display(),
                nemo.base_url
            );
            return Ok(EXIT_INVALID);
        }
        _ if models.declared.is_none() => eprintln!(
            "note: {} describes no /verify models (GET /openapi.json); only reward, \
             mask_sample, failure_kind and failure_reason are left out of what is sent, and \
             only the server's own validation says what is required",
            nemo.base_url
        ),
        _ => {}
    }

    let (mut agree, mut differ, mut cannot, mut failed) = (0, 0, 0, 0);
    for (line, rollout) in &recorded {
        let check = reverify(&server, &models, &rows, *line, rollout).await;
        let mut completed = match &check.completed_from {
            Some((row, fields)) => format!(" [{} from dataset line {row}]", fields.join(", ")),
            None => String::new(),
        };
        if check.replayed > 0 {
            completed.push_str(&format!(
                " [{} call{} replayed]",
                check.replayed,
                if check.replayed == 1 { "" } else { "s" }
            ));
        }
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
