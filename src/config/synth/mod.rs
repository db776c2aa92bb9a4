//! SYNTH.toml: a scenario-synthesis run. Endpoints and the environment are
//! read by the job config's own readers, so they are written and checked the
//! same way; the rest is the run's head. In the shape of `config::load`: each
//! table read with the positions of its keys (`read`), each value checked in
//! its own function (`check`), paths resolved (`paths`), every problem
//! collected before any is returned; `file` is the config as written, `types`
//! the config checked, `stored` the form a synthesis job stores. The review
//! committee (`committee`) and the brief's targets (`diversity`) are its
//! tables with readers of their own.

mod check;
pub mod committee;
pub mod diversity;
mod file;
mod paths;
mod read;
mod stored;
mod types;

use std::path::Path;

pub use stored::{from_snapshot, from_stored, SynthSpec};
pub use types::SynthConfig;

use super::dedup::DedupConfig;
use super::endpoint::Endpoints;
use super::environment::EnvironmentConfig;
use super::job::EndpointConfig;
use super::paths::Resolver;
use super::service::Trust;
use super::tables::Tables;
use super::MockConfig;
use crate::diagnostics::document::Source;
use crate::diagnostics::problem::Problem;
use committee::{read_committee, CommitteeConfig, CommitteeInputs};
use diversity::DiversityConfig;
pub use file::SynthHead;

/// Read and check SYNTH.toml at `path`; every problem at once.
pub fn load_synth(path: &Path) -> Result<SynthConfig, Vec<Problem>> {
    let text = crate::regular_file::read_to_string(path).map_err(|e| {
        vec![Problem::in_file(
            path,
            format!("cannot read the synthesis config: {e}"),
        )]
    })?;
    let base = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let base = std::path::absolute(base).map_err(|e| {
        vec![Problem::in_file(
            path,
            format!("cannot resolve its folder: {e}"),
        )]
    })?;
    from_toml(path, &text, &base, Trust::Local)
}

/// SYNTH.toml given as text; `label` names it, relative paths resolve against `base`.
pub fn from_toml(
    label: &Path,
    text: &str,
    base: &Path,
    trust: Trust<'_>,
) -> Result<SynthConfig, Vec<Problem>> {
    let source = Source::toml(label, text);
    let root = source.parse()?;
    let mut problems = Vec::new();
    let resolver = Resolver {
        file: label,
        base,
        trust,
    };
    let written = read_all(&source, root, &resolver, &mut problems);
    types::assemble(written, &resolver, text, problems)
}

/// Every part of SYNTH.toml, read and checked, each `None` when it had problems.
struct Written {
    head: Option<SynthHead>,
    endpoints: Endpoints,
    environment: Option<EnvironmentConfig>,
    generator: Option<EndpointConfig>,
    reviewer: Option<EndpointConfig>,
    dedup: DedupConfig,
    mock: MockConfig,
    committee: Option<CommitteeConfig>,
    diversity: DiversityConfig,
    tools: Option<EndpointConfig>,
    /// Whether the head's paths resolved.
    paths_ok: bool,
}

/// Read, check and resolve every table of `root`, so that a problem in one
/// hides none in another; problems come in the order of the steps here.
fn read_all<'t>(
    source: &Source<'t>,
    mut root: toml::de::DeTable<'t>,
    resolver: &Resolver<'_>,
    problems: &mut Vec<Problem>,
) -> Written {
    let (label, trust) = (resolver.file, resolver.trust);
    let mut tables = Tables::take(&mut root, file::TABLES);
    let mut head: Option<SynthHead> = source.read_head(root, file::TABLES, problems);
    let diversity = read::diversity(
        source,
        tables.optional("diversity"),
        head.as_ref(),
        problems,
    );
    let endpoints = read::endpoints(source, &mut tables, trust, problems);
    let roles = read::roles(source, &mut tables, problems);
    let environment = read::environment(source, &mut tables, resolver.base, trust, problems);
    let role = |field: &str, name: &str, problems: &mut Vec<Problem>| {
        check::role_endpoint(label, &endpoints, field, name, problems)
    };
    let generator = roles
        .as_ref()
        .and_then(|r| role("roles.generator", &r.generator, problems));
    let reviewer = roles
        .as_ref()
        .and_then(|r| r.reviewer.as_deref())
        .and_then(|name| role("roles.reviewer", name, problems));
    let dedup = read::dedup(source, tables.optional("dedup"), problems);
    let mock = read::mock(source, tables.optional("mock"), problems);
    let tools = check::roles_tools(label, roles.as_ref(), environment.as_ref(), problems)
        .and_then(|name| role("roles.tools", name, problems));
    let committee = read_committee(
        source,
        tables.optional("committee"),
        tables.optional_at("reviewers"),
        &CommitteeInputs {
            file: label,
            text: source.text,
            default_endpoint: roles.as_ref().and_then(|r| r.reviewer.as_deref()),
            endpoints: &endpoints,
            resolver,
        },
        problems,
    );
    let environment = environment.map(|e| paths::environment_tools(resolver, e, problems));
    let paths_ok = head.as_mut().is_some_and(|h| {
        check::head(label, h, problems);
        paths::head_paths(resolver, h, problems)
    });
    Written {
        head,
        endpoints,
        environment,
        generator,
        reviewer,
        dedup,
        mock,
        committee,
        diversity,
        tools,
        paths_ok,
    }
}

#[cfg(test)]
mod committee_tests;
#[cfg(test)]
mod tests;
