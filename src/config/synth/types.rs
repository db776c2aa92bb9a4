//! A synthesis run's config as checked: every value in range, every path
//! absolute, endpoints resolved; assembled once nothing had a problem.

use std::path::PathBuf;

use super::paths::HeadPaths;
use super::stored::stored_text;
use super::Written;
use crate::config::dedup::DedupConfig;
use crate::config::job::EndpointConfig;
use crate::config::paths::Resolver;
use crate::config::ranges;
use crate::config::{EnvironmentConfig, MockConfig};
use crate::diagnostics::problem::Problem;

use super::committee::CommitteeConfig;
use super::diversity::DiversityConfig;

/// A synthesis run's config, checked, paths absolute.
#[derive(Debug, Clone)]
pub struct SynthConfig {
    pub name: String,
    pub source: PathBuf,
    pub seed: u64,
    pub database: String,
    pub target: usize,
    pub max_attempts: u32,
    pub records_per_prompt: usize,
    pub max_proposals: u64,
    pub concurrency: usize,
    pub lease: std::time::Duration,
    pub examples: Option<PathBuf>,
    pub examples_shown: usize,
    pub policy: Option<PathBuf>,
    pub output: PathBuf,
    pub environment: EnvironmentConfig,
    pub generator: EndpointConfig,
    pub reviewer: Option<EndpointConfig>,
    /// When two proposals are the same task (`[dedup]`).
    pub dedup: DedupConfig,
    /// The in-process mock's latency and faults (`[mock]`), for `mock = true` endpoints.
    pub mock: MockConfig,
    /// The config as a synthesis job stores it: the TOML as written with its
    /// `[endpoints]` as stored (operator endpoints resolved), read again
    /// with [`super::from_snapshot`] against `base`.
    pub snapshot: String,
    /// The folder relative paths resolve against.
    pub base: PathBuf,
    /// `[[reviewers]]` and `[committee]`: `None` reviews nothing.
    pub committee: Option<CommitteeConfig>,
    /// `[diversity]`: what the proposals' briefs ask for.
    pub diversity: DiversityConfig,
    /// Plays a `simulated` environment's tools (`open_environment_with`).
    pub tools: Option<EndpointConfig>,
}

/// The config `written` describes, when nothing had a problem; its stored
/// form is `text` with its endpoints as stored.
pub(super) fn assemble(
    written: Written,
    resolver: &Resolver<'_>,
    text: &str,
    problems: Vec<Problem>,
) -> Result<SynthConfig, Vec<Problem>> {
    let Written {
        head: Some(h),
        endpoints,
        environment: Some(environment),
        generator: Some(generator),
        reviewer,
        dedup,
        mock,
        committee,
        diversity,
        tools,
        paths:
            Some(HeadPaths {
                examples,
                policy,
                output: Some(output),
            }),
    } = written
    else {
        return Err(problems);
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    let label = resolver.file;
    let snapshot = match stored_text(text, &endpoints.snapshots) {
        Ok(snapshot) => snapshot,
        Err(e) => return Err(vec![Problem::in_file(label, e)]),
    };
    let max_proposals = h
        .max_proposals
        .unwrap_or(h.target.saturating_mul(10))
        .min(ranges::MAX_ITEMS);
    Ok(SynthConfig {
        name: h.name,
        source: label.to_path_buf(),
        seed: h.seed,
        database: h.database,
        target: usize::try_from(h.target).unwrap_or(usize::MAX),
        max_attempts: u32::try_from(h.max_attempts).unwrap_or(u32::MAX),
        records_per_prompt: usize::try_from(h.records_per_prompt).unwrap_or(usize::MAX),
        max_proposals,
        concurrency: usize::try_from(h.concurrency).unwrap_or(usize::MAX),
        lease: std::time::Duration::from_secs_f64(h.lease_secs),
        examples,
        examples_shown: usize::try_from(h.examples_shown).unwrap_or(usize::MAX),
        policy,
        output,
        environment,
        generator,
        reviewer,
        dedup,
        mock,
        snapshot,
        base: resolver.base.to_path_buf(),
        committee,
        diversity,
        tools,
    })
}
