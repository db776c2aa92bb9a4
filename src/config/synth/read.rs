//! Reading SYNTH.toml's tables, each with the positions of its keys and its
//! own problems: the head, `[endpoints]`, `[roles]` and `[environment]`
//! (required), `[diversity]`, `[dedup]` and `[mock]` (optional). Endpoints
//! and the environment are read by the job config's own readers.

use super::diversity::{read_diversity, DiversityConfig};
use super::file::{SynthHead, SynthRoles};
use crate::config::dedup::DedupConfig;
use crate::config::endpoint::{read_endpoints, Endpoints};
use crate::config::environment::{read_environment, EnvironmentConfig};
use crate::config::load::check_mock;
use crate::config::service::Trust;
use crate::config::tables::Tables;
use crate::config::MockConfig;
use crate::diagnostics::document::{Node, Source};
use crate::diagnostics::problem::Problem;

/// `[diversity]`, whose counts are checked against the head's `target`.
pub(super) fn diversity<'t>(
    source: &Source<'t>,
    node: Option<Node<'t>>,
    head: Option<&SynthHead>,
    problems: &mut Vec<Problem>,
) -> DiversityConfig {
    node.map(|node| read_diversity(source, node, head.map(|h| h.target as u64), problems))
        .unwrap_or_default()
}

/// `[endpoints]`, required.
pub(super) fn endpoints<'t>(
    source: &Source<'t>,
    tables: &mut Tables<'t>,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Endpoints {
    let example = "[endpoints.generator] with base_url and model (or mock = true, model = \
                   \"mock-synth\")";
    tables
        .required(&source.file, "endpoints", example, problems)
        .map(|node| read_endpoints(source, node, trust, problems))
        .unwrap_or_default()
}

/// `[roles]`, required.
pub(super) fn roles<'t>(
    source: &Source<'t>,
    tables: &mut Tables<'t>,
    problems: &mut Vec<Problem>,
) -> Option<SynthRoles> {
    let example = "[roles] with generator = \"ENDPOINT\"";
    tables
        .required(&source.file, "roles", example, problems)
        .and_then(|node| source.typed("roles", node, problems))
}

/// `[environment]`, required.
pub(super) fn environment<'t>(
    source: &Source<'t>,
    tables: &mut Tables<'t>,
    base: &std::path::Path,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Option<EnvironmentConfig> {
    let example = "[environment] with name = \"builtin:retail\"";
    tables
        .required(&source.file, "environment", example, problems)
        .and_then(|node| read_environment(source, node, base, trust, problems))
}

/// `[dedup]`, its numbers checked; the defaults when it is left out or wrong.
pub(super) fn dedup<'t>(
    source: &Source<'t>,
    node: Option<Node<'t>>,
    problems: &mut Vec<Problem>,
) -> DedupConfig {
    let Some(node) = node else {
        return DedupConfig::default();
    };
    match source.typed::<DedupConfig>("dedup", node, problems) {
        Some(d) => {
            problems.extend(d.problems(&source.file, "dedup"));
            d
        }
        None => DedupConfig::default(),
    }
}

/// `[mock]`, its knobs checked; the defaults when it is left out or wrong.
pub(super) fn mock<'t>(
    source: &Source<'t>,
    node: Option<Node<'t>>,
    problems: &mut Vec<Problem>,
) -> MockConfig {
    match node {
        Some(node) => source
            .typed::<MockConfig>("mock", node, problems)
            .inspect(|m| check_mock(&source.file, m, problems))
            .unwrap_or_default(),
        None => MockConfig::default(),
    }
}
