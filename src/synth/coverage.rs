//! Coverage of a set of accepted scenarios against `[diversity]`: per
//! outcome, multi-intent, difficulty, tag and tool, the target, what was
//! reached (count and share) and whether the target was missed. Read from
//! the scenarios alone (their tags, difficulty and gold actions' tool names),
//! which the brief check has held to their briefs.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::synth::diversity::{
    is_transfer_tool, DiversityConfig, ToolMinimum, MULTI_INTENT_TAG, REFUSAL_TAG, TRANSFER_TAG,
};
use crate::persona::scenario::Scenario;

use super::brief::Outcome;
use super::brief_check::has_tag;

/// How far below a share target the reached share may fall before the
/// target counts as missed: two percentage points, a few scenarios of a few
/// hundred (the planner itself is within 4 proposals of every share).
pub const SHARE_TOLERANCE: f64 = 0.02;

/// What one value should reach.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// A part of a mix (difficulty, outcome): about this share.
    Share(f64),
    /// At least this share (a tag, a tool, multi-intent).
    AtLeastShare(f64),
    /// At least this many scenarios (a tool).
    AtLeastCount(u64),
}

/// One value (a tag, a tool, a difficulty, an outcome) and how far it got.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reach {
    pub name: String,
    /// `None`: no target; listed for what the scenarios have anyway.
    pub target: Option<Target>,
    pub count: u64,
    /// `count` over all scenarios (0 when there are none).
    pub share: f64,
    pub missed: bool,
}

/// Coverage of accepted scenarios against the diversity targets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coverage {
    pub scenarios: u64,
    pub outcome: Vec<Reach>,
    pub multi_intent: Reach,
    pub difficulty: Vec<Reach>,
    pub tags: Vec<Reach>,
    pub tools: Vec<Reach>,
}

/// How a scenario ends: transfer when a gold action transfers to a human
/// (or it is tagged so), refusal when tagged so, else resolve.
pub fn outcome_of(s: &Scenario) -> Outcome {
    if has_tag(s, TRANSFER_TAG)
        || s.evaluation
            .actions
            .iter()
            .any(|a| is_transfer_tool(&a.name))
    {
        Outcome::Transfer
    } else if has_tag(s, REFUSAL_TAG) {
        Outcome::Refusal
    } else {
        Outcome::Resolve
    }
}

impl Coverage {
    pub fn of(diversity: &DiversityConfig, scenarios: &[Scenario]) -> Coverage {
        let n = scenarios.len() as u64;
        let reach = |name: &str, target: Option<Target>, count: u64| {
            let share = if n == 0 { 0.0 } else { count as f64 / n as f64 };
            let missed = match target {
                None => false,
                Some(Target::Share(t) | Target::AtLeastShare(t)) => share + SHARE_TOLERANCE < t,
                Some(Target::AtLeastCount(t)) => count < t,
            };
            Reach {
                name: name.to_string(),
                target,
                count,
                share,
                missed,
            }
        };
        let count =
            |f: &dyn Fn(&Scenario) -> bool| scenarios.iter().filter(|s| f(s)).count() as u64;

        let outcome = Outcome::ALL
            .iter()
            .map(|&o| {
                let target = diversity.plans_outcomes().then(|| {
                    Target::Share(match o {
                        Outcome::Resolve => diversity.resolve_share(),
                        Outcome::Refusal => diversity.refusal,
                        Outcome::Transfer => diversity.transfer,
                    })
                });
                reach(o.as_str(), target, count(&|s| outcome_of(s) == o))
            })
            .collect();
        let multi_intent = reach(
            MULTI_INTENT_TAG,
            (diversity.multi_intent > 0.0).then_some(Target::AtLeastShare(diversity.multi_intent)),
            count(&|s| has_tag(s, MULTI_INTENT_TAG)),
        );

        let mut difficulties: BTreeMap<String, u64> = BTreeMap::new();
        let mut tags: BTreeMap<String, u64> = BTreeMap::new();
        let mut tools: BTreeMap<String, u64> = BTreeMap::new();
        for s in scenarios {
            let d = s.difficulty.as_deref().map_or("(none)", str::trim);
            *difficulties.entry(d.to_lowercase()).or_default() += 1;
            let mut seen: Vec<String> = s.tags.iter().map(|t| t.trim().to_lowercase()).collect();
            seen.sort_unstable();
            seen.dedup();
            for t in seen {
                *tags.entry(t).or_default() += 1;
            }
            let mut called: Vec<&str> = s
                .evaluation
                .actions
                .iter()
                .map(|a| a.name.as_str())
                .collect();
            called.sort_unstable();
            called.dedup();
            for t in called {
                *tools.entry(t.to_string()).or_default() += 1;
            }
        }
        let targeted_then_seen = |targets: Vec<(String, Target)>, seen: BTreeMap<String, u64>| {
            let mut out: Vec<Reach> = targets
                .iter()
                .map(|(name, t)| {
                    let c = seen.get(&name.to_lowercase()).copied().unwrap_or(0);
                    reach(name, Some(*t), c)
                })
                .collect();
            for (name, c) in seen {
                if !targets.iter().any(|(t, _)| t.to_lowercase() == name) {
                    out.push(reach(&name, None, c));
                }
            }
            out
        };
        let difficulty = targeted_then_seen(
            diversity
                .difficulty
                .iter()
                .map(|d| (d.name.clone(), Target::Share(d.share)))
                .collect(),
            difficulties,
        );
        let tags = targeted_then_seen(
            diversity
                .tags
                .iter()
                .map(|t| (t.name.clone(), Target::AtLeastShare(t.share)))
                .collect(),
            tags,
        );
        let tools = targeted_then_seen(
            diversity
                .tools
                .iter()
                .map(|t| {
                    let target = match t.minimum {
                        ToolMinimum::Share(s) => Target::AtLeastShare(s),
                        ToolMinimum::Count(c) => Target::AtLeastCount(c),
                    };
                    (t.name.clone(), target)
                })
                .collect(),
            tools,
        );
        Coverage {
            scenarios: n,
            outcome,
            multi_intent,
            difficulty,
            tags,
            tools,
        }
    }

    /// Every reach with a target.
    fn targeted(&self) -> impl Iterator<Item = &Reach> {
        self.outcome
            .iter()
            .chain(std::iter::once(&self.multi_intent))
            .chain(&self.difficulty)
            .chain(&self.tags)
            .chain(&self.tools)
            .filter(|r| r.target.is_some())
    }

    /// How many targets were missed.
    pub fn missed(&self) -> usize {
        self.targeted().filter(|r| r.missed).count()
    }

    /// The coverage as text lines for a terminal: each target with what was
    /// reached (`MISSED` when it was), then what has no target on one line
    /// per kind.
    pub fn lines(&self) -> Vec<String> {
        let targets = self.targeted().count();
        let mut lines = vec![if targets == 0 {
            format!(
                "coverage of {} accepted scenarios (no [diversity] targets):",
                self.scenarios
            )
        } else {
            format!(
                "coverage of {} accepted scenarios: {} of {} targets missed (short by more than \
                 {} points, or of a count)",
                self.scenarios,
                self.missed(),
                targets,
                SHARE_TOLERANCE * 100.0
            )
        }];
        let width = self
            .targeted()
            .map(|r| r.name.chars().count())
            .chain([8])
            .max()
            .unwrap_or(8);
        let sections: [(&str, Vec<&Reach>); 5] = [
            ("outcome", self.outcome.iter().collect()),
            ("multi-intent", vec![&self.multi_intent]),
            ("difficulty", self.difficulty.iter().collect()),
            ("tag", self.tags.iter().collect()),
            ("tool", self.tools.iter().collect()),
        ];
        for (kind, reaches) in sections {
            let mut first = true;
            for r in reaches.iter().filter(|r| r.target.is_some()) {
                let head = if first { kind } else { "" };
                first = false;
                let target = match r.target {
                    Some(Target::Share(t)) => format!("target {:>5.1}%", t * 100.0),
                    Some(Target::AtLeastShare(t)) => format!("target ≥ {:.1}%", t * 100.0),
                    Some(Target::AtLeastCount(t)) => format!("target ≥ {t} scenarios"),
                    None => String::new(),
                };
                // The one multi-intent row needs no name beside its head.
                let name = if kind == "multi-intent" { "" } else { &r.name };
                lines.push(format!(
                    "  {head:<12} {name:<width$} {:>6} {:>6.1}%  {target}{}",
                    r.count,
                    r.share * 100.0,
                    if r.missed { "  MISSED" } else { "" }
                ));
            }
            let others: Vec<String> = reaches
                .iter()
                .filter(|r| r.target.is_none() && r.count > 0)
                .map(|r| format!("{} {}", r.name, r.count))
                .collect();
            if !others.is_empty() {
                let label = if first {
                    kind.to_string()
                } else {
                    String::new()
                };
                lines.push(format!(
                    "  {label:<12} {}{}",
                    if first { "" } else { "also: " },
                    others.join(", ")
                ));
            }
        }
        lines
    }
}

#[cfg(test)]
#[path = "coverage_tests.rs"]
mod tests;
