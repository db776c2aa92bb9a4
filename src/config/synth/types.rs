//! A synthesis run's config as checked: every value in range, every path
//! absolute, endpoints resolved; assembled once nothing had a problem.

use std::path::PathBuf;

use super::file::SynthHead;
use super::stored::stored_text;
use super::Written;
use crate::config::dedup::DedupConfig;
use crate::config::job::EndpointConfig;
use crate::config::paths::Resolver;
use crate::config::{EnvironmentConfig, MockConfig};
use crate::diagnostics::problem::Problem;

use super::committee::CommitteeConfig;
use super::diversity::DiversityConfig;

/// A synthesis run's config, checked, paths absolute.
#[derive(Debug, Clone)]
pub struct SynthConfig {
    /// The head as written, its paths resolved and `output` given.
    pub head: SynthHead,
    pub source: PathBuf,
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
        head: Some(head),
        endpoints,
        environment: Some(environment),
        generator: Some(generator),
        reviewer,
        dedup,
        mock,
        committee,
        diversity,
        tools,
        paths_ok: true,
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
    Ok(SynthConfig {
        head,
        source: label.to_path_buf(),
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
