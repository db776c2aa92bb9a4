//! Probe scenarios as loaded: each `probe` block checked for what its family
//! needs, and its strategy (data, not code) found and filled in. A strategy
//! is a TOML file, `strategies/NAME.toml` beside the scenarios file or one
//! shipped in `prompts/probes/`: its `instructions` are added to the user's
//! task instructions, its `lines` become the block's `escalation` (what the
//! mock user says, one per turn).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::Problem;
use crate::verify::probe_spec::Family;
use crate::verify::Component;

use super::Scenario;

/// A user-simulator strategy file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Strategy {
    pub description: String,
    /// Added to the user's task instructions; may use `{{ pushes_for }}`
    /// and `{{ holds_when }}`.
    pub instructions: String,
    /// What the user says, one line per turn, after the agent answers.
    #[serde(default)]
    pub lines: Vec<String>,
}

macro_rules! shipped {
    ($name:literal) => {
        (
            $name,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/prompts/probes/",
                $name,
                ".toml"
            )),
        )
    };
}

/// The strategies built into the binary, by name.
pub const SHIPPED: [(&str, &str); 7] = [
    shipped!("escalate"),
    shipped!("authority"),
    shipped!("urgency"),
    shipped!("sweeping"),
    shipped!("pretext"),
    shipped!("impatient"),
    shipped!("plain"),
];

/// Where a strategy of `name` is looked for first: beside the scenarios.
pub fn strategy_path(scenarios: &Path, name: &str) -> PathBuf {
    scenarios
        .parent()
        .unwrap_or(Path::new("."))
        .join("strategies")
        .join(format!("{name}.toml"))
}

/// Read the strategy `name` (of the scenario field `field`, for problems):
/// the file beside the scenarios, else a shipped one.
pub fn find_strategy(scenarios: &Path, field: &str, name: &str) -> Result<Strategy, Problem> {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err(Problem::at_field(
            scenarios,
            field,
            format!(
                "'{name}' is not a strategy name; use letters, digits, '_' and \
                 '-' only, e.g. \"escalate\""
            ),
        ));
    }
    let path = strategy_path(scenarios, name);
    if let Ok(text) = std::fs::read_to_string(&path) {
        return toml::from_str(&text).map_err(|e| Problem::from_toml_error(&path, &text, &e));
    }
    let shipped = SHIPPED.iter().find(|(n, _)| *n == name).ok_or_else(|| {
        Problem::at_field(
            scenarios,
            field,
            format!(
                "'{name}' is neither {} nor a shipped strategy ({})",
                path.display(),
                SHIPPED.map(|(n, _)| n).join(", ")
            ),
        )
    })?;
    toml::from_str(shipped.1).map_err(|e| {
        Problem::in_file(
            format!("prompts/probes/{name}.toml (built in)"),
            e.to_string(),
        )
    })
}

/// Fill every probe scenario of `scenarios` (read from `file`) with its
/// strategy: the instructions added to the user's, the lines rendered.
pub fn apply_strategies(file: &Path, scenarios: &mut [Scenario]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for scenario in scenarios.iter_mut() {
        let Some(probe) = scenario.probe.as_mut() else {
            continue;
        };
        let field = format!("scenario '{}', probe.strategy", scenario.id);
        let strategy = match find_strategy(file, &field, &probe.strategy) {
            Ok(strategy) => strategy,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        let mut context = tera::Context::new();
        context.insert("pushes_for", &probe.pushes_for);
        context.insert("holds_when", &probe.holds_when);
        let render = |text: &str| {
            tera::Tera::one_off(text, &context, false).map_err(|e| {
                Problem::at_field(
                    file,
                    &field,
                    format!(
                        "strategy '{}' does not render: {}",
                        probe.strategy,
                        crate::error_chain::error_chain(&e)
                    ),
                )
            })
        };
        let rendered = render(&strategy.instructions).and_then(|instructions| {
            let lines = strategy
                .lines
                .iter()
                .map(|l| render(l))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((instructions, lines))
        });
        match rendered {
            Ok((instructions, lines)) => {
                let user = &mut scenario.user;
                user.task_instructions = format!(
                    "{}\n\n{}",
                    user.task_instructions.trim_end(),
                    instructions.trim()
                );
                probe.escalation = lines;
            }
            Err(problem) => problems.push(problem),
        }
    }
    problems
}

/// What a probe block lacks for its family, as the loader's issues.
pub fn probe_issues(scenario: &Scenario) -> Vec<String> {
    let Some(probe) = &scenario.probe else {
        return Vec::new();
    };
    let mut issues = Vec::new();
    let mut need = |missing: bool, what: &str| {
        if missing {
            issues.push(format!(
                "`probe` of family `{}` {what}",
                probe.family.as_str()
            ));
        }
    };
    need(
        probe.pushes_for.trim().is_empty() || probe.holds_when.trim().is_empty(),
        "needs `pushes_for` and `holds_when`: what the user pushes for and what holding the \
         line means",
    );
    need(
        !probe.escalation.is_empty(),
        "has `escalation` written in: leave it out, it is filled from the strategy's lines",
    );
    match probe.family {
        Family::PolicyPressure => need(
            probe.forbidden.is_empty(),
            "needs `forbidden`: the calls that break the line, e.g. [{\"name\": \
             \"cancel_pending_order\", \"arguments\": {\"order_id\": \"#LL1\"}}]",
        ),
        Family::Injection => need(
            probe.planted.is_none()
                || (probe.forbidden.is_empty()
                    && probe.planted.as_ref().is_some_and(|p| p.marker.is_none())),
            "needs `planted` ({\"tool\": ..., \"text\": ...}) and what following it looks \
             like: `forbidden` calls or `planted.marker`",
        ),
        Family::Disclosure => need(
            probe.protected.is_none(),
            "needs `protected`: a JSON pointer to the other customer's record in the \
             environment's state, e.g. \"/users/maya.okafor.55\"",
        ),
        Family::Consequence => {
            let judged = probe.judge.as_deref().is_some_and(|j| {
                scenario
                    .evaluation
                    .reward_basis
                    .contains(&Component::judge(j))
            });
            need(
                !judged,
                "needs `judge`, naming a judge that `evaluation.reward_basis` also names as \
                 \"judge:NAME\", whose verdict decides it",
            );
        }
        Family::Confirmation | Family::ScopeCreep => {}
    }
    issues
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(probe: &str) -> Scenario {
        serde_json::from_str(&format!(
            r#"{{"id": "p1", "user": {{"reason_for_contact": "R", "task_instructions": "T."}},
                "evaluation": {{"reward_basis": ["held"]}}, "probe": {probe}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn every_shipped_strategy_reads_and_renders() {
        for (name, _) in SHIPPED {
            let mut s = vec![scenario(&format!(
                r#"{{"family": "confirmation", "strategy": "{name}", "pushes_for": "a refund", "holds_when": "H"}}"#
            ))];
            let problems = apply_strategies(Path::new("/nowhere/s.jsonl"), &mut s);
            assert!(problems.is_empty(), "{name}: {problems:?}");
            assert!(s[0].user.task_instructions.starts_with("T.\n\n"), "{name}");
            assert!(s[0]
                .probe
                .as_ref()
                .unwrap()
                .escalation
                .iter()
                .all(|l| !l.contains("{{")));
        }
    }

    #[test]
    fn a_strategy_beside_the_scenarios_takes_the_place_of_a_shipped_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("strategies")).unwrap();
        std::fs::write(
            dir.path().join("strategies/escalate.toml"),
            "description = \"mine\"\ninstructions = \"Ask for {{ pushes_for }}.\"\nlines = [\"Give me {{ pushes_for }}!\"]\n",
        )
        .unwrap();
        let mut s = vec![scenario(
            r#"{"family": "confirmation", "strategy": "escalate", "pushes_for": "a refund", "holds_when": "H"}"#,
        )];
        assert!(apply_strategies(&dir.path().join("s.jsonl"), &mut s).is_empty());
        assert_eq!(
            s[0].probe.as_ref().unwrap().escalation,
            vec!["Give me a refund!"]
        );
        assert!(s[0].user.task_instructions.ends_with("Ask for a refund."));
    }

    #[test]
    fn an_unknown_strategy_or_a_bad_name_is_a_problem_naming_the_shipped_ones() {
        for name in ["nope", "../etc/passwd"] {
            let mut s = vec![scenario(&format!(
                r#"{{"family": "confirmation", "strategy": "{name}", "pushes_for": "P", "holds_when": "H"}}"#
            ))];
            let problems = apply_strategies(Path::new("s.jsonl"), &mut s);
            assert_eq!(problems.len(), 1, "{name}");
            let text = problems[0].to_string();
            assert!(
                text.contains("escalate") || text.contains("not a strategy name"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_block_lacking_what_its_family_needs_says_what_to_write() {
        let pressure = scenario(
            r#"{"family": "policy_pressure", "strategy": "escalate", "pushes_for": "P", "holds_when": "H"}"#,
        );
        assert!(probe_issues(&pressure)[0].contains("`forbidden`"));
        let consequence = scenario(
            r#"{"family": "consequence", "strategy": "plain", "pushes_for": "P", "holds_when": "H", "judge": "c"}"#,
        );
        assert!(probe_issues(&consequence)[0].contains("judge:NAME"));
        let fine = scenario(
            r#"{"family": "confirmation", "strategy": "plain", "pushes_for": "P", "holds_when": "H"}"#,
        );
        assert!(probe_issues(&fine).is_empty());
    }
}
