//! SYNTH.toml's paths, resolved relative to its folder (inside the data root
//! for a config submitted to the service): a simulated environment's tool
//! specs, the examples and policy files, and where the scenarios are written.

use std::path::PathBuf;

use super::file::SynthHead;
use crate::config::environment::EnvironmentConfig;
use crate::config::paths::{Resolver, Want};
use crate::diagnostics::problem::Problem;

/// A simulated environment's tool specs, relative to SYNTH.toml; left as
/// written (with a problem) when they cannot be found.
pub(super) fn environment_tools(
    resolver: &Resolver<'_>,
    environment: EnvironmentConfig,
    problems: &mut Vec<Problem>,
) -> EnvironmentConfig {
    match environment {
        EnvironmentConfig::Simulated(mut simulated) => {
            if let Some(tools) =
                resolver.existing("environment.tools", &simulated.tools, Want::File, problems)
            {
                simulated.tools = tools;
            }
            EnvironmentConfig::Simulated(simulated)
        }
        other => other,
    }
}

/// The examples and policy files (which must exist) and the output file
/// (default `NAME.jsonl` beside the config), resolved in place; `false` when
/// one could not be (a problem says why).
pub(super) fn head_paths(
    resolver: &Resolver<'_>,
    h: &mut SynthHead,
    problems: &mut Vec<Problem>,
) -> bool {
    let mut ok = true;
    for (field, path) in [("examples", &mut h.examples), ("policy", &mut h.policy)] {
        if let Some(given) = path.as_mut() {
            match resolver.existing(field, given, Want::File, problems) {
                Some(resolved) => *given = resolved,
                None => ok = false,
            }
        }
    }
    let output = match &h.output {
        Some(path) => path.clone(),
        None => PathBuf::from(format!("{}.jsonl", file_name_part(&h.name))),
    };
    h.output = resolver.resolve("output", &output, problems);
    ok && h.output.is_some()
}

/// `name` with every character a file name should not hold replaced by `_`.
fn file_name_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect::<String>()
        .trim_start_matches('.')
        .to_string()
}
