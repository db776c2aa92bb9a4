//! Closing the loop on synthesized scenarios (issue 18 §6): after a strong
//! policy ran a generation job over them, a scenario the synthesizer wrote
//! (tagged [`SYNTHESIZED_TAG`]) that no attempt passed is *unsolved*: a
//! blueprint bug or a genuinely hard task, left out of exports by default.
//!
//! The one definition, in [`outcome`]:
//! - an attempt is an item done with a scored conversation; it passes with
//!   reward ≥ [`SUCCESS_REWARD`], the rule of pass^k (`sparring stats`);
//! - **solved**: an attempt passed (a pass is final, whatever the others do);
//! - **unsolved**: every planned attempt (item: persona × sample) was made
//!   and none passed;
//! - **undecided** otherwise: some items are still waiting, failed (an
//!   infrastructure failure is not an attempt), or stored no reward (the
//!   simulator or environment broke the conversation). Retrying or finishing
//!   the job decides them.
//!
//! Hand-written scenarios (without the tag) are never unsolved: a task
//! written by a person that nobody passes is the benchmark doing its job.

use serde::Serialize;

use crate::store::ScenarioAttempts;

/// The tag `sparring synthesize` gives every scenario it writes
/// (`synth::propose` re-exports it).
pub const SYNTHESIZED_TAG: &str = "synthesized";

/// A trial succeeds with full reward (1.0, give or take rounding).
pub const SUCCESS_REWARD: f64 = 1.0 - 1e-9;

/// How a synthesized scenario's attempts ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScenarioOutcome {
    Solved,
    Unsolved,
    Undecided,
}

impl ScenarioOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            ScenarioOutcome::Solved => "solved",
            ScenarioOutcome::Unsolved => "unsolved",
            ScenarioOutcome::Undecided => "undecided",
        }
    }
}

/// Whether a scenario's tags mark it as written by `sparring synthesize`.
pub fn is_synthesized(tags: &[String]) -> bool {
    tags.iter().any(|t| t == SYNTHESIZED_TAG)
}

/// Whether a reward passes (the rule of pass^k).
pub fn passes(reward: f64) -> bool {
    reward >= SUCCESS_REWARD
}

/// How a synthesized scenario's attempts ended (see the module's
/// documentation). `attempts.passed` must count the scored conversations
/// that [`passes`].
pub fn outcome(attempts: &ScenarioAttempts) -> ScenarioOutcome {
    let a = attempts;
    if a.passed > 0 {
        ScenarioOutcome::Solved
    } else if a.planned > 0 && a.scored == a.planned {
        ScenarioOutcome::Unsolved
    } else {
        ScenarioOutcome::Undecided
    }
}

/// Why an undecided scenario is undecided: the counts that keep it from
/// being decided, e.g. `2 waiting, 1 failed`.
pub fn undecided_because(a: &ScenarioAttempts) -> String {
    let parts: Vec<String> = [
        (a.waiting, "waiting"),
        (a.failed, "failed"),
        (a.unscored, "not scored"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if parts.is_empty() {
        "no attempt planned".to_string()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `planned` items: `scored` of them scored (`passed` passing), then
    /// `waiting`, `failed` and `unscored` ones.
    fn attempts(
        planned: u64,
        scored: u64,
        passed: u64,
        waiting: u64,
        failed: u64,
        unscored: u64,
    ) -> ScenarioAttempts {
        assert_eq!(planned, scored + waiting + failed + unscored);
        ScenarioAttempts {
            scenario_id: "s".into(),
            planned,
            waiting,
            failed,
            unscored,
            scored,
            passed,
        }
    }

    #[test]
    fn every_planned_attempt_made_and_none_passed_is_unsolved() {
        assert_eq!(
            outcome(&attempts(3, 3, 0, 0, 0, 0)),
            ScenarioOutcome::Unsolved
        );
        assert_eq!(
            outcome(&attempts(1, 1, 0, 0, 0, 0)),
            ScenarioOutcome::Unsolved
        );
    }

    #[test]
    fn one_pass_solves_a_scenario_even_with_attempts_still_to_come() {
        assert_eq!(
            outcome(&attempts(3, 3, 1, 0, 0, 0)),
            ScenarioOutcome::Solved
        );
        assert_eq!(
            outcome(&attempts(3, 3, 3, 0, 0, 0)),
            ScenarioOutcome::Solved
        );
        assert_eq!(
            outcome(&attempts(3, 1, 1, 1, 1, 0)),
            ScenarioOutcome::Solved
        );
    }

    #[test]
    fn a_waiting_failed_or_unscored_item_without_a_pass_leaves_the_scenario_undecided() {
        for (a, why) in [
            (attempts(3, 2, 0, 1, 0, 0), "1 waiting"),
            (attempts(3, 2, 0, 0, 1, 0), "1 failed"),
            (attempts(3, 2, 0, 0, 0, 1), "1 not scored"),
            (attempts(3, 0, 0, 1, 2, 0), "1 waiting, 2 failed"),
        ] {
            assert_eq!(outcome(&a), ScenarioOutcome::Undecided, "{a:?}");
            assert_eq!(undecided_because(&a), why);
        }
    }

    #[test]
    fn a_scenario_without_planned_attempts_is_undecided_not_unsolved() {
        let none = attempts(0, 0, 0, 0, 0, 0);
        assert_eq!(outcome(&none), ScenarioOutcome::Undecided);
        assert_eq!(undecided_because(&none), "no attempt planned");
    }

    #[test]
    fn a_pass_is_full_reward_give_or_take_rounding() {
        assert!(passes(1.0));
        assert!(passes(0.999_999_999_9));
        assert!(!passes(0.99));
        assert!(!passes(0.0));
    }

    #[test]
    fn only_the_synthesized_tag_marks_a_synthesized_scenario() {
        assert!(is_synthesized(&["retail".into(), "synthesized".into()]));
        assert!(!is_synthesized(&[
            "retail".into(),
            "Synthesized-ish".into()
        ]));
        assert!(!is_synthesized(&[]));
    }
}
