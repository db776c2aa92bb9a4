//! The funnel a curated export writes to `manifest.json`: for each gate in
//! order, how many conversations entered and left it, in all and per
//! stratum, and for each dropped conversation the gate and the reason.
//! Every conversation of the job enters the first gate; what leaves a gate
//! enters the next; `holdout` drops nothing and counts where the kept
//! conversations went.

use std::collections::BTreeMap;

use serde::Serialize;

use super::gates::{Gate, Stop};

/// Entered and left, at one gate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Passed {
    pub entered: u64,
    pub left: u64,
}

impl Passed {
    pub fn dropped(&self) -> u64 {
        self.entered - self.left
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GateCounts {
    pub gate: &'static str,
    pub entered: u64,
    pub left: u64,
    pub dropped: u64,
    pub strata: BTreeMap<String, Passed>,
}

/// A conversation a gate dropped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dropped {
    pub conversation: i64,
    pub scenario: String,
    pub persona: String,
    pub stratum: String,
    pub gate: &'static str,
    pub reason: String,
}

/// The counts so far.
#[derive(Debug, Clone, Default)]
pub struct Funnel {
    passed: [BTreeMap<String, Passed>; Gate::ALL.len()],
    dropped: Vec<Dropped>,
}

/// Who a conversation is, for the funnel.
pub struct Entry<'a> {
    pub conversation: i64,
    pub scenario: &'a str,
    pub persona: &'a str,
    pub stratum: &'a str,
}

impl Funnel {
    /// A conversation that went through every gate before `stop`'s and
    /// stopped there; with `None`, through every gate but `holdout`, whose
    /// count [`Funnel::held`] makes.
    pub fn record(&mut self, entry: &Entry<'_>, stopped: Option<Stop>) {
        let last = stopped.as_ref().map_or(Gate::StratumCap, |s| s.gate);
        for gate in &Gate::ALL[..=last.index()] {
            let counts = self.passed[gate.index()]
                .entry(entry.stratum.to_string())
                .or_default();
            counts.entered += 1;
            if stopped.as_ref().is_none_or(|s| s.gate != *gate) {
                counts.left += 1;
            }
        }
        if let Some(stop) = stopped {
            self.dropped.push(Dropped {
                conversation: entry.conversation,
                scenario: entry.scenario.to_string(),
                persona: entry.persona.to_string(),
                stratum: entry.stratum.to_string(),
                gate: stop.gate.name(),
                reason: stop.reason,
            });
        }
    }

    /// A kept conversation through `holdout` (which keeps it, on one side).
    pub fn held(&mut self, stratum: &str) {
        let counts = self.passed[Gate::Holdout.index()]
            .entry(stratum.to_string())
            .or_default();
        counts.entered += 1;
        counts.left += 1;
    }

    /// Each gate's counts, in order.
    pub fn gates(&self) -> Vec<GateCounts> {
        Gate::ALL
            .iter()
            .map(|gate| {
                let strata = self.passed[gate.index()].clone();
                let entered = strata.values().map(|p| p.entered).sum();
                let left = strata.values().map(|p| p.left).sum();
                GateCounts {
                    gate: gate.name(),
                    entered,
                    left,
                    dropped: entered - left,
                    strata,
                }
            })
            .collect()
    }

    pub fn dropped(&self) -> &[Dropped] {
        &self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: i64, stratum: &str) -> Entry<'_> {
        Entry {
            conversation: id,
            scenario: "s",
            persona: "p",
            stratum,
        }
    }

    #[test]
    fn what_leaves_a_gate_enters_the_next_in_all_and_per_stratum() {
        let mut f = Funnel::default();
        f.record(&entry(1, "a"), None);
        f.held("a");
        f.record(
            &entry(2, "a"),
            Some(Stop {
                gate: Gate::Reward,
                reason: "low".into(),
            }),
        );
        f.record(
            &entry(3, "b"),
            Some(Stop {
                gate: Gate::NearDuplicates,
                reason: "repeat".into(),
            }),
        );
        let gates = f.gates();
        assert_eq!(gates[0].entered, 3);
        for pair in gates.windows(2) {
            assert_eq!(
                pair[0].left, pair[1].entered,
                "{} → {}",
                pair[0].gate, pair[1].gate
            );
            for (stratum, p) in &pair[1].strata {
                assert_eq!(pair[0].strata[stratum].left, p.entered);
            }
        }
        assert_eq!(gates[Gate::Reward.index()].dropped, 1);
        assert_eq!(gates[Gate::NearDuplicates.index()].strata["b"].dropped(), 1);
        assert_eq!(gates.last().unwrap().left, 1);
        let dropped: Vec<(i64, &str)> = f
            .dropped()
            .iter()
            .map(|d| (d.conversation, d.gate))
            .collect();
        assert_eq!(dropped, [(2, "reward"), (3, "near_duplicates")]);
    }
}
