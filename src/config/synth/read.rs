//! Reading SYNTH.toml's tables, each with the positions of its keys and its
//! own problems: the head, `[endpoints]`, `[roles]` and `[environment]`
//! (required), `[diversity]`, `[dedup]` and `[mock]` (optional). Endpoints
//! and the environment are read by the job config's own readers.

use std::ops::Range;

use toml::de::DeTable;

use super::diversity::{read_diversity, DiversityConfig};
use super::file::{SynthHead, SynthRoles, TABLES};
use crate::config::dedup::DedupConfig;
use crate::config::document::{Node, Source};
use crate::config::endpoint::{read_endpoints, Endpoints};
use crate::config::environment::{read_environment, EnvironmentFile};
use crate::config::file::MockFile;
use crate::config::load::mock_config;
use crate::config::problem::Problem;
use crate::config::service::Trust;
use crate::config::MockConfig;

/// The tables of SYNTH.toml, taken out of the document; the keys left are its head.
pub(super) struct Tables<'t> {
    pub(super) endpoints: Option<Node<'t>>,
    pub(super) roles: Option<Node<'t>>,
    pub(super) environment: Option<Node<'t>>,
    pub(super) dedup: Option<Node<'t>>,
    pub(super) mock: Option<Node<'t>>,
    pub(super) committee: Option<Node<'t>>,
    pub(super) diversity: Option<Node<'t>>,
    /// With the span of its key, where a problem of the whole list is placed.
    pub(super) reviewers: Option<(Range<usize>, Node<'t>)>,
}

impl<'t> Tables<'t> {
    pub(super) fn take(root: &mut DeTable<'t>) -> Tables<'t> {
        let mut take = |name: &str| Source::take(root, name).map(|(_, n)| n);
        Tables {
            endpoints: take("endpoints"),
            roles: take("roles"),
            environment: take("environment"),
            dedup: take("dedup"),
            mock: take("mock"),
            committee: take("committee"),
            diversity: take("diversity"),
            reviewers: Source::take(root, "reviewers"),
        }
    }
}

/// The keys of `root` that are not tables; an unknown one is a problem at its line.
pub(super) fn head<'t>(
    source: &Source<'t>,
    root: DeTable<'t>,
    problems: &mut Vec<Problem>,
) -> Option<SynthHead> {
    source.read_head(root, TABLES, problems)
}

/// `[diversity]`, whose counts are checked against the head's `target`.
pub(super) fn diversity<'t>(
    source: &Source<'t>,
    node: Option<Node<'t>>,
    head: Option<&SynthHead>,
    problems: &mut Vec<Problem>,
) -> DiversityConfig {
    node.map(|node| read_diversity(source, node, head.map(|h| h.target), problems))
        .unwrap_or_default()
}

/// A required table left out: a problem with an example of it.
fn missing(source: &Source<'_>, name: &str, example: &str, problems: &mut Vec<Problem>) {
    problems.push(Problem::at_field(
        &source.file,
        name,
        format!("is missing; add {example}"),
    ))
}

/// `[endpoints]`, required.
pub(super) fn endpoints<'t>(
    source: &Source<'t>,
    node: Option<Node<'t>>,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Endpoints {
    match node {
        Some(node) => read_endpoints(source, node, trust, problems),
        None => {
            missing(
                source,
                "endpoints",
                "[endpoints.generator] with base_url and model (or mock = true, model = \
                 \"mock-synth\")",
                problems,
            );
            Default::default()
        }
    }
}

/// `[roles]`, required.
pub(super) fn roles<'t>(
    source: &Source<'t>,
    node: Option<Node<'t>>,
    problems: &mut Vec<Problem>,
) -> Option<SynthRoles> {
    match node {
        Some(node) => source.typed("roles", node, problems),
        None => {
            missing(
                source,
                "roles",
                "[roles] with generator = \"ENDPOINT\"",
                problems,
            );
            None
        }
    }
}

/// `[environment]`, required.
pub(super) fn environment<'t>(
    source: &Source<'t>,
    node: Option<Node<'t>>,
    base: &std::path::Path,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Option<EnvironmentFile> {
    match node {
        Some(node) => read_environment(source, node, base, trust, problems),
        None => {
            missing(
                source,
                "environment",
                "[environment] with name = \"builtin:retail\"",
                problems,
            );
            None
        }
    }
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
            .typed::<MockFile>("mock", node, problems)
            .map(|m| mock_config(&source.file, &m, problems))
            .unwrap_or_default(),
        None => MockConfig::default(),
    }
}
