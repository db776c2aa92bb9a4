//! `sparring validate JOB.toml`

use std::path::Path;

use crate::config;
use crate::jobs::generation::prepare;

use super::{report_problems, EXIT_INVALID};

pub async fn validate(path: &Path) -> anyhow::Result<i32> {
    let problems = match config::load(path) {
        Err(problems) => problems,
        Ok(job) => match prepare(&job).await {
            Err(problems) => problems,
            Ok(prepared) => {
                let own = prepared
                    .scenarios
                    .iter()
                    .filter(|s| s.tools.is_some())
                    .count();
                let tools = if own > 0 {
                    format!("the tools each of {own} rows brings")
                } else {
                    format!("{} tools", prepared.tools.len())
                };
                println!(
                    "{}: valid — {} scenarios, {} personas, environment {} with {tools}",
                    path.display(),
                    prepared.scenarios.len(),
                    prepared.personas.len(),
                    prepared.environment.name(),
                );
                return Ok(0);
            }
        },
    };
    report_problems(&problems);
    Ok(EXIT_INVALID)
}
