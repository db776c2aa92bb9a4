//! Each rejection of validation by execution, on the real retail environment,
//! starting from hand-written scenarios that pass.

use crate::env::builtin::retail::RetailEnvironment;
use crate::persona::scenario::Scenario;

use super::brief::{Outcome, ProposalBrief};
use super::execute::{id_like_words, validate};
use super::stage::Stage;

pub(super) fn shipped(id_prefix: &str) -> Scenario {
    include_str!("../../data/retail/scenarios.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Scenario>(l).unwrap())
        .find(|s| s.id.starts_with(id_prefix))
        .unwrap()
}

async fn stage_of(s: &Scenario, brief: &ProposalBrief) -> Option<Stage> {
    let env = RetailEnvironment::new().unwrap();
    validate(&env, s, brief)
        .await
        .err()
        .map(|r| r.rejection().unwrap().stage)
}

#[tokio::test]
async fn shipped_read_and_write_scenarios_pass() {
    let env = RetailEnvironment::new().unwrap();
    for id in ["retail-001", "retail-007"] {
        let s = shipped(id);
        let executed = validate(&env, &s, &ProposalBrief::default()).await;
        assert!(executed.is_ok(), "{id}: {:?}", executed.err());
        assert_eq!(executed.unwrap().len(), s.evaluation.actions.len());
    }
}

#[tokio::test]
async fn a_gold_action_with_an_unknown_order_is_an_execution_rejection_naming_it() {
    let mut s = shipped("retail-001");
    s.evaluation.actions[1].arguments = serde_json::json!({"order_id": "#LL00000"});
    let env = RetailEnvironment::new().unwrap();
    let r = validate(&env, &s, &ProposalBrief::default())
        .await
        .unwrap_err()
        .rejection()
        .cloned()
        .unwrap();
    assert_eq!(r.stage, Stage::Execution);
    assert!(r.reason.contains("evaluation.actions[1]"), "{}", r.reason);
    assert!(r.reason.contains("#LL00000"), "{}", r.reason);
}

#[tokio::test]
async fn a_write_task_without_its_write_is_a_state_rejection() {
    let mut s = shipped("retail-007");
    s.evaluation
        .actions
        .retain(|a| a.name != "cancel_pending_order");
    s.evaluation.communicate.clear();
    assert_eq!(
        stage_of(&s, &ProposalBrief::default()).await,
        Some(Stage::State)
    );
}

#[tokio::test]
async fn a_refusal_whose_actions_write_is_a_state_rejection() {
    let s = shipped("retail-007");
    let brief = ProposalBrief {
        outcome: Some(Outcome::Refusal),
        ..Default::default()
    };
    assert_eq!(stage_of(&s, &brief).await, Some(Stage::State));
}

#[tokio::test]
async fn an_order_id_the_seed_lacks_in_known_info_is_an_unknown_id_rejection() {
    let mut s = shipped("retail-001");
    s.user.known_info = s.user.known_info.replace("#LL21743", "#LL99999");
    let env = RetailEnvironment::new().unwrap();
    let r = validate(&env, &s, &ProposalBrief::default())
        .await
        .unwrap_err()
        .rejection()
        .cloned()
        .unwrap();
    assert_eq!(r.stage, Stage::UnknownId);
    assert!(r.reason.contains("#LL99999"), "{}", r.reason);
}

#[tokio::test]
async fn a_fact_in_no_output_is_a_communicate_rejection_naming_it() {
    let mut s = shipped("retail-001");
    s.evaluation.communicate.push("XZ123456789".into());
    let env = RetailEnvironment::new().unwrap();
    let r = validate(&env, &s, &ProposalBrief::default())
        .await
        .unwrap_err()
        .rejection()
        .cloned()
        .unwrap();
    assert_eq!(r.stage, Stage::Communicate);
    assert!(r.reason.contains("XZ123456789"), "{}", r.reason);
}

#[tokio::test]
async fn a_scenario_without_a_reward_basis_fails_validates_own_checks() {
    let mut s: Scenario = serde_json::from_value({
        let mut v = serde_json::to_value(shipped("retail-001")).unwrap();
        v["evaluation"]
            .as_object_mut()
            .unwrap()
            .remove("reward_basis");
        v
    })
    .unwrap();
    s.id = "x".into();
    assert_eq!(
        stage_of(&s, &ProposalBrief::default()).await,
        Some(Stage::Checks)
    );
}

#[test]
fn ids_emails_and_order_numbers_are_id_like_and_plain_words_are_not() {
    let words = id_like_words(
        "Your email is a.b@x.example. The order id is #LL21743, zip 94110, user theo_l_1.",
    );
    assert_eq!(words, ["a.b@x.example", "#LL21743", "theo_l_1"]);
}

#[tokio::test]
async fn an_environment_without_records_says_it_cannot_be_sampled_yet() {
    let qa = crate::env::builtin::open_builtin("builtin:qa").unwrap();
    let err = qa.sample_records(0, 3).await.unwrap_err().to_string();
    assert!(
        err.contains("builtin:qa") && err.contains("cannot be sampled"),
        "{err}"
    );
}
