//! What a job's judges need from its scenarios, checked before the job runs:
//! an `equivalence` judge needs every scenario's `expected_answer`, an
//! `assertions` judge its `nl_assertions`, and a pairwise judge needs pairs,
//! which a generation job's own judges never get. Found at run time instead,
//! each would fail every item and trip the circuit breaker.

use std::path::Path;

use super::definition::{Judge, Mode};
use crate::config::Problem;
use crate::persona::Scenario;

/// Scenario ids named in a message at most.
const SHOWN: usize = 5;

/// A problem (at `judges[i]` of `file`) for every judge of a generation job
/// that some of `scenarios` cannot feed.
pub fn unmet_by_scenarios(file: &Path, judges: &[Judge], scenarios: &[Scenario]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (i, judge) in judges.iter().enumerate() {
        let lacking = |has: &dyn Fn(&Scenario) -> bool| -> Vec<&str> {
            scenarios
                .iter()
                .filter(|s| !has(s))
                .map(|s| s.id.as_str())
                .collect()
        };
        let (what, missing) = match judge.mode {
            Mode::Equivalence => (
                "an expected answer (evaluation.expected_answer)",
                lacking(&|s| {
                    s.evaluation
                        .expected_answer
                        .as_deref()
                        .is_some_and(|a| !a.trim().is_empty())
                }),
            ),
            Mode::Assertions => (
                "assertions (evaluation.nl_assertions)",
                lacking(&|s| !s.evaluation.nl_assertions.is_empty()),
            ),
            Mode::Pairwise => {
                problems.push(Problem::at_field(
                    file,
                    &format!("judges[{i}]"),
                    format!(
                        "judge '{}' is pairwise: it judges two jobs' conversations against each \
                         other, so it cannot run over this job alone; remove it here and run \
                         `sparring judge --pairwise --a JOB_A --b JOB_B` instead",
                        judge.name
                    ),
                ));
                continue;
            }
            Mode::Pointwise => continue,
        };
        if missing.is_empty() {
            continue;
        }
        let shown: Vec<&str> = missing.iter().take(SHOWN).copied().collect();
        let more = match missing.len().saturating_sub(SHOWN) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        problems.push(Problem::at_field(
            file,
            &format!("judges[{i}]"),
            format!(
                "judge '{}' ({} mode) needs {what}, which {} of {} scenarios lack: {}{more}; \
                 add it to them, or remove the judge",
                judge.name,
                judge.mode.as_str(),
                missing.len(),
                scenarios.len(),
                shown.join(", ")
            ),
        ));
    }
    problems
}

/// A problem (at the scenario's `evaluation.reward_basis` in `file`, the
/// scenarios file) for every `judge:NAME` reward component that names none of
/// the job's `[[judges]]`.
pub fn unknown_reward_judges(
    file: &Path,
    judges: &[Judge],
    scenarios: &[Scenario],
) -> Vec<Problem> {
    let names: Vec<&str> = judges.iter().map(|j| j.name.as_str()).collect();
    let known = if names.is_empty() {
        "the job defines no judges".to_string()
    } else {
        format!("the job's judges are: {}", names.join(", "))
    };
    let mut problems = Vec::new();
    for scenario in scenarios {
        for component in scenario.evaluation.reward_basis.iter() {
            let Some(name) = component.judge_name() else {
                continue;
            };
            if names.contains(&name) {
                continue;
            }
            problems.push(Problem::at_field(
                file,
                &format!("scenario '{}', evaluation.reward_basis", scenario.id),
                format!(
                    "names judge '{name}' (\"judge:{name}\"), which the job does not define \
                     ({known}); add a [[judges]] table with name = \"{name}\" to the job \
                     config, or name one of its judges"
                ),
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::Builtin;

    fn scenario(id: &str, evaluation: &str) -> Scenario {
        serde_json::from_str(&format!(
            r#"{{"id": "{id}", "user": {{"reason_for_contact": "R", "known_info": "K",
                "task_instructions": "T"}}, "evaluation": {evaluation}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn an_equivalence_judge_over_scenarios_without_expected_answers_is_named() {
        let judges = [
            Judge::from_builtin("eq", "j", Builtin::Equivalence).unwrap(),
            Judge::from_builtin("helpful", "j", Builtin::Helpfulness).unwrap(),
        ];
        let scenarios = [
            scenario("a", r#"{"expected_answer": "42"}"#),
            scenario("b", "{}"),
        ];
        let problems = unmet_by_scenarios(Path::new("job.toml"), &judges, &scenarios);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].location.as_deref(), Some("judges[0]"));
        assert!(
            problems[0].message.contains("1 of 2 scenarios lack: b"),
            "{problems:?}"
        );
        assert!(unmet_by_scenarios(Path::new("job.toml"), &judges, &scenarios[..1]).is_empty());
    }

    #[test]
    fn a_reward_naming_no_judge_of_the_job_is_named_with_the_judges_there_are() {
        let judges = [Judge::from_builtin("eq", "j", Builtin::Equivalence).unwrap()];
        let scenarios = [
            scenario("a", r#"{"reward_basis": ["judge:eq"]}"#),
            scenario("b", r#"{"reward_basis": ["exact", "judge:correct"]}"#),
        ];
        let problems = unknown_reward_judges(Path::new("s.jsonl"), &judges, &scenarios);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].message.contains("'correct'"));
        assert!(problems[0].message.contains("judges are: eq"));
        let none = unknown_reward_judges(Path::new("s.jsonl"), &[], &scenarios[..1]);
        assert!(none[0].message.contains("defines no judges"), "{none:?}");
    }

    #[test]
    fn assertions_need_assertions_and_pairwise_needs_pairs() {
        let judges = [
            Judge::from_builtin("as", "j", Builtin::Assertions).unwrap(),
            Judge::from_builtin("pref", "j", Builtin::PairwisePreference).unwrap(),
        ];
        let problems = unmet_by_scenarios(Path::new("job.toml"), &judges, &[scenario("a", "{}")]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].message.contains("nl_assertions"));
        assert!(problems[1].message.contains("sparring judge --pairwise"));
    }
}
