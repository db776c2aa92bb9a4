//! The realism comparison of two jobs' user sides: every measure with both
//! values, the difference (simulated − real) and its bootstrap interval,
//! over all conversations as distributions and, when both jobs share at
//! least [`MIN_MATCHED_SCENARIOS`] scenario ids, over those scenarios
//! matched; and the summary naming the three largest gaps.

use std::collections::BTreeMap;

use serde::Serialize;

use super::bootstrap::{independent, paired, percentile_interval, Draw};
use super::conversation::Counted;
use super::gaps::{largest, normalised};
use super::measures::{Measure, Statistic, Unit, MEASURES};

/// Fewer shared scenarios than this leave nothing to resample: no matched section.
pub const MIN_MATCHED_SCENARIOS: usize = 2;
/// How many gaps the summary names.
pub const NAMED_GAPS: usize = 3;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasureGap {
    pub measure: &'static str,
    pub unit: Unit,
    /// The simulated job's value (`None` for a divergence, which is between them).
    pub sim: Option<f64>,
    pub real: Option<f64>,
    /// Simulated − real; for a divergence, the divergence.
    pub difference: Option<f64>,
    /// The 95% bootstrap interval of the difference.
    pub ci95: Option<(f64, f64)>,
    /// The gap in [0, 1], comparable across measures (docs/realism.md).
    pub normalised_gap: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    pub sim_conversations: u64,
    pub real_conversations: u64,
    pub measures: Vec<MeasureGap>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// `matched` when the matched section exists, else `distributions`.
    pub basis: &'static str,
    /// The mean normalised gap over the measures that have one (0 = as real).
    pub mean_gap: Option<f64>,
    /// The largest normalised gaps, largest first.
    pub largest_gaps: Vec<NamedGap>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamedGap {
    pub measure: &'static str,
    pub normalised_gap: f64,
    pub difference: f64,
}

/// The comparison without the jobs' names (pure).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    /// Scenario ids both jobs have conversations of.
    pub scenarios_in_both: u64,
    pub distributions: Section,
    pub matched: Option<Section>,
    pub summary: Summary,
    pub resamples: usize,
    pub seed: u64,
}

fn value(m: &Measure, side: &[&Counted]) -> Option<f64> {
    match m.statistic {
        Statistic::Each(f) => f(side),
        Statistic::Between(_) => None,
    }
}

fn difference(m: &Measure, sim: &[&Counted], real: &[&Counted]) -> Option<f64> {
    match m.statistic {
        Statistic::Each(f) => Some(f(sim)? - f(real)?),
        Statistic::Between(f) => f(sim, real),
    }
}

fn pick<'a>(all: &[&'a Counted], idx: &[usize]) -> Vec<&'a Counted> {
    idx.iter().map(|i| all[*i]).collect()
}

fn section(sim: &[&Counted], real: &[&Counted], draws: &[Draw]) -> Section {
    let drawn: Vec<(Vec<&Counted>, Vec<&Counted>)> = draws
        .iter()
        .map(|d| (pick(sim, &d.sim), pick(real, &d.real)))
        .collect();
    let measures = MEASURES
        .iter()
        .map(|m| {
            let (s, r) = (value(m, sim), value(m, real));
            let diff = difference(m, sim, real);
            let resampled: Vec<f64> = drawn
                .iter()
                .filter_map(|(s, r)| difference(m, s, r))
                .collect();
            MeasureGap {
                measure: m.name,
                unit: m.unit,
                sim: s,
                real: r,
                difference: diff,
                ci95: diff.and_then(|_| percentile_interval(resampled)),
                normalised_gap: diff.map(|d| normalised(m.unit, s, r, d)),
            }
        })
        .collect();
    Section {
        sim_conversations: sim.len() as u64,
        real_conversations: real.len() as u64,
        measures,
    }
}

fn summary(basis: &'static str, section: &Section) -> Summary {
    let gaps: Vec<Option<f64>> = section.measures.iter().map(|m| m.normalised_gap).collect();
    let known: Vec<f64> = gaps.iter().flatten().copied().collect();
    Summary {
        basis,
        mean_gap: (!known.is_empty()).then(|| known.iter().sum::<f64>() / known.len() as f64),
        largest_gaps: largest(&gaps, NAMED_GAPS)
            .into_iter()
            .map(|i| {
                let m = &section.measures[i];
                NamedGap {
                    measure: m.measure,
                    normalised_gap: m.normalised_gap.unwrap_or(0.0),
                    difference: m.difference.unwrap_or(0.0),
                }
            })
            .collect(),
    }
}

/// Compare the simulated job's conversations with the real job's.
pub fn measure(sim: &[Counted], real: &[Counted], resamples: usize, seed: u64) -> Measured {
    let all_sim: Vec<&Counted> = sim.iter().collect();
    let all_real: Vec<&Counted> = real.iter().collect();
    let distributions = section(
        &all_sim,
        &all_real,
        &independent(sim.len(), real.len(), resamples, seed),
    );

    let mut by_scenario: BTreeMap<&str, (Vec<&Counted>, Vec<&Counted>)> = BTreeMap::new();
    for c in sim {
        by_scenario.entry(&c.scenario_id).or_default().0.push(c);
    }
    for c in real {
        by_scenario.entry(&c.scenario_id).or_default().1.push(c);
    }
    by_scenario.retain(|_, (s, r)| !s.is_empty() && !r.is_empty());
    let scenarios_in_both = by_scenario.len();
    let matched = (scenarios_in_both >= MIN_MATCHED_SCENARIOS).then(|| {
        let (mut m_sim, mut m_real, mut groups) = (Vec::new(), Vec::new(), Vec::new());
        for (s, r) in by_scenario.values() {
            let sim_idx = (m_sim.len()..m_sim.len() + s.len()).collect();
            let real_idx = (m_real.len()..m_real.len() + r.len()).collect();
            m_sim.extend(s);
            m_real.extend(r);
            groups.push((sim_idx, real_idx));
        }
        section(&m_sim, &m_real, &paired(&groups, resamples, seed))
    });
    let summary = match &matched {
        Some(m) => summary("matched", m),
        None => summary("distributions", &distributions),
    };
    Measured {
        scenarios_in_both: scenarios_in_both as u64,
        distributions,
        matched,
        summary,
        resamples,
        seed,
    }
}

#[cfg(test)]
mod tests {
    use super::super::conversation::{UserSide, Vocabulary};
    use super::*;

    fn side(v: &mut Vocabulary, scenario: &str, turns: &[&str], termination: &str) -> Counted {
        Counted::of(
            &UserSide {
                scenario_id: scenario.into(),
                user_turns: turns.iter().map(|t| t.to_string()).collect(),
                after_agent: (0..turns.len()).map(|i| i > 0).collect(),
                termination: termination.into(),
                user_spoke_last: true,
                known_info: Some("Your name is Mia Li. Your order is W123.".into()),
            },
            v,
        )
    }

    fn job(v: &mut Vocabulary) -> Vec<Counted> {
        vec![
            side(
                v,
                "a",
                &["Hi I'm Mia Li", "order W123?", "thanks"],
                "user_stop",
            ),
            side(
                v,
                "b",
                &["where is my order", "No, I said W123!!"],
                "max_turns",
            ),
            side(
                v,
                "c",
                &["hello", "the lamp broke", "pls refund", "ok bye"],
                "user_stop",
            ),
        ]
    }

    #[test]
    fn a_job_against_itself_has_no_gap_and_intervals_hold_zero() {
        let v = &mut Vocabulary::default();
        let m = measure(&job(v), &job(v), 200, 7);
        assert_eq!(m.scenarios_in_both, 3);
        assert_eq!(m.summary.basis, "matched");
        let matched = m.matched.as_ref().unwrap();
        for g in &matched.measures {
            if let Some(d) = g.difference {
                assert_eq!(d, 0.0, "{g:?}");
                let (lo, hi) = g.ci95.unwrap();
                assert!(lo <= 0.0 && 0.0 <= hi, "{g:?}");
                assert_eq!(g.normalised_gap, Some(0.0));
            }
        }
        assert_eq!(m.summary.mean_gap, Some(0.0));
        assert_eq!(m.summary.largest_gaps.len(), 3);
    }

    #[test]
    fn different_users_show_gaps_named_largest_first() {
        let v = &mut Vocabulary::default();
        let terse = vec![
            side(v, "x", &["refund"], "user_stop"),
            side(v, "y", &["refund now"], "user_stop"),
        ];
        let m = measure(&terse, &job(v), 200, 7);
        assert!(m.matched.is_none());
        assert_eq!(m.summary.basis, "distributions");
        let named = &m.summary.largest_gaps;
        assert_eq!(named.len(), 3);
        assert!(named[0].normalised_gap >= named[1].normalised_gap);
        assert!(named[1].normalised_gap >= named[2].normalised_gap);
        let turns = &m.distributions.measures[0];
        assert_eq!(turns.measure, "turns_per_conversation");
        assert_eq!((turns.sim, turns.real), (Some(1.0), Some(3.0)));
        assert_eq!(turns.difference, Some(-2.0));
        let (lo, hi) = turns.ci95.unwrap();
        assert!(lo <= -2.0 + 1.0 && hi < 0.0, "{lo} {hi}");
    }

    #[test]
    fn the_same_seed_gives_the_same_intervals() {
        let v = &mut Vocabulary::default();
        let terse = vec![side(v, "x", &["refund"], "user_stop")];
        let real = job(v);
        assert_eq!(
            measure(&terse, &real, 100, 1),
            measure(&terse, &real, 100, 1)
        );
    }
}
