//! SYNTH.toml's paths, resolved relative to its folder (inside the data root
//! for a config submitted to the service): a simulated environment's tool
//! specs, the examples and policy files, and where the scenarios are written.

use std::path::{Path, PathBuf};

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

/// The files the head names, resolved; `None` for one given but not usable.
pub(super) struct HeadPaths {
    pub(super) examples: Option<PathBuf>,
    pub(super) policy: Option<PathBuf>,
    pub(super) output: Option<PathBuf>,
}

/// The examples and policy files (which must exist) and the output file
/// (default `NAME.jsonl` beside the config).
pub(super) fn head_paths(
    resolver: &Resolver<'_>,
    h: &SynthHead,
    problems: &mut Vec<Problem>,
) -> HeadPaths {
    let examples = h
        .examples
        .as_ref()
        .map(|p| resolver.existing("examples", p, Want::File, problems));
    let policy = h
        .policy
        .as_ref()
        .map(|p| resolver.existing("policy", p, Want::File, problems));
    let output = match &h.output {
        Some(path) => resolver.resolve("output", path, problems),
        None => resolver.resolve(
            "output",
            Path::new(&format!("{}.jsonl", file_name_part(&h.name))),
            problems,
        ),
    };
    HeadPaths {
        examples: examples.flatten(),
        policy: policy.flatten(),
        output,
    }
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
