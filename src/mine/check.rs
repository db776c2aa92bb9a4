//! Holding a mined scenario and persona to what a scenarios file and a
//! personas file must be (the loaders' own checks), to the environment the
//! job will run in (`sparring validate`'s checks: gold actions, probes), to
//! the conversation it came from (every fact to communicate is one the agent
//! said), and to the scenarios kept before it (near-duplicates by MinHash
//! over the goal, as synthesis removes them).

use std::path::Path;

use serde::Serialize;

use crate::env::preflight::{check_gold_actions, probe_problems};
use crate::env::Environment;
use crate::persona::load::{persona_problems, scenario_issues};
use crate::persona::Scenario;
use crate::synth::dedup::{DedupConfig, DedupIndex};

use super::reply::Mined;

/// Why a conversation gave no scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rejection {
    /// The model call failed (after the endpoint's retries).
    ModelFailed,
    /// The answer is not the JSON asked for.
    Unparseable,
    /// The scenario or persona fails the loaders' checks.
    Format,
    /// The scenario fails the environment's checks.
    Environment,
    /// A fact to communicate that no agent turn of the conversation says.
    UnshownFact,
    /// The goal repeats a scenario kept earlier.
    Duplicate,
}

impl Rejection {
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::ModelFailed => "model_failed",
            Rejection::Unparseable => "unparseable",
            Rejection::Format => "format",
            Rejection::Environment => "environment",
            Rejection::UnshownFact => "unshown_fact",
            Rejection::Duplicate => "duplicate",
        }
    }
}

/// The loaders' checks of the pair; each problem in words.
pub fn format_problems(mined: &Mined) -> Vec<String> {
    let mut problems: Vec<String> = scenario_issues(&mined.scenario)
        .into_iter()
        .map(|p| format!("scenario: {p}"))
        .collect();
    problems.extend(
        persona_problems(&mined.persona)
            .into_iter()
            .map(|p| format!("persona: {p}")),
    );
    for (field, text) in [
        ("background", &mined.persona.background),
        ("speaking_style", &mined.persona.speaking_style),
    ] {
        if text.trim().is_empty() {
            problems.push(format!("persona: `{field}` is empty"));
        }
    }
    problems
}

/// `sparring validate`'s checks of one scenario against the environment.
pub async fn environment_problems(
    scenario: &Scenario,
    environment: &dyn Environment,
) -> Vec<String> {
    let file = Path::new("scenarios.jsonl");
    let one = std::slice::from_ref(scenario);
    let mut problems = check_gold_actions(file, one, environment).await;
    problems.extend(probe_problems(file, one, environment));
    problems.into_iter().map(|p| p.to_string()).collect()
}

/// The facts to communicate that no agent turn says (compared as the
/// `communicate` verifier compares: case and punctuation aside).
pub fn unshown_facts<'a>(scenario: &'a Scenario, agent_said: &str) -> Vec<&'a str> {
    let said = squash(agent_said);
    scenario
        .evaluation
        .communicate
        .iter()
        .filter(|fact| !said.contains(&squash(fact)))
        .map(String::as_str)
        .collect()
}

fn squash(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The scenarios kept so far: synthesis's near-duplicate index, at its
/// default goal similarity whatever the gold actions (a mined scenario's
/// actions are the model's reading, so sharing them says little).
pub fn kept_index() -> DedupIndex {
    let defaults = DedupConfig::default();
    DedupIndex::new(&DedupConfig {
        same_actions_similarity: defaults.similarity,
        ..defaults
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mine::reply::read_answer;

    fn mined(reason: &str, fact: &str) -> Mined {
        let answer = format!(
            r#"{{"scenario": {{"reason_for_contact": "{reason}", "task_instructions": "Stop when told.",
            "communicate": ["{fact}"]}}, "persona": {{"name": "A", "background": "b", "speaking_style": "s"}}}}"#
        );
        read_answer(&answer, "m-1").unwrap()
    }

    #[test]
    fn a_fact_the_agent_never_said_is_unshown() {
        let m = mined("You want the price of the lamp.", "$54.04");
        assert!(unshown_facts(&m.scenario, "It costs 54.04 dollars").is_empty());
        assert_eq!(unshown_facts(&m.scenario, "It costs $50"), vec!["$54.04"]);
    }

    #[test]
    fn an_empty_reason_or_name_fails_the_loaders_checks() {
        let mut m = mined("", "x");
        m.persona.name = String::new();
        let problems = format_problems(&m);
        assert!(
            problems.iter().any(|p| p.contains("reason_for_contact")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("`name` is empty")),
            "{problems:?}"
        );
    }

    #[test]
    fn the_same_goal_twice_is_a_duplicate_of_the_first() {
        let mut kept = kept_index();
        let a = mined(
            "You want to return the blue lamp you bought last week.",
            "x",
        );
        let mut b = a.clone();
        b.scenario.id = "m-2".into();
        let c = mined(
            "You want to know when the store opens on Sunday morning.",
            "x",
        );
        assert_eq!(kept.check(&a.scenario), None);
        kept.insert(&a.scenario);
        assert_eq!(kept.check(&b.scenario).map(|d| d.of), Some("m-1".into()));
        assert_eq!(kept.check(&c.scenario), None);
    }

    #[tokio::test]
    async fn a_scenario_without_gold_actions_passes_the_retail_checks() {
        let env = crate::env::builtin::open_builtin("builtin:retail").unwrap();
        let m = mined("You want a refund.", "x");
        assert!(environment_problems(&m.scenario, env.as_ref())
            .await
            .is_empty());
    }
}
