//! `[diversity]` of SYNTH.toml: which share of a synthesis run's scenarios
//! should carry each tag, be of each difficulty, call each tool, and be
//! refusals, transfers or multi-intent. Every key is optional; without the
//! table every proposal's brief is empty (the generator's choice), as before.
//!
//! ```toml
//! [diversity]
//! refusal = 0.1                    # the policy forbids the request; nothing changes
//! transfer = 0.05                  # the agent hands the user to a human
//! multi_intent = 0.1               # two requests, each with its own change
//! difficulty = { easy = 0.5, medium = 0.3, hard = 0.2 }   # a mix: sums to 1
//! tags = { return = 0.15, cancel = 0.15 }                 # at least these shares
//! [diversity.tools]
//! modify_pending_order_address = 0.05           # at least 5% of the scenarios call it
//! return_delivered_order_items = { count = 10 }  # at least 10 of them
//! ```
//!
//! Refusal, transfer and the rest ("resolve": the agent does what is asked)
//! are one mix; multi-intent scenarios and required tools are planned among
//! the resolve ones, so their shares must fit in `1 - refusal - transfer`.
//! Tool names are checked against the environment once it is open
//! ([`DiversityConfig::tool_problems`]).

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::de::DeValue;

use crate::config::ranges::{
    Real, SYNTH_DIVERSITY_NAMES, SYNTH_MIN_SHARE, SYNTH_SHARE, SYNTH_TOOL_COUNT,
};
use crate::diagnostics::document::{child, Node, Source};
use crate::diagnostics::problem::Problem;

/// The tag of a scenario whose request the policy forbids.
pub const REFUSAL_TAG: &str = "refusal";
/// The tag of a scenario the agent must hand to a human.
pub const TRANSFER_TAG: &str = "transfer";
/// The tag of a scenario with two requests (see `synth::brief_check`).
pub const MULTI_INTENT_TAG: &str = "multi-intent";
/// Tags a `[diversity.tags]` target may not name, and what to write instead.
const RESERVED_TAGS: &[(&str, &str)] = &[
    (REFUSAL_TAG, "use refusal = SHARE"),
    (TRANSFER_TAG, "use transfer = SHARE"),
    (MULTI_INTENT_TAG, "use multi_intent = SHARE"),
    (
        "synthesized",
        "every synthesized scenario carries it already",
    ),
];

/// How far a mix's shares may sum from 1 (rounding in a written decimal).
const MIX_SUM_TOLERANCE: f64 = 1e-6;

const KEYS: &[&str] = &[
    "refusal",
    "transfer",
    "multi_intent",
    "difficulty",
    "tags",
    "tools",
];

/// Whether `tool` hands the user to a human agent: tau-bench's
/// `transfer_to_human_agents` (retail, airline) and names like it.
pub fn is_transfer_tool(tool: &str) -> bool {
    tool.starts_with("transfer_to_human")
}

/// A name (a tag, a difficulty) and the share of scenarios it should reach.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShareTarget {
    pub name: String,
    pub share: f64,
}

/// What a required tool must reach among the accepted scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolMinimum {
    /// At least this share of them call it.
    Share(f64),
    /// At least this many of them call it.
    Count(u64),
}

/// A tool the accepted scenarios' gold actions must call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolTarget {
    pub name: String,
    pub minimum: ToolMinimum,
    /// The share of proposals whose brief asks for it: the share, or the
    /// count over the run's target (at most 1).
    pub planned_share: f64,
    /// Where it is written (`line 12, column 1`), for problems found once
    /// the environment is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// `[diversity]`, checked: shares in range, the difficulty mix summing to 1,
/// lists sorted by name. The default asks for nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiversityConfig {
    /// Where each key is written (`transfer` → `line 3, column 1`), for
    /// problems found once the environment is open.
    #[serde(skip)]
    pub locations: BTreeMap<String, String>,
    /// Tags and the least share of scenarios that should carry each.
    pub tags: Vec<ShareTarget>,
    /// The difficulty mix (summing to 1); empty: the generator's choice.
    pub difficulty: Vec<ShareTarget>,
    pub tools: Vec<ToolTarget>,
    pub multi_intent: f64,
    pub refusal: f64,
    pub transfer: f64,
}

impl DiversityConfig {
    /// Whether the table asks for nothing (every brief stays empty).
    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
            && self.difficulty.is_empty()
            && self.tools.is_empty()
            && self.multi_intent == 0.0
            && !self.plans_outcomes()
    }

    /// Whether every brief names its outcome (resolve, refusal or transfer):
    /// when a refusal or transfer share is set. Otherwise the generator
    /// chooses, as without the table.
    pub fn plans_outcomes(&self) -> bool {
        self.refusal > 0.0 || self.transfer > 0.0
    }

    /// The share of scenarios the agent resolves itself.
    pub fn resolve_share(&self) -> f64 {
        (1.0 - self.refusal - self.transfer).max(0.0)
    }

    /// Problems with the tools this table names, against the tools of the
    /// open environment (`tools`, the policy's and the user's): an unknown
    /// name (listing the known ones), a transfer tool required as a tool
    /// (`transfer` is its knob), or a transfer share with no transfer tool.
    pub fn tool_problems(&self, file: &Path, tools: &[&str]) -> Vec<Problem> {
        let mut problems = Vec::new();
        let known = || {
            let mut names = tools.to_vec();
            names.sort_unstable();
            names.dedup();
            names.join(", ")
        };
        for target in &self.tools {
            let at = |message: String| {
                Problem::new(
                    file,
                    Some(
                        target
                            .location
                            .clone()
                            .unwrap_or_else(|| format!("diversity.tools.{}", target.name)),
                    ),
                    message,
                )
            };
            if !tools.contains(&target.name.as_str()) {
                problems.push(at(format!(
                    "diversity.tools: the environment has no tool '{}'; its tools are: {}",
                    target.name,
                    known()
                )));
            } else if is_transfer_tool(&target.name) {
                problems.push(at(format!(
                    "diversity.tools: '{}' hands the user to a human; ask for transfers with \
                     transfer = SHARE in [diversity] instead",
                    target.name
                )));
            }
        }
        if self.transfer > 0.0 && !tools.iter().any(|t| is_transfer_tool(t)) {
            problems.push(Problem::new(
                file,
                Some(
                    self.locations
                        .get("transfer")
                        .cloned()
                        .unwrap_or_else(|| "diversity.transfer".to_string()),
                ),
                format!(
                    "diversity.transfer: is {}, but the environment has no tool that transfers to a human \
                     (a name starting with transfer_to_human); its tools are: {}; set \
                     transfer = 0",
                    self.transfer,
                    known()
                ),
            ));
        }
        problems
    }
}

/// Read `[diversity]` (`node`); `target` (the run's target, when it was
/// read) turns tool counts into planned shares. Problems go to `problems`,
/// each at its line; the table read so far is returned either way.
pub fn read_diversity<'t>(
    source: &Source<'t>,
    mut node: Node<'t>,
    target: Option<u64>,
    problems: &mut Vec<Problem>,
) -> DiversityConfig {
    let field = "diversity";
    let mut config = DiversityConfig::default();
    if !node.get_ref().is_table() {
        problems.push(source.at(
            node.span(),
            field,
            "is not a table; write [diversity] with e.g. refusal = 0.1 and \
             difficulty = { easy = 0.5, medium = 0.3, hard = 0.2 }",
        ));
        return config;
    }
    source.drop_unknown_keys(field, &mut node, KEYS, &|_| None, problems);
    let DeValue::Table(mut table) = node.into_inner() else {
        return config;
    };
    let mut spans: BTreeMap<&str, Range<usize>> = BTreeMap::new();
    for key in KEYS {
        if let Some(span) = table.get_key_value(*key).map(|(k, _)| k.span()) {
            if let Some(location) = source.at(span.clone(), "", String::new()).location {
                config.locations.insert(key.to_string(), location);
            }
            spans.insert(key, span);
        }
    }
    for (key, slot) in [
        ("refusal", &mut config.refusal),
        ("transfer", &mut config.transfer),
        ("multi_intent", &mut config.multi_intent),
    ] {
        if let Some((_, value)) = Source::take(&mut table, key) {
            if let Some(x) = number(source, &child(field, key), &value, SYNTH_SHARE, problems) {
                *slot = x;
            }
        }
    }
    let at_key = |key: &str, message: String| match spans.get(key) {
        Some(span) => source.at(span.clone(), &child(field, key), message),
        None => Problem::at_field(&source.file, &child(field, key), message),
    };
    if let Some((_, value)) = Source::take(&mut table, "difficulty") {
        let f = child(field, "difficulty");
        config.difficulty = shares(source, &f, value, SYNTH_SHARE, &[], problems);
        let sum: f64 = config.difficulty.iter().map(|t| t.share).sum();
        if !config.difficulty.is_empty() && (sum - 1.0).abs() > MIX_SUM_TOLERANCE {
            problems.push(at_key(
                "difficulty",
                format!(
                    "the shares sum to {}; a difficulty mix must sum to 1, e.g. \
                     {{ easy = 0.5, medium = 0.3, hard = 0.2 }}",
                    round(sum)
                ),
            ));
        }
    }
    if let Some((_, value)) = Source::take(&mut table, "tags") {
        let f = child(field, "tags");
        config.tags = shares(source, &f, value, SYNTH_MIN_SHARE, RESERVED_TAGS, problems);
    }
    if let Some((_, value)) = Source::take(&mut table, "tools") {
        config.tools = tools(source, &child(field, "tools"), value, target, problems);
    }
    let outcomes = config.refusal + config.transfer;
    if outcomes > 1.0 + MIX_SUM_TOLERANCE {
        problems.push(at_key(
            "refusal",
            format!(
                "refusal + transfer = {}: together they are a share of the scenarios, at \
                 most 1",
                round(outcomes)
            ),
        ));
    }
    let resolve = config.resolve_share();
    if config.multi_intent > resolve + MIX_SUM_TOLERANCE {
        problems.push(at_key(
            "multi_intent",
            format!(
                "is {}, more than the share left for requests the agent resolves \
                 (1 - refusal - transfer = {}); multi-intent scenarios are among those",
                config.multi_intent,
                round(resolve)
            ),
        ));
    }
    let tools_sum: f64 = config.tools.iter().map(|t| t.planned_share).sum();
    if tools_sum > resolve + MIX_SUM_TOLERANCE {
        problems.push(at_key(
            "tools",
            format!(
                "the required tools' shares (a count as count / target) sum to {}, more than \
                 the share left for requests the agent resolves (1 - refusal - transfer = {}); \
                 each of those proposals is asked for one tool, so lower the shares",
                round(tools_sum),
                round(resolve)
            ),
        ));
    }
    config
}

fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// A number at `field`, in `range`; the problem at its line otherwise.
fn number<'t>(
    source: &Source<'t>,
    field: &str,
    node: &Node<'t>,
    range: Real,
    problems: &mut Vec<Problem>,
) -> Option<f64> {
    let x: f64 = source.deserialize(field, node, problems)?;
    match range.check(x) {
        None => Some(x),
        Some(message) => {
            problems.push(source.at(node.span(), field, message));
            None
        }
    }
}

/// One `NAME = VALUE` of a table, with where its name is written.
struct Entry<'t> {
    name: String,
    span: Range<usize>,
    value: Node<'t>,
}

/// The entries of the table `node`, sorted by name; a problem when it is
/// not a table, has too many names or an empty one.
fn entries<'t>(
    source: &Source<'t>,
    field: &str,
    node: Node<'t>,
    example: &str,
    problems: &mut Vec<Problem>,
) -> Vec<Entry<'t>> {
    let span = node.span();
    let DeValue::Table(table) = node.into_inner() else {
        problems.push(source.at(
            span,
            field,
            format!("is not a table; write {field} = {example}"),
        ));
        return Vec::new();
    };
    let n = table.len();
    if !SYNTH_DIVERSITY_NAMES.contains(n as u64) {
        problems.push(source.at(
            span,
            field,
            format!("names {n} entries; use {SYNTH_DIVERSITY_NAMES}"),
        ));
        return Vec::new();
    }
    let mut out = Vec::new();
    for (key, value) in table {
        let name = key.get_ref().trim().to_string();
        if name.is_empty() {
            problems.push(source.at(key.span(), field, "has an empty name; name it"));
            continue;
        }
        out.push(Entry {
            name,
            span: key.span(),
            value,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// `NAME = SHARE` entries, each share in `range`; a `reserved` name is a
/// problem saying what to write instead.
fn shares<'t>(
    source: &Source<'t>,
    field: &str,
    node: Node<'t>,
    range: Real,
    reserved: &[(&str, &str)],
    problems: &mut Vec<Problem>,
) -> Vec<ShareTarget> {
    let mut out = Vec::new();
    for entry in entries(source, field, node, "{ NAME = SHARE, ... }", problems) {
        let f = child(field, &entry.name);
        if let Some((name, instead)) = reserved.iter().find(|(r, _)| *r == entry.name) {
            problems.push(source.at(
                entry.span,
                &f,
                format!("'{name}' is not a target here: {instead}"),
            ));
            continue;
        }
        if let Some(share) = number(source, &f, &entry.value, range, problems) {
            out.push(ShareTarget {
                name: entry.name,
                share,
            });
        }
    }
    out
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CountKeys {
    count: u64,
}

/// `[diversity.tools]`: `NAME = SHARE` or `NAME = { count = N }`.
fn tools<'t>(
    source: &Source<'t>,
    field: &str,
    node: Node<'t>,
    target: Option<u64>,
    problems: &mut Vec<Problem>,
) -> Vec<ToolTarget> {
    let example = "{ NAME = SHARE } or { NAME = { count = N } }";
    let mut out = Vec::new();
    for Entry { name, span, value } in entries(source, field, node, example, problems) {
        let f = child(field, &name);
        let location = source.at(span.clone(), "", String::new()).location;
        let minimum = if value.get_ref().is_table() {
            let value_span = value.span();
            let Some(keys) = source.typed::<CountKeys>(&f, value, problems) else {
                continue;
            };
            let count_field = child(&f, "count");
            if let Some(message) = SYNTH_TOOL_COUNT.check(keys.count) {
                problems.push(source.at(value_span, &count_field, message));
                continue;
            }
            if let Some(t) = target.filter(|t| keys.count > *t) {
                problems.push(source.at(
                    value_span,
                    &count_field,
                    format!(
                        "asks for {} scenarios calling it, more than target = {t}; lower it",
                        keys.count
                    ),
                ));
                continue;
            }
            ToolMinimum::Count(keys.count)
        } else {
            match number(source, &f, &value, SYNTH_MIN_SHARE, problems) {
                Some(share) => ToolMinimum::Share(share),
                None => continue,
            }
        };
        let planned_share = match minimum {
            ToolMinimum::Share(share) => share,
            ToolMinimum::Count(n) => (n as f64 / target.unwrap_or(n).max(1) as f64).min(1.0),
        };
        out.push(ToolTarget {
            name,
            minimum,
            planned_share,
            location,
        });
    }
    out
}

#[cfg(test)]
#[path = "diversity_tests.rs"]
mod tests;
