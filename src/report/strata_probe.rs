//! What the strata say of probes (`sparring stats --by probe.family`): per
//! cell, how many probe conversations held the line, the hold rate with its
//! Wilson interval, pass^k of holding, when the line broke (`turn_of_flip`)
//! and the blast radius. Read from each conversation's `metadata.probe`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use crate::verify::probe_spec::{ProbeOutcome, OUTCOME_KEY};

use super::gather::pass_hat_k_report;
use super::interval::Mean;
use super::render::{interval, opt_rate, rate, table};
use super::stats::{PassHatKValue, ScenarioTrials};

/// The probe fields a stratum may be read from, written `probe.NAME`.
pub const FIELDS: [&str; 3] = ["family", "strategy", "scored_by"];

/// A conversation's probe outcome; `None` when it is no probe. A stored
/// outcome that does not read is an error the caller reports.
pub fn outcome_of(metadata: &Value) -> Result<Option<ProbeOutcome>, serde_json::Error> {
    metadata
        .get(OUTCOME_KEY)
        .map(|v| serde_json::from_value(v.clone()))
        .transpose()
}

/// The value of `probe.FIELD` of an outcome.
pub fn field(outcome: &ProbeOutcome, name: &str) -> Option<String> {
    let value = serde_json::to_value(outcome).ok()?;
    value.get(name)?.as_str().map(str::to_string)
}

/// Probe conversations of a cell, counted as they are added.
#[derive(Debug, Default)]
pub struct ProbeTally {
    probes: u64,
    held: u64,
    decided: u64,
    turn_of_flip: BTreeMap<u32, u64>,
    breached: u64,
    writes: u64,
    /// scenario → (decided trials, held)
    scenarios: BTreeMap<String, (u64, u64)>,
}

impl ProbeTally {
    pub fn add(&mut self, scenario: &str, outcome: &ProbeOutcome) {
        self.probes += 1;
        let Some(held) = outcome.held else {
            return;
        };
        self.decided += 1;
        self.held += u64::from(held);
        let trials = self.scenarios.entry(scenario.to_string()).or_default();
        trials.0 += 1;
        trials.1 += u64::from(held);
        if let Some(turn) = outcome.turn_of_flip.filter(|_| !held) {
            *self.turn_of_flip.entry(turn).or_default() += 1;
        }
        if let Some(radius) = outcome.blast_radius.as_ref().filter(|r| r.count > 0) {
            self.breached += 1;
            self.writes += u64::from(radius.count);
        }
    }

    pub fn cell(&self, ks: &[u64]) -> Option<CellProbe> {
        (self.probes > 0).then(|| CellProbe {
            probes: self.probes,
            decided: self.decided,
            held: self.held,
            hold_rate: Mean::of_share(self.held, self.decided),
            pass_hat_k: pass_hat_k_report(
                self.scenarios
                    .iter()
                    .map(|(scenario, &(n, successes))| ScenarioTrials {
                        scenario: scenario.clone(),
                        n,
                        successes,
                    })
                    .collect(),
                ks,
            )
            .values,
            turn_of_flip: self.turn_of_flip.clone(),
            blast_radius: BlastRadiusSummary {
                conversations: self.breached,
                writes: self.writes,
            },
        })
    }
}

/// A cell's probes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellProbe {
    /// Probe conversations in the cell.
    pub probes: u64,
    /// Those with an outcome (a judge-scored probe whose judge failed has none).
    pub decided: u64,
    pub held: u64,
    /// Held of decided, with its Wilson interval.
    pub hold_rate: Option<Mean>,
    /// pass^k of holding the line, over the cell's scenarios.
    pub pass_hat_k: Vec<PassHatKValue>,
    /// User turn after which the line broke → conversations.
    pub turn_of_flip: BTreeMap<u32, u64>,
    pub blast_radius: BlastRadiusSummary,
}

/// Writes outside the allowed set, over a cell's conversations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlastRadiusSummary {
    /// Conversations with at least one.
    pub conversations: u64,
    /// All of them.
    pub writes: u64,
}

/// The probe table of a strata report: one row per cell with probes.
pub fn render(out: &mut String, by: &str, cells: &[(&str, &CellProbe)]) {
    if cells.is_empty() {
        return;
    }
    let ks: Vec<usize> = (0..cells[0].1.pass_hat_k.len())
        .filter(|&i| cells.iter().any(|(_, c)| c.pass_hat_k[i].value.is_some()))
        .collect();
    out.push_str("\nProbes (held the line, of those decided)\n");
    let mut head = vec![
        by.to_string(),
        "probes".into(),
        "held".into(),
        "hold rate [95% CI]".into(),
    ];
    head.extend(
        ks.iter()
            .map(|&i| format!("held^{}", cells[0].1.pass_hat_k[i].k)),
    );
    head.push("turn of flip (turn×n)".into());
    head.push("blast radius (convs/writes)".into());
    let mut rows = vec![head];
    for (value, c) in cells {
        let mut row = vec![
            value.to_string(),
            c.probes.to_string(),
            format!("{}/{}", c.held, c.decided),
            c.hold_rate.as_ref().map_or_else(
                || "n/a".into(),
                |m| format!("{} {}", rate(m.mean), interval(m.ci95, 3)),
            ),
        ];
        row.extend(ks.iter().map(|&i| opt_rate(c.pass_hat_k[i].value)));
        let flips: Vec<String> = c
            .turn_of_flip
            .iter()
            .map(|(turn, n)| format!("{turn}×{n}"))
            .collect();
        row.push(if flips.is_empty() {
            "–".into()
        } else {
            flips.join(" ")
        });
        row.push(format!(
            "{}/{}",
            c.blast_radius.conversations, c.blast_radius.writes
        ));
        rows.push(row);
    }
    table(out, "  ", &rows);
    let _ = writeln!(
        out,
        "  held^k: the chance that k conversations of one scenario all hold the line"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::probe_spec::{BlastRadius, Family, ScoredBy};

    fn outcome(held: Option<bool>, turn: Option<u32>, writes: u32) -> ProbeOutcome {
        ProbeOutcome {
            family: Family::ScopeCreep,
            strategy: "sweeping".into(),
            scored_by: ScoredBy::State,
            held,
            turn_of_flip: turn,
            blast_radius: Some(BlastRadius {
                count: writes,
                kinds: Vec::new(),
            }),
            detail: String::new(),
        }
    }

    #[test]
    fn a_tally_counts_held_of_decided_flips_and_the_blast_radius() {
        let mut t = ProbeTally::default();
        t.add("a", &outcome(Some(true), None, 0));
        t.add("a", &outcome(Some(false), Some(3), 2));
        t.add("b", &outcome(Some(false), Some(3), 1));
        t.add("b", &outcome(None, None, 0));
        let c = t.cell(&[1, 2]).unwrap();
        assert_eq!((c.probes, c.decided, c.held), (4, 3, 1));
        assert!((c.hold_rate.unwrap().mean - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(c.turn_of_flip, BTreeMap::from([(3, 2)]));
        assert_eq!(
            c.blast_radius,
            BlastRadiusSummary {
                conversations: 2,
                writes: 3
            }
        );
        // held^1 = mean over scenarios of (held/n): a 1/2, b 0/1.
        assert_eq!(c.pass_hat_k[0].value, Some(0.25));
        let mut out = String::new();
        render(&mut out, "probe.family", &[("scope_creep", &c)]);
        assert!(
            out.contains("1/3") && out.contains("3×2") && out.contains("2/3"),
            "{out}"
        );
    }

    #[test]
    fn a_field_reads_from_the_outcome_and_metadata_without_a_probe_is_none() {
        let o = outcome(Some(true), None, 0);
        assert_eq!(field(&o, "family").as_deref(), Some("scope_creep"));
        assert_eq!(field(&o, "scored_by").as_deref(), Some("state"));
        assert!(outcome_of(&serde_json::json!({})).unwrap().is_none());
        assert!(outcome_of(&serde_json::json!({"probe": 3})).is_err());
    }
}
