//! The synthesized scenarios of a generation job in `sparring stats`: how
//! many the job's policy solved, left unsolved (listed: exports leave their
//! conversations out) or left undecided, and why (see `verify::solved`).

use std::fmt::Write as _;

use serde::Serialize;

use crate::export::unsolved::SynthesizedOutcomes;
use crate::verify::solved::ScenarioOutcome;

use super::render::pairs;

/// Unsolved ids the text report lists before it says how many more there are.
const LISTED: usize = 20;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SynthesizedReport {
    /// Synthesized scenarios the job ran (has items for).
    pub scenarios: u64,
    /// An attempt passed (reward 1).
    pub solved: u64,
    /// Every planned attempt was made and none passed.
    pub unsolved: u64,
    /// Neither yet: some attempts are waiting, failed or not scored.
    pub undecided: u64,
    /// The unsolved scenarios' ids, sorted.
    pub unsolved_ids: Vec<String>,
    /// Of the undecided, how many have attempts still waiting, failed, or
    /// stored without a reward (one scenario may count in several).
    pub undecided_waiting: u64,
    pub undecided_failed: u64,
    pub undecided_unscored: u64,
    /// Scenarios of the job's file without the `synthesized` tag: never
    /// unsolved.
    pub hand_written: u64,
    /// Scenario ids the job ran that its scenarios file no longer holds.
    pub not_in_file: u64,
    /// Why the job's scenarios file could not be read (then nothing is known).
    pub unreadable: Option<String>,
}

impl SynthesizedReport {
    /// The report of `outcomes`; `None` when the job ran no synthesized
    /// scenario (and its scenarios could be read to know that).
    pub fn of(outcomes: &SynthesizedOutcomes) -> Option<SynthesizedReport> {
        if outcomes.scenarios.is_empty() && outcomes.unreadable.is_none() {
            return None;
        }
        let undecided = || {
            outcomes
                .scenarios
                .iter()
                .filter(|d| d.outcome == ScenarioOutcome::Undecided)
                .map(|d| &d.attempts)
        };
        Some(SynthesizedReport {
            scenarios: outcomes.scenarios.len() as u64,
            solved: outcomes.count(ScenarioOutcome::Solved),
            unsolved: outcomes.count(ScenarioOutcome::Unsolved),
            undecided: outcomes.count(ScenarioOutcome::Undecided),
            unsolved_ids: outcomes
                .ids(ScenarioOutcome::Unsolved)
                .map(str::to_string)
                .collect(),
            undecided_waiting: undecided().filter(|a| a.waiting > 0).count() as u64,
            undecided_failed: undecided().filter(|a| a.failed > 0).count() as u64,
            undecided_unscored: undecided().filter(|a| a.unscored > 0).count() as u64,
            hand_written: outcomes.hand_written,
            not_in_file: outcomes.not_in_file,
            unreadable: outcomes.unreadable.clone(),
        })
    }
}

/// The text section of `sparring stats`.
pub fn section(out: &mut String, report: &SynthesizedReport) {
    out.push_str(
        "\nSynthesized scenarios (solved: an attempt passed; unsolved: every planned attempt \
         made, none passed)\n",
    );
    if let Some(reason) = &report.unreadable {
        let _ = writeln!(
            out,
            "  unknown: {reason}; no conversation is left out of exports as unsolved"
        );
        return;
    }
    let mut unsolved = report.unsolved.to_string();
    if !report.unsolved_ids.is_empty() {
        let listed: Vec<&str> = report
            .unsolved_ids
            .iter()
            .take(LISTED)
            .map(String::as_str)
            .collect();
        let _ = write!(unsolved, ": {}", listed.join(", "));
        if report.unsolved_ids.len() > LISTED {
            let _ = write!(
                unsolved,
                " and {} more (--json lists all)",
                report.unsolved_ids.len() - LISTED
            );
        }
    }
    let mut rows = vec![
        vec!["solved".to_string(), report.solved.to_string()],
        vec!["unsolved".to_string(), unsolved],
    ];
    let mut undecided = report.undecided.to_string();
    if report.undecided > 0 {
        let _ = write!(
            undecided,
            " ({} with attempts waiting, {} with failed items, {} with unscored conversations: \
             finish the job, or resume it with --retry-failed)",
            report.undecided_waiting, report.undecided_failed, report.undecided_unscored
        );
    }
    rows.push(vec!["undecided".to_string(), undecided]);
    if report.hand_written > 0 {
        rows.push(vec![
            "hand-written".to_string(),
            format!("{} (never marked unsolved)", report.hand_written),
        ]);
    }
    if report.not_in_file > 0 {
        rows.push(vec![
            "not in file".to_string(),
            format!(
                "{} scenario ids the job ran are no longer in its scenarios file",
                report.not_in_file
            ),
        ]);
    }
    pairs(out, "  ", &rows);
    if report.unsolved > 0 {
        out.push_str(
            "  (exports leave out the unsolved ones' conversations; --keep-unsolved keeps them)\n",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::unsolved::Decided;
    use crate::store::ScenarioAttempts;
    use crate::verify::solved::outcome;

    fn decided(id: &str, scored: u64, passed: u64, waiting: u64, failed: u64) -> Decided {
        let attempts = ScenarioAttempts {
            scenario_id: id.into(),
            planned: scored + waiting + failed,
            waiting,
            failed,
            unscored: 0,
            scored,
            passed,
        };
        Decided {
            outcome: outcome(&attempts),
            attempts,
        }
    }

    #[test]
    fn the_section_counts_each_outcome_and_lists_the_unsolved() {
        let outcomes = SynthesizedOutcomes {
            scenarios: vec![
                decided("a", 3, 1, 0, 0),
                decided("b", 3, 0, 0, 0),
                decided("c", 2, 0, 0, 1),
                decided("d", 3, 0, 0, 0),
            ],
            hand_written: 2,
            ..Default::default()
        };
        let report = SynthesizedReport::of(&outcomes).unwrap();
        assert_eq!(
            (report.solved, report.unsolved, report.undecided),
            (1, 2, 1)
        );
        assert_eq!(report.unsolved_ids, ["b", "d"]);
        assert_eq!(report.undecided_failed, 1);
        let mut text = String::new();
        section(&mut text, &report);
        assert!(text.contains("unsolved      2: b, d"), "{text}");
        assert!(
            text.contains("0 with attempts waiting, 1 with failed items"),
            "{text}"
        );
        assert!(
            text.contains("hand-written  2 (never marked unsolved)"),
            "{text}"
        );
    }

    #[test]
    fn a_job_without_synthesized_scenarios_has_no_section() {
        let outcomes = SynthesizedOutcomes {
            hand_written: 27,
            ..Default::default()
        };
        assert_eq!(SynthesizedReport::of(&outcomes), None);
        let unreadable = SynthesizedOutcomes {
            unreadable: Some("gone".into()),
            ..Default::default()
        };
        let report = SynthesizedReport::of(&unreadable).unwrap();
        let mut text = String::new();
        section(&mut text, &report);
        assert!(
            text.contains("unknown: gone; no conversation is left out"),
            "{text}"
        );
    }

    #[test]
    fn a_long_unsolved_list_is_cut_in_text_and_whole_in_json() {
        let outcomes = SynthesizedOutcomes {
            scenarios: (0..25)
                .map(|i| decided(&format!("s{i:02}"), 1, 0, 0, 0))
                .collect(),
            ..Default::default()
        };
        let report = SynthesizedReport::of(&outcomes).unwrap();
        let mut text = String::new();
        section(&mut text, &report);
        assert!(text.contains("s19 and 5 more (--json lists all)"), "{text}");
        assert!(!text.contains("s20"), "{text}");
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["unsolved_ids"].as_array().unwrap().len(), 25);
    }
}
