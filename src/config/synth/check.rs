//! Checks of SYNTH.toml's values: each role names a defined endpoint,
//! `roles.tools` goes with a simulated environment only, and the head's
//! numbers are in range and its name is given.

use std::path::Path;

use super::file::{SynthHead, SynthRoles};
use crate::config::endpoint::Endpoints;
use crate::config::environment::EnvironmentConfig;
use crate::config::job::EndpointConfig;
use crate::config::ranges;
use crate::diagnostics::problem::Problem;

/// The endpoint role `field` names; `None`, and a problem saying which
/// exist, when no endpoint has that name (an endpoint with problems of its
/// own is `None` without another).
pub(super) fn role_endpoint(
    label: &Path,
    endpoints: &Endpoints,
    field: &str,
    name: &str,
    problems: &mut Vec<Problem>,
) -> Option<EndpointConfig> {
    let found = endpoints.configs.get(name).cloned();
    if found.is_none() && !endpoints.names.iter().any(|n| n == name) {
        problems.push(Problem::at_field(
            label,
            field,
            format!(
                "names endpoint '{name}', which is not defined; define [endpoints.{name}] or \
                 use one of: {}",
                endpoints.names.join(", ")
            ),
        ));
    }
    found
}

/// `roles.tools`: required with a `simulated` environment (its gold actions
/// run only when a model plays its tools), refused with any other.
pub(super) fn roles_tools<'r>(
    label: &Path,
    roles: Option<&'r SynthRoles>,
    environment: Option<&EnvironmentConfig>,
    problems: &mut Vec<Problem>,
) -> Option<&'r str> {
    let (roles, environment) = (roles?, environment?);
    let simulated = matches!(environment, EnvironmentConfig::Simulated(_));
    match (&roles.tools, simulated) {
        (Some(name), true) => Some(name),
        (None, false) => None,
        (None, true) => {
            problems.push(Problem::at_field(
                label,
                "roles.tools",
                "is missing; a simulated environment's gold actions run only when a model \
                 plays its tools: add tools = \"ENDPOINT\" (e.g. an [endpoints.tools] with \
                 mock = true, model = \"mock-tools\")",
            ));
            None
        }
        (Some(_), false) => {
            problems.push(Problem::at_field(
                label,
                "roles.tools",
                "plays a simulated environment's tools, and this environment is not one; \
                 remove it",
            ));
            None
        }
    }
}

/// The head's numbers, each in its range, and its name.
pub(super) fn head(label: &Path, h: &SynthHead, problems: &mut Vec<Problem>) {
    for (field, n, range) in [
        ("target", h.target as u64, ranges::SYNTH_TARGET),
        ("max_attempts", h.max_attempts, ranges::SYNTH_MAX_ATTEMPTS),
        (
            "records_per_prompt",
            h.records_per_prompt as u64,
            ranges::SYNTH_RECORDS_PER_PROMPT,
        ),
        ("concurrency", h.concurrency as u64, ranges::CONCURRENCY),
        (
            "examples_shown",
            h.examples_shown as u64,
            ranges::SYNTH_EXAMPLES,
        ),
        (
            "max_proposals",
            h.max_proposals.unwrap_or(1),
            ranges::SYNTH_MAX_PROPOSALS,
        ),
    ] {
        problems.extend(range.problem(label, field, n));
    }
    problems.extend(ranges::LEASE_SECS.problem(label, "lease_secs", h.lease_secs));
    if h.name.trim().is_empty() {
        problems.push(Problem::at_field(
            label,
            "name",
            "is empty; give the synthesis job a name, e.g. name = \"retail-synth-v1\"",
        ));
    }
}
