//! SYNTH.toml's review committee: `[[reviewers]]`, judge tables written as a
//! job's `[[judges]]` (`builtin = "blueprint_review"` or a template of one's
//! own), and `[committee]`, how their scores combine. This file checks what
//! config knows: each reviewer's endpoint (or `roles.reviewer`, the default of
//! a table that names none), template paths, and the vote's numbers. The judge
//! module sits above config, so `synth::reviewers` reads the tables as judges
//! from [`CommitteeConfig::text`], where their problems keep their lines.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use toml::de::DeValue;
use toml::Spanned;

use crate::config::endpoint::Endpoints;
use crate::config::job::EndpointConfig;
use crate::config::paths::Resolver;
use crate::config::ranges;
use crate::diagnostics::document::{Node, Source};
use crate::diagnostics::problem::Problem;

/// A reviewer passes a blueprint at this score or above, by default (the
/// built-in `blueprint_review` scores 1 to 5; 4 means no blocking problem).
pub const DEFAULT_PASS_SCORE: f64 = 4.0;
/// The `mean` rule accepts a blueprint whose mean score is this or above, by default.
pub const DEFAULT_MIN_MEAN: f64 = 4.0;

/// How the reviewers' scores become the committee's decision.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommitteeRule {
    /// More than half of the readable verdicts are at `pass_score` or above.
    #[default]
    Majority,
    /// The mean of the readable scores is at `min_mean` or above.
    Mean,
}

impl CommitteeRule {
    pub fn as_str(self) -> &'static str {
        match self {
            CommitteeRule::Majority => "majority",
            CommitteeRule::Mean => "mean",
        }
    }
}

/// `[committee]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommitteeTable {
    #[serde(default)]
    rule: CommitteeRule,
    pass_score: Option<f64>,
    min_mean: Option<f64>,
    /// Readable verdicts a decision needs; default: more than half of the reviewers.
    quorum: Option<u64>,
}

/// The committee's vote, checked.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VoteRule {
    pub rule: CommitteeRule,
    /// A reviewer passes a blueprint at this score or above.
    pub pass_score: f64,
    /// `mean`: the lowest mean score that accepts.
    pub min_mean: f64,
    /// Readable verdicts a decision needs; fewer is a failure, not a rejection.
    pub quorum: usize,
}

/// The committee of a synthesis run, checked as far as config can.
#[derive(Debug, Clone)]
pub struct CommitteeConfig {
    pub vote: VoteRule,
    /// Each reviewer's endpoint, in `[[reviewers]]` order.
    pub endpoints: Vec<EndpointConfig>,
    /// `roles.reviewer`: the endpoint of a reviewer table that names none.
    pub default_endpoint: Option<String>,
    /// SYNTH.toml as read: `synth::reviewers` reads `[[reviewers]]` from it.
    pub text: Arc<str>,
    /// The folder a reviewer's relative `template` path resolves against.
    pub base: PathBuf,
}

/// What [`read_committee`] reads from SYNTH.toml besides the two tables.
pub(super) struct CommitteeInputs<'a> {
    pub file: &'a Path,
    pub text: &'a str,
    pub default_endpoint: Option<&'a str>,
    pub endpoints: &'a Endpoints,
    pub resolver: &'a Resolver<'a>,
}

/// Read `[committee]` and `[[reviewers]]` (either may be absent); `None`
/// when there is no committee or something is wrong (a problem says what).
pub(super) fn read_committee<'t>(
    source: &Source<'t>,
    committee: Option<Node<'t>>,
    reviewers: Option<(std::ops::Range<usize>, Node<'t>)>,
    inputs: &CommitteeInputs<'_>,
    problems: &mut Vec<Problem>,
) -> Option<CommitteeConfig> {
    let before = problems.len();
    let committee_given = committee.is_some();
    let table: Option<CommitteeTable> = match committee {
        Some(node) => source.typed("committee", node, problems),
        None => Some(CommitteeTable {
            rule: CommitteeRule::default(),
            pass_score: None,
            min_mean: None,
            quorum: None,
        }),
    };
    let Some((key_span, reviewers)) = reviewers else {
        if committee_given {
            problems.push(Problem::at_field(
                inputs.file,
                "committee",
                "has no reviewers; add [[reviewers]] tables, e.g. name = \"r1\", endpoint = \"judge\", builtin = \"blueprint_review\"",
            ));
        }
        if let Some(name) = inputs.default_endpoint {
            problems.push(Problem::at_field(
                inputs.file,
                "roles.reviewer",
                format!("names '{name}' as the reviewers' default endpoint, but there are no [[reviewers]]; add [[reviewers]] with name = \"r1\" and builtin = \"blueprint_review\", or remove roles.reviewer"),
            ));
        }
        return None;
    };
    let endpoints = reviewer_endpoints(source, key_span, reviewers, inputs, problems);
    let table = table?;
    let count = endpoints.as_ref().map_or(0, Vec::len);
    let vote = check_vote(inputs.file, &table, count, problems);
    if problems.len() != before {
        return None;
    }
    Some(CommitteeConfig {
        vote: vote?,
        endpoints: endpoints?,
        default_endpoint: inputs.default_endpoint.map(str::to_string),
        text: Arc::from(inputs.text),
        base: inputs.resolver.base.to_path_buf(),
    })
}

/// The vote's numbers, each in its range; `count` reviewers (0 when they
/// could not be read: the quorum is then not checked).
fn check_vote(
    file: &Path,
    table: &CommitteeTable,
    count: usize,
    problems: &mut Vec<Problem>,
) -> Option<VoteRule> {
    let pass_score = table.pass_score.unwrap_or(DEFAULT_PASS_SCORE);
    let min_mean = table.min_mean.unwrap_or(DEFAULT_MIN_MEAN);
    problems.extend(ranges::SCORE.problem(file, "committee.pass_score", pass_score));
    problems.extend(ranges::SCORE.problem(file, "committee.min_mean", min_mean));
    if table.rule == CommitteeRule::Majority && table.min_mean.is_some() {
        problems.push(Problem::at_field(
            file,
            "committee.min_mean",
            "applies to rule = \"mean\"; with rule = \"majority\" a blueprint passes when more than half of the reviewers score it at pass_score or above, so remove min_mean or set rule = \"mean\"",
        ));
    }
    let majority = count / 2 + 1;
    let quorum = match table.quorum {
        None => majority,
        Some(q) if count > 0 => {
            let range = ranges::whole(1, count as u64);
            match range.check(q) {
                Some(message) => {
                    problems.push(Problem::at_field(
                        file,
                        "committee.quorum",
                        format!("{message} (the readable verdicts a decision needs, at most the {count} reviewers)"),
                    ));
                    majority
                }
                None => usize::try_from(q).unwrap_or(majority),
            }
        }
        Some(_) => majority,
    };
    Some(VoteRule {
        rule: table.rule,
        pass_score,
        min_mean,
        quorum,
    })
}

/// Each reviewer table's endpoint (its own, or the default), defined in
/// `[endpoints]`; template paths checked as the config's other paths.
fn reviewer_endpoints<'t>(
    source: &Source<'t>,
    key_span: std::ops::Range<usize>,
    node: Node<'t>,
    inputs: &CommitteeInputs<'_>,
    problems: &mut Vec<Problem>,
) -> Option<Vec<EndpointConfig>> {
    let span = node.span();
    let DeValue::Array(items) = node.into_inner() else {
        problems.push(source.at(
            span,
            "reviewers",
            "is not a list of tables; write each reviewer as a [[reviewers]] table",
        ));
        return None;
    };
    if let Some(message) = ranges::SYNTH_REVIEWERS.check(items.len() as u64) {
        problems.push(source.at(key_span, "reviewers", format!("{message} reviewers")));
        return None;
    }
    let before = problems.len();
    let mut found = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("reviewers[{i}]");
        let DeValue::Table(table) = item.get_ref() else {
            problems.push(source.at(
                item.span(),
                &field,
                "is not a table; write [[reviewers]] with name, builtin (or template and mode) and endpoint",
            ));
            continue;
        };
        if let Some(template) = table.get("template") {
            if let DeValue::String(path) = template.get_ref() {
                inputs.resolver.resolve(
                    &format!("{field}.template"),
                    Path::new(path.as_ref()),
                    problems,
                );
            }
        }
        let (name, at): (String, _) = match table.get("endpoint") {
            Some(value) => match value.get_ref() {
                DeValue::String(name) => (name.to_string(), value.span()),
                // The judge reader says what type it must be.
                _ => continue,
            },
            None => match inputs.default_endpoint {
                Some(name) => (name.to_string(), item.span()),
                None => {
                    problems.push(source.at(
                        item.span(),
                        &format!("{field}.endpoint"),
                        format!(
                            "is missing; name the endpoint the reviewer's calls go to (one of: {}), or give roles.reviewer as the default of every reviewer",
                            inputs.endpoints.names.join(", ")
                        ),
                    ));
                    continue;
                }
            },
        };
        match inputs.endpoints.configs.get(&name) {
            Some(config) => found.push(config.clone()),
            // Defined but broken: its own problem says why.
            None if inputs.endpoints.names.contains(&name) => {}
            None => problems.push(source.at(
                at,
                &format!("{field}.endpoint"),
                format!(
                    "names endpoint '{name}', which is not defined; define [endpoints.{name}] or use one of: {}",
                    inputs.endpoints.names.join(", ")
                ),
            )),
        }
    }
    (problems.len() == before && found.len() == items.len()).then_some(found)
}

/// A reviewer table that names no endpoint, given the default's: the judge
/// reader needs one. The value is placed at the table, so a problem with it
/// points there.
pub fn fill_default_endpoint<'t>(node: &mut Node<'t>, default: Option<&str>) {
    let span = node.span();
    let (DeValue::Table(table), Some(name)) = (node.get_mut(), default) else {
        return;
    };
    if table.get("endpoint").is_none() {
        table.insert(
            Spanned::new(span.clone(), Cow::Borrowed("endpoint")),
            Spanned::new(span, DeValue::String(Cow::Owned(name.to_string()))),
        );
    }
}
