//! The brief check on the real retail environment, starting from the
//! hand-written scenarios: each part of a brief met, and each unmet one
//! named with what to do.

use crate::env::builtin::retail::RetailEnvironment;
use crate::persona::scenario::Scenario;

use super::super::execute::validate;
use super::super::execute_tests::shipped;
use super::*;

fn brief(outcome: Option<Outcome>) -> ProposalBrief {
    ProposalBrief {
        outcome,
        ..Default::default()
    }
}

/// The reason the brief check gives `s` under `brief`, or `None` when it passes.
async fn reason(s: &Scenario, brief: &ProposalBrief) -> Option<String> {
    let env = RetailEnvironment::new().unwrap();
    let changed = !write_tools(&env, s).await.unwrap().is_empty();
    check_brief(&env, s, brief, changed).await.err().map(|r| {
        assert_eq!(r.stage, Stage::Brief);
        r.reason
    })
}

fn tagged(mut s: Scenario, tag: &str) -> Scenario {
    s.tags.push(tag.into());
    s
}

#[tokio::test]
async fn a_cancel_and_a_return_for_one_user_meet_a_hard_multi_intent_brief_with_its_tool_and_tag() {
    let s = tagged(shipped("retail-017"), MULTI_INTENT_TAG);
    let b = ProposalBrief {
        difficulty: Some("hard".into()),
        tags: vec!["return".into()],
        tools: vec!["cancel_pending_order".into()],
        multi_intent: true,
        outcome: Some(Outcome::Resolve),
    };
    assert_eq!(reason(&s, &b).await, None);
    let env = RetailEnvironment::new().unwrap();
    assert_eq!(
        write_tools(&env, &s).await.unwrap(),
        ["cancel_pending_order", "return_delivered_order_items"]
    );
}

#[tokio::test]
async fn a_required_tool_no_gold_action_calls_is_named_with_the_calls_there_are() {
    let b = ProposalBrief {
        tools: vec!["modify_user_address".into()],
        ..Default::default()
    };
    let r = reason(&shipped("retail-007"), &b).await.unwrap();
    assert!(
        r.contains("call modify_user_address")
            && r.contains("find_user_id_by_email, get_order_details, cancel_pending_order"),
        "{r}"
    );
}

#[tokio::test]
async fn the_wrong_difficulty_and_missing_tags_are_both_in_one_reason() {
    let b = ProposalBrief {
        difficulty: Some("hard".into()),
        tags: vec!["return".into(), "cancel".into()],
        ..Default::default()
    };
    let r = reason(&shipped("retail-007"), &b).await.unwrap();
    assert!(
        r.contains("asks for a hard task") && r.contains("difficulty is \"medium\""),
        "{r}"
    );
    assert!(
        r.contains("lack \"return\"") && !r.contains("lack \"return\", \"cancel\""),
        "{r}"
    );
}

#[tokio::test]
async fn a_refusal_brief_needs_the_refusal_tag_and_a_refusal_that_transfers_is_named() {
    let mut untagged = shipped("retail-022");
    untagged.tags.retain(|t| t != REFUSAL_TAG);
    let r = reason(&untagged, &brief(Some(Outcome::Refusal)))
        .await
        .unwrap();
    assert!(r.contains("not tagged \"refusal\""), "{r}");
    assert_eq!(
        reason(
            &tagged(shipped("retail-022"), REFUSAL_TAG),
            &brief(Some(Outcome::Refusal))
        )
        .await,
        None
    );
    let r = reason(
        &tagged(shipped("retail-026"), REFUSAL_TAG),
        &brief(Some(Outcome::Refusal)),
    )
    .await
    .unwrap();
    assert!(
        r.contains("transfers to a human (transfer_to_human_agents)"),
        "{r}"
    );
    assert!(r.contains("change the state"), "{r}");
}

#[tokio::test]
async fn a_transfer_brief_needs_the_transfer_last_and_a_resolve_brief_forbids_it() {
    assert_eq!(
        reason(&shipped("retail-026"), &brief(Some(Outcome::Transfer))).await,
        None
    );
    let r = reason(&shipped("retail-007"), &brief(Some(Outcome::Transfer)))
        .await
        .unwrap();
    assert!(
        r.contains("last gold action is cancel_pending_order, not transfer_to_human_agents"),
        "{r}"
    );
    assert!(r.contains("not tagged \"transfer\""), "{r}");
    let r = reason(&shipped("retail-026"), &brief(Some(Outcome::Resolve)))
        .await
        .unwrap();
    assert!(
        r.contains("tagged \"transfer\"") && r.contains("transfer_to_human_agents"),
        "{r}"
    );
}

#[tokio::test]
async fn one_write_or_two_writes_of_one_tool_are_not_multi_intent() {
    let multi = ProposalBrief {
        multi_intent: true,
        ..Default::default()
    };
    let r = reason(&tagged(shipped("retail-007"), MULTI_INTENT_TAG), &multi)
        .await
        .unwrap();
    assert!(r.contains("one tool only (cancel_pending_order)"), "{r}");
    // Returns from two orders: two calls of one tool.
    let r = reason(&tagged(shipped("retail-018"), MULTI_INTENT_TAG), &multi)
        .await
        .unwrap();
    assert!(
        r.contains("one tool only (return_delivered_order_items)"),
        "{r}"
    );
    let r = reason(&shipped("retail-017"), &multi).await.unwrap();
    assert!(r.contains("not tagged \"multi-intent\""), "{r}");
}

#[tokio::test]
async fn a_multi_intent_tag_is_held_to_two_changes_whatever_the_brief() {
    let r = reason(
        &tagged(shipped("retail-001"), MULTI_INTENT_TAG),
        &ProposalBrief::default(),
    )
    .await
    .unwrap();
    assert!(
        r.contains("no change at all") && r.contains("or drop the tag"),
        "{r}"
    );
}

#[tokio::test]
async fn validation_by_execution_ends_with_the_brief_stage() {
    let env = RetailEnvironment::new().unwrap();
    let b = ProposalBrief {
        tools: vec!["calculate".into()],
        ..Default::default()
    };
    let r = validate(&env, &shipped("retail-001"), &b)
        .await
        .unwrap_err()
        .rejection()
        .cloned()
        .unwrap();
    assert_eq!(r.stage, Stage::Brief);
    assert!(
        validate(&env, &shipped("retail-001"), &ProposalBrief::default())
            .await
            .is_ok()
    );
}

#[test]
fn the_words_of_a_brief_name_what_the_check_holds_it_to() {
    let b = ProposalBrief {
        difficulty: Some("hard".into()),
        tags: vec!["return".into()],
        tools: vec!["cancel_pending_order".into()],
        multi_intent: true,
        outcome: Some(Outcome::Resolve),
    };
    let words = b.in_words(&["transfer_to_human_agents"]).join("\n");
    for needle in [
        "do not call transfer_to_human_agents",
        "two different tools",
        "\"multi-intent\"",
        "call cancel_pending_order",
        "\"difficulty\": \"hard\"",
        "tag the scenario \"return\"",
    ] {
        assert!(words.contains(needle), "{needle} not in:\n{words}");
    }
    let transfer = brief(Some(Outcome::Transfer)).in_words(&["transfer_to_human_agents"]);
    assert!(transfer[0].contains("last gold action is transfer_to_human_agents"));
    assert_eq!(ProposalBrief::default().in_words(&[]).len(), 1);
}
