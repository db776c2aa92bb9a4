use super::*;
use proptest::prelude::*;
use std::path::Path;

fn scenario(id: &str, reason: &str, instructions: &str, actions: &str) -> Scenario {
    serde_json::from_str(&format!(
        r#"{{"id": "{id}", "user": {{"reason_for_contact": "{reason}", "known_info": "K",
            "task_instructions": "{instructions}"}}, "evaluation": {{"actions": {actions}}}}}"#
    ))
    .unwrap()
}

const CANCEL: &str = r##"[{"name": "cancel_pending_order", "arguments": {"order_id": "#LL1001", "reason": "no longer needed"}}]"##;
const CANCEL_OTHER: &str = r##"[{"name": "cancel_pending_order", "arguments": {"order_id": "#LL2002", "reason": "no longer needed"}}]"##;
const CANCEL_SHOUTED: &str = r##"[{"name": "cancel_pending_order", "arguments": {"reason": " No longer needed ", "order_id": "#ll1001"}}]"##;

fn index() -> DedupIndex {
    DedupIndex::new(&DedupConfig::default())
}

#[test]
fn an_exact_repeat_is_a_duplicate_of_the_scenario_kept_first() {
    let mut index = index();
    let a = scenario(
        "a",
        "You want to cancel your lamp order.",
        "Ask to cancel it. Give your email.",
        CANCEL,
    );
    index.insert(&a);
    let again = scenario(
        "b",
        "You want to cancel your lamp order.",
        "Ask to cancel it. Give your email.",
        CANCEL,
    );
    let d = index.check(&again).unwrap();
    assert_eq!(d.of, "a");
    assert_eq!(d.similarity, 1.0);
}

#[test]
fn the_same_actions_written_differently_with_a_reworded_goal_are_a_duplicate() {
    let mut index = index();
    index.insert(&scenario(
        "a",
        "You want to cancel your lamp order because you no longer need it.",
        "Ask the agent to cancel the order. Give your email when asked.",
        CANCEL,
    ));
    // Keys in another order, case and spaces changed; the goal reworded at its end.
    let reworded = scenario(
        "b",
        "You want to cancel your lamp order because you no longer need it.",
        "Ask the agent to cancel the order. Give your name and zip code if asked.",
        CANCEL_SHOUTED,
    );
    let d = index.check(&reworded).unwrap();
    assert_eq!(d.of, "a");
    assert!(d.reason.contains("the same gold actions"), "{}", d.reason);
}

#[test]
fn the_same_goal_words_on_another_order_are_not_a_duplicate_at_the_defaults() {
    let mut index = index();
    index.insert(&scenario(
        "a",
        "You want to cancel order LL1001 for the lamp you no longer need.",
        "Ask the agent to cancel the order. Give your email when asked, then thank the agent.",
        CANCEL,
    ));
    let other = scenario(
        "b",
        "You want to cancel order LL2002 for the tent you no longer need.",
        "Ask the agent to cancel the order. Give your email when asked, then thank the agent.",
        CANCEL_OTHER,
    );
    assert_eq!(index.check(&other), None);
    index.insert(&other);
    assert_eq!(index.len(), 2);
}

#[test]
fn a_config_out_of_range_names_the_field_and_the_range() {
    let bad = DedupConfig {
        similarity: 1.5,
        shingle_words: 0,
        ..DedupConfig::default()
    };
    let problems = bad.problems(Path::new("synth.toml"), "dedup");
    let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(problems.len(), 2, "{text:?}");
    assert!(
        text.iter().any(|t| t.contains("dedup.similarity")),
        "{text:?}"
    );
    assert!(
        text.iter().any(|t| t.contains("dedup.shingle_words")),
        "{text:?}"
    );
    assert!(DedupConfig::default()
        .problems(Path::new("synth.toml"), "dedup")
        .is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn similarity_is_one_with_itself_symmetric_and_within_zero_and_one(
        a in "[a-e]{1,3}( [a-e]{1,3}){0,30}",
        b in "[a-e]{1,3}( [a-e]{1,3}){0,30}",
    ) {
        let index = index();
        prop_assert_eq!(index.similarity(&a, &a), 1.0);
        let ab = index.similarity(&a, &b);
        prop_assert_eq!(ab, index.similarity(&b, &a));
        prop_assert!((0.0..=1.0).contains(&ab));
    }

    #[test]
    fn the_estimate_is_near_the_exact_jaccard_of_the_shingles(
        a in "[a-d]( [a-d]){5,40}",
        b in "[a-d]( [a-d]){5,40}",
    ) {
        let index = DedupIndex::new(&DedupConfig { permutations: 512, ..DedupConfig::default() });
        let exact = exact_jaccard(&a, &b, 3);
        let estimate = index.similarity(&a, &b);
        prop_assert!((exact - estimate).abs() <= 0.2, "exact {} estimate {}", exact, estimate);
    }
}
