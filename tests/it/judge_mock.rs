//! The built-in judges through `llm::Endpoint` against the mock model server over
//! real HTTP: verdicts in range, the swap check catching a position-biased judge,
//! unparseable and failed calls recorded as such (never a score), and the cache
//! making a second run do no calls.

use std::collections::BTreeMap;

use crate::common;

use common::endpoint_config;
use serde_json::json;
use sparring::config::MockConfig;
use sparring::judge::aggregate::first_position_rate;
use sparring::judge::{
    run, Builtin, Judge, JudgeInputs, JudgeStatus, Order, Other, Preference, Verdict,
};
use sparring::llm::Endpoint;
use sparring::mock_llm::MockServer;
use sparring::persona::{Scenario, UserScenario};
use sparring::store::{ConversationRow, MessageRow, StoredConversation};
use sparring::verify::Criteria;

fn endpoint(server: &MockServer, model: &str) -> Endpoint {
    let config = {
        let mut endpoint = endpoint_config("judge", &server.base_url(), model);
        endpoint.settings.max_tokens = 512;
        endpoint
    };
    Endpoint::new(&config, &server.base_url()).unwrap()
}

fn judge(builtin: Builtin) -> Judge {
    Judge::from_builtin(builtin.name(), "judge", builtin).unwrap()
}

fn message(role: &str, content: &str) -> MessageRow {
    MessageRow {
        idx: 0,
        role: role.into(),
        content: content.into(),
        tool_calls: None,
        tool_call_id: None,
        author: String::new(),
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: None,
    }
}

fn tool_call(name: &str, arguments: &str) -> MessageRow {
    MessageRow {
        tool_calls: Some(json!([{"id": "call_0", "name": name, "arguments": arguments}])),
        ..message("assistant", "")
    }
}

fn conversation(id: i64, messages: Vec<MessageRow>) -> StoredConversation {
    let messages = messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| MessageRow { idx: i as i64, ..m })
        .collect();
    StoredConversation {
        conversation: ConversationRow {
            id,
            job_id: id,
            item_id: 1,
            item_key: "tracking/theo/0".into(),
            scenario_id: "tracking".into(),
            persona_id: "theo".into(),
            sample: 0,
            seed: 11,
            policy_model: "mock-policy".into(),
            user_model: "mock-user".into(),
            termination: "user_stop".into(),
            reward: Some(1.0),
            reward_breakdown: json!({}),
            metadata: json!({"persona_knobs": {}}),
            tools: json!([]),
            started_at: 0,
            finished_at: 0,
            user_checks: None,
        },
        messages,
        usage: Vec::new(),
    }
}

/// Looks the order up and gives the tracking number.
fn thorough() -> StoredConversation {
    conversation(
        1,
        vec![
            message("system", "You are a customer service agent."),
            message("assistant", "Hi! How can I help you today?"),
            message("user", "Where are my hiking boots? The order is #LL21743."),
            tool_call("get_order_details", r##"{"order_id": "#LL21743"}"##),
            message(
                "tool",
                r#"{"status": "shipped", "carrier": "UPS", "tracking": "PW5005336661"}"#,
            ),
            message(
                "assistant",
                "Your boots have shipped with UPS; the tracking number is PW5005336661.",
            ),
            message("user", "Great, thanks!"),
        ],
    )
}

/// Answers without looking anything up.
fn hasty() -> StoredConversation {
    conversation(
        2,
        vec![
            message("assistant", "Hi! How can I help you today?"),
            message("user", "Where are my hiking boots?"),
            message("assistant", "They are on the way."),
        ],
    )
}

fn scenario() -> Scenario {
    Scenario {
        id: "tracking".into(),
        description: String::new(),
        difficulty: None,
        tags: Vec::new(),
        user: UserScenario {
            reason_for_contact: "You want to know where your hiking boots are.".into(),
            known_info: "The order id is #LL21743.".into(),
            unknown_info: "You do not know the tracking number.".into(),
            task_instructions: "Ask for the tracking number; thank the agent and stop.".into(),
            turns: Vec::new(),
            opening: None,
        },
        initial_state: serde_json::Value::Null,
        evaluation: Criteria {
            expected_answer: Some("PW5005336661".into()),
            nl_assertions: vec![
                "The agent gives the tracking number PW5005336661.".into(),
                "The agent offers a discount voucher.".into(),
            ],
            ..Criteria::default()
        },
        prelude: Vec::new(),
        tools: None,
        probe: None,
    }
}

#[tokio::test]
async fn every_builtin_judge_gives_a_verdict_in_its_format() {
    let server = common::mock(MockConfig::default()).await;
    let model = endpoint(&server, "mock-judge");
    let (good, other, s) = (thorough(), hasty(), scenario());
    let persona = sparring::persona::ResolvedPersona {
        persona: sparring::persona::Persona {
            id: "theo".into(),
            name: "Theo Lindqvist".into(),
            background: "A hiker.".into(),
            traits: Vec::new(),
            speaking_style: "Brief.".into(),
            language: "English".into(),
            knobs: BTreeMap::new(),
            attributes: Default::default(),
        },
        resolved_knobs: BTreeMap::new(),
    };
    let inputs = JudgeInputs {
        other: Some(Other::Conversation(&other)),
        scenario: Some(&s),
        persona: Some(&persona),
        domain_policy: Some("Confirm before any change."),
        ..JudgeInputs::new(&good)
    };

    let helpful = run(&judge(Builtin::Helpfulness), &model, &inputs, &[])
        .await
        .unwrap();
    assert_eq!(helpful.outcome.status, JudgeStatus::Ok);
    let score = helpful.outcome.score().unwrap();
    assert!((1.0..=10.0).contains(&score), "{score}");
    let hasty_score = run(
        &judge(Builtin::Helpfulness),
        &model,
        &JudgeInputs::new(&other),
        &[],
    )
    .await
    .unwrap()
    .outcome
    .score()
    .unwrap();
    assert!(hasty_score < score, "{hasty_score} vs {score}");

    let pairwise = run(&judge(Builtin::PairwisePreference), &model, &inputs, &[])
        .await
        .unwrap();
    assert_eq!(
        pairwise.outcome.verdict,
        Some(Verdict::Preference {
            preference: Preference::A
        })
    );
    assert_eq!(pairwise.outcome.consistent, Some(true));

    let equivalence = run(&judge(Builtin::Equivalence), &model, &inputs, &[])
        .await
        .unwrap();
    assert_eq!(
        equivalence.outcome.verdict,
        Some(Verdict::Equivalence { equal: true })
    );
    assert_eq!(equivalence.made.len(), 2, "equal, so the swapped call too");
    let hasty_inputs = JudgeInputs {
        scenario: Some(&s),
        ..JudgeInputs::new(&other)
    };
    let not_equal = run(&judge(Builtin::Equivalence), &model, &hasty_inputs, &[])
        .await
        .unwrap();
    assert_eq!(
        not_equal.outcome.verdict,
        Some(Verdict::Equivalence { equal: false })
    );
    assert_eq!(not_equal.made.len(), 1, "not equal: no swapped call");

    let assertions = run(&judge(Builtin::Assertions), &model, &inputs, &[])
        .await
        .unwrap();
    assert_eq!(
        assertions.outcome.verdict,
        Some(Verdict::Assertions {
            met: vec![true, false]
        })
    );

    let fidelity = run(&judge(Builtin::UserFidelity), &model, &inputs, &[])
        .await
        .unwrap();
    assert_eq!(fidelity.outcome.score(), Some(1.0));
    assert!(!fidelity.outcome.flagged());

    let policy = run(&judge(Builtin::PolicyAdherence), &model, &inputs, &[])
        .await
        .unwrap();
    assert_eq!(policy.outcome.score(), Some(1.0));
}

#[tokio::test]
async fn the_swap_check_turns_a_position_biased_judges_verdicts_into_ties() {
    let server = common::mock(MockConfig::default()).await;
    let model = endpoint(&server, "mock-judge+biased");
    let (a, b) = (thorough(), hasty());
    // B is the worse conversation, shown first in order ba: the biased judge picks it.
    let inputs = JudgeInputs {
        other: Some(Other::Conversation(&b)),
        ..JudgeInputs::new(&a)
    };
    let checked = run(&judge(Builtin::PairwisePreference), &model, &inputs, &[])
        .await
        .unwrap();
    assert_eq!(checked.outcome.status, JudgeStatus::Ok);
    assert_eq!(
        checked.outcome.verdict,
        Some(Verdict::Preference {
            preference: Preference::Tie
        })
    );
    assert_eq!(checked.outcome.consistent, Some(false));
    let picks: Vec<Preference> = checked
        .calls()
        .iter()
        .filter_map(|c| c.parsed.as_ref().and_then(Verdict::preference))
        .collect();
    assert_eq!(first_position_rate(&picks), Some(1.0), "always the first");

    let mut unchecked = judge(Builtin::PairwisePreference);
    unchecked.swap_check = false;
    let once = run(&unchecked, &model, &inputs, &[]).await.unwrap();
    assert_eq!(
        once.outcome.verdict,
        Some(Verdict::Preference {
            preference: Preference::A
        })
    );
    assert_eq!(once.outcome.consistent, None);
    assert_eq!(once.made.len(), 1);
    assert_eq!(once.made[0].order, Order::Ab);
}

#[tokio::test]
async fn an_unparseable_reply_is_status_unparseable_and_a_retry_can_succeed() {
    let server = common::mock(MockConfig::default()).await;
    let c = thorough();
    let inputs = JudgeInputs::new(&c);
    let garbled = run(
        &judge(Builtin::Helpfulness),
        &endpoint(&server, "mock-judge+garbled"),
        &inputs,
        &[],
    )
    .await
    .unwrap();
    assert_eq!(garbled.outcome.status, JudgeStatus::Unparseable);
    assert_eq!(garbled.outcome.score(), None, "not a score, not a zero");
    assert_eq!(garbled.made[0].status, JudgeStatus::Unparseable);
    assert!(!garbled.made[0].raw_output.is_empty(), "the output is kept");

    let model = endpoint(&server, "mock-judge+garbled-once");
    let first = run(&judge(Builtin::Helpfulness), &model, &inputs, &[])
        .await
        .unwrap();
    assert_eq!(first.outcome.status, JudgeStatus::Unparseable);
    let retry = run(&judge(Builtin::Helpfulness), &model, &inputs, &first.made)
        .await
        .unwrap();
    assert_eq!(retry.outcome.status, JudgeStatus::Ok);
    assert_eq!(retry.made.len(), 1, "the unparseable call was made again");
}

#[tokio::test]
async fn a_failed_call_is_status_failed_never_a_verdict() {
    let server = common::mock(MockConfig::default()).await;
    let c = thorough();
    let b = hasty();
    let inputs = JudgeInputs {
        other: Some(Other::Conversation(&b)),
        ..JudgeInputs::new(&c)
    };
    // A 200 with a body that is not JSON, and no retries.
    let broken = run(
        &judge(Builtin::PairwisePreference),
        &endpoint(&server, "mock-judge+malformed"),
        &inputs,
        &[],
    )
    .await
    .unwrap();
    assert_eq!(broken.outcome.status, JudgeStatus::Failed);
    assert_eq!(broken.outcome.verdict, None);
    assert!(broken.made.iter().all(|c| c.status == JudgeStatus::Failed));
    let error = broken.made[0].error.as_deref().unwrap();
    assert!(error.starts_with("malformed_response"), "{error}");

    // Nothing listens on port 1.
    let config = endpoint_config("judge", "http://127.0.0.1:1/v1", "mock-judge");
    let unreachable = Endpoint::new(&config, "http://127.0.0.1:1/v1").unwrap();
    let down = run(
        &judge(Builtin::Helpfulness),
        &unreachable,
        &JudgeInputs::new(&c),
        &[],
    )
    .await
    .unwrap();
    assert_eq!(down.outcome.status, JudgeStatus::Failed);
    assert!(down
        .outcome
        .reason
        .as_deref()
        .unwrap()
        .starts_with("connection"));
}

#[tokio::test]
async fn calls_passed_back_as_the_cache_are_not_made_again() {
    let server = common::mock(MockConfig::default()).await;
    let model = endpoint(&server, "mock-judge");
    let (a, b) = (thorough(), hasty());
    let inputs = JudgeInputs {
        other: Some(Other::Conversation(&b)),
        ..JudgeInputs::new(&a)
    };
    let mut j = judge(Builtin::PairwisePreference);
    j.samples = 3;
    let first = run(&j, &model, &inputs, &[]).await.unwrap();
    assert_eq!(first.made.len(), 6, "3 samples in each of 2 orders");
    assert_eq!(server.stats().requests, 6);

    let second = run(&j, &model, &inputs, &first.made).await.unwrap();
    assert!(second.made.is_empty());
    assert_eq!(second.reused.len(), 6);
    assert_eq!(server.stats().requests, 6, "no new requests");
    assert_eq!(second.outcome, first.outcome);
}
