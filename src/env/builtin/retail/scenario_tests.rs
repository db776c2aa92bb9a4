//! The shipped scenario set (`data/retail/scenarios.jsonl`) against the
//! shipped seed: every line parses, every gold action replays, every fact to
//! communicate is something a tool actually says, and a policy that makes the
//! gold calls and says the facts gets full reward.

use std::collections::BTreeSet;

use serde_json::Value;

use super::specs::{is_write, TRANSFER_TO_HUMAN_AGENTS};
use super::*;
use crate::persona::Scenario;
use crate::verify::{communicate, Component};

fn scenarios() -> Vec<Scenario> {
    SCENARIOS_JSONL
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("scenarios.jsonl line {}: {e}", i + 1))
        })
        .collect()
}

fn has_tag(scenario: &Scenario, tag: &str) -> bool {
    scenario.tags.iter().any(|t| t == tag)
}

fn writes(scenario: &Scenario) -> usize {
    scenario
        .evaluation
        .actions
        .iter()
        .filter(|a| is_write(&a.name))
        .count()
}

fn open(scenario: &Scenario) -> RetailSession {
    let init = InitialState {
        seed: 0,
        data: scenario.initial_state.clone(),
    };
    RetailEnvironment::new()
        .unwrap()
        .open_session(&init)
        .unwrap_or_else(|e| panic!("{}: {e}", scenario.id))
}

/// Play the gold actions the way the mock policy does, one call per step.
fn play_gold(scenario: &Scenario, session: &mut RetailSession) -> Vec<ToolOutput> {
    scenario
        .evaluation
        .actions
        .iter()
        .enumerate()
        .map(|(i, action)| {
            let arguments = match &action.arguments {
                Value::Null => "{}".to_string(),
                other => other.to_string(),
            };
            let out = session.call_tool(&ToolCall {
                id: format!("gold-{i}"),
                name: action.name.clone(),
                arguments,
            });
            assert!(
                !out.is_error,
                "{}: evaluation.actions[{i}] ({}) failed: {}",
                scenario.id, action.name, out.content
            );
            out
        })
        .collect()
}

#[test]
fn every_shipped_scenario_parses_and_ids_are_unique() {
    let all = scenarios();
    assert!(all.len() >= 24, "only {} scenarios", all.len());
    let ids: BTreeSet<&str> = all.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.len(), all.len(), "duplicate scenario ids");
    for s in &all {
        assert!(s.id.starts_with("retail-"), "{}", s.id);
        assert!(!s.description.is_empty(), "{}", s.id);
        assert!(!s.user.reason_for_contact.is_empty(), "{}", s.id);
        assert!(!s.user.known_info.is_empty(), "{}", s.id);
        assert!(!s.user.task_instructions.is_empty(), "{}", s.id);
        assert!(
            matches!(s.difficulty.as_deref(), Some("easy" | "medium" | "hard")),
            "{}",
            s.id
        );
        assert!(has_tag(s, "retail"), "{}", s.id);
        assert!(!s.evaluation.actions.is_empty(), "{}", s.id);
        assert!(
            s.evaluation.reward_basis.contains(&Component::Db),
            "{}",
            s.id
        );
    }
}

#[test]
fn the_set_mixes_reads_writes_refusals_and_transfers() {
    let all = scenarios();
    let count = |f: &dyn Fn(&Scenario) -> bool| all.iter().filter(|s| f(s)).count();
    let easy_reads = count(&|s| s.difficulty.as_deref() == Some("easy") && writes(s) == 0);
    let medium_writes = count(&|s| s.difficulty.as_deref() == Some("medium") && writes(s) > 0);
    let hard = count(&|s| s.difficulty.as_deref() == Some("hard"));
    let refusals = count(&|s| has_tag(s, "refusal"));
    let transfers = count(&|s| has_tag(s, "transfer"));
    assert!(easy_reads >= 6, "easy read-only: {easy_reads}");
    assert!(medium_writes >= 8, "medium with writes: {medium_writes}");
    assert!(hard >= 6, "hard: {hard}");
    assert!(refusals >= 3, "refusals: {refusals}");
    assert!(transfers >= 2, "transfers: {transfers}");
}

#[test]
fn every_gold_action_replays_without_error_on_a_fresh_session() {
    for s in scenarios() {
        play_gold(&s, &mut open(&s));
    }
}

#[test]
fn every_fact_to_communicate_appears_in_a_gold_tool_result() {
    for s in scenarios() {
        let outputs = play_gold(&s, &mut open(&s));
        let as_said: Vec<Message> = outputs
            .iter()
            .map(|o| Message::assistant(o.content.clone()))
            .collect();
        let check = communicate::score(&as_said, &s.evaluation.communicate);
        assert_eq!(check.score, 1.0, "{}: {}", s.id, check.detail);
    }
}

#[test]
fn a_transfer_scenario_without_the_transfer_fails_db() {
    let s = scenarios()
        .into_iter()
        .find(|s| {
            s.evaluation
                .actions
                .iter()
                .any(|a| a.name == "transfer_to_human_agents")
        })
        .expect("a transfer scenario");
    let mut session = open(&s);
    for (i, action) in s.evaluation.actions.iter().enumerate() {
        if action.name != "transfer_to_human_agents" {
            session.call_tool(&ToolCall {
                id: format!("c{i}"),
                name: action.name.clone(),
                arguments: action.arguments.to_string(),
            });
        }
    }
    let v = session.verify_conversation(&[], &s.evaluation).unwrap();
    assert_eq!(v.components[&Component::Db].score, 0.0);
    assert!(v.components[&Component::Db]
        .detail
        .contains("transfers to a human agent: 0 (gold: 1)"));
}

#[test]
fn scenarios_with_writes_change_the_state_and_the_others_do_not() {
    for s in scenarios() {
        let mut session = open(&s);
        let before = session.state_hash();
        play_gold(&s, &mut session);
        let changed = session.state_hash() != before;
        let transfers = s
            .evaluation
            .actions
            .iter()
            .any(|a| a.name == "transfer_to_human_agents");
        assert_eq!(changed, writes(&s) > 0 || transfers, "{}", s.id);
    }
}

#[test]
fn refusal_scenarios_make_no_write_and_are_scored_on_state() {
    for s in scenarios().iter().filter(|s| has_tag(s, "refusal")) {
        assert_eq!(writes(s), 0, "{}", s.id);
        assert_eq!(s.evaluation.reward_basis, vec![Component::Db], "{}", s.id);
        assert!(
            !s.evaluation
                .actions
                .iter()
                .any(|a| a.name == TRANSFER_TO_HUMAN_AGENTS),
            "{}",
            s.id
        );
    }
}

#[test]
fn transfer_scenarios_end_with_a_transfer_and_make_no_write() {
    for s in scenarios().iter().filter(|s| has_tag(s, "transfer")) {
        assert_eq!(writes(s), 0, "{}", s.id);
        let last = s.evaluation.actions.last().map(|a| a.name.as_str());
        assert_eq!(last, Some(TRANSFER_TO_HUMAN_AGENTS), "{}", s.id);
    }
}

#[test]
fn account_scenarios_authenticate_before_anything_else() {
    for s in scenarios() {
        let first = s.evaluation.actions[0].name.as_str();
        let touches_account = s
            .evaluation
            .actions
            .iter()
            .any(|a| a.name.contains("user") || a.name.contains("order") || is_write(&a.name));
        if touches_account {
            assert!(
                first == "find_user_id_by_email" || first == "find_user_id_by_name_zip",
                "{} starts with {first}",
                s.id
            );
        }
    }
}

#[test]
fn a_policy_that_makes_the_gold_calls_and_says_the_facts_gets_full_reward() {
    for s in scenarios() {
        let mut session = open(&s);
        play_gold(&s, &mut session);
        let messages = vec![
            Message::user(s.user.reason_for_contact.clone()),
            Message::assistant(s.evaluation.communicate.join(". ")),
        ];
        let v = session
            .verify_conversation(&messages, &s.evaluation)
            .unwrap_or_else(|e| panic!("{}: {e}", s.id));
        assert_eq!(v.reward, 1.0, "{}: {:?}", s.id, v.components);
    }
}

#[test]
fn a_policy_that_skips_the_writes_gets_no_reward() {
    for s in scenarios().iter().filter(|s| writes(s) > 0) {
        let mut session = open(s);
        for a in s.evaluation.actions.iter().filter(|a| !is_write(&a.name)) {
            session.call_tool(&ToolCall {
                id: "read".into(),
                name: a.name.clone(),
                arguments: a.arguments.to_string(),
            });
        }
        let messages = vec![Message::assistant(s.evaluation.communicate.join(". "))];
        let v = session
            .verify_conversation(&messages, &s.evaluation)
            .unwrap();
        assert_eq!(v.reward, 0.0, "{}", s.id);
    }
}
