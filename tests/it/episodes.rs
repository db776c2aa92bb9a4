//! Episodes end to end through the library: real HTTP to the mock model server,
//! a real SQLite file. Each test names the behaviour it pins down.

use crate::common;

use std::sync::Arc;

use common::{first_scenarios, write_job, JobSpec};
use sparring::jobs::{self, RunOptions, RunReport};
use sparring::mock_llm::InProcessMock;
use sparring::store::{self, Store, StoredConversation};

async fn run(spec: JobSpec) -> (tempfile::TempDir, Arc<dyn Store>, RunReport) {
    let dir = tempfile::tempdir().unwrap();
    let spec = JobSpec {
        scenarios: if spec.scenarios == JobSpec::default().scenarios {
            first_scenarios(dir.path(), 6)
        } else {
            spec.scenarios
        },
        ..spec
    };
    let (path, db) = write_job(dir.path(), &spec);
    let job = sparring::config::load(&path).unwrap_or_else(|p| panic!("{p:?}"));
    let (store, report) = run_job(&db, &job).await;
    (dir, store, report)
}

/// Run `job` in the store at `db` (opened once, as the CLI does) with the
/// in-process mock, without progress output.
async fn run_job(db: &str, job: &sparring::config::Job) -> (Arc<dyn Store>, RunReport) {
    let store = store::open(db).await.unwrap();
    let ctx = jobs::Context::new(store.clone(), Some(Arc::new(InProcessMock)));
    let report = jobs::run(&ctx, job, &RunOptions::default()).await.unwrap();
    (store, report)
}

async fn conversations(store: &dyn Store, job: i64) -> Vec<StoredConversation> {
    store.conversations_page(job, 0, 10_000).await.unwrap()
}

#[tokio::test]
async fn user_stop_token_ends_conversation_without_storing_the_token() {
    let (_dir, store, report) = run(JobSpec::default()).await;
    let all = conversations(store.as_ref(), report.job.id).await;
    assert_eq!(all.len(), 6);
    for c in &all {
        assert_eq!(
            c.conversation.termination, "user_stop",
            "{}",
            c.conversation.item_key
        );
        assert!(
            c.messages
                .iter()
                .filter(|m| m.role == "user")
                .all(|m| !m.content.contains("###STOP###")),
            "the stop token was stored"
        );
        let last_user = c.messages.iter().rev().find(|m| m.role == "user").unwrap();
        assert!(
            last_user.content.starts_with("No, that's everything"),
            "the text before the stop token is kept: {:?}",
            last_user.content
        );
        assert!(c.conversation.reward.is_some());
    }
}

#[tokio::test]
async fn max_turns_ends_the_conversation_and_it_is_still_scored() {
    let spec = JobSpec {
        max_turns: 1,
        ..JobSpec::default()
    };
    let (_dir, store, report) = run(spec).await;
    for c in conversations(store.as_ref(), report.job.id).await {
        assert_eq!(c.conversation.termination, "max_turns");
        assert_eq!(c.messages.iter().filter(|m| m.role == "user").count(), 1);
        assert!(
            c.conversation.reward.is_some(),
            "max_turns is the policy's outcome"
        );
    }
}

#[tokio::test]
async fn tool_errors_and_bad_arguments_go_back_to_the_policy_as_tool_output() {
    let spec = JobSpec {
        policy_model: "mock-policy+clumsy+perfect".into(),
        ..JobSpec::default()
    };
    let (_dir, store, report) = run(spec).await;
    let all = conversations(store.as_ref(), report.job.id).await;
    for c in &all {
        let tool = c
            .messages
            .iter()
            .find(|m| m.role == "tool")
            .expect("a tool result");
        assert!(tool.content.starts_with("Error"), "{}", tool.content);
        assert!(
            tool.content.to_lowercase().contains("json"),
            "names the problem: {}",
            tool.content
        );
        assert_eq!(tool.tool_call_id.as_deref(), Some("call_clumsy"));
        assert_eq!(
            c.conversation.termination, "user_stop",
            "the policy recovered"
        );
    }
    assert!(
        all.iter().any(|c| c.conversation.reward == Some(1.0)),
        "a perfect policy that recovers from its bad call can still earn the reward"
    );
}

#[tokio::test]
async fn a_rate_limit_with_retry_after_is_retried_once_and_honoured() {
    let spec = JobSpec {
        policy_model: "mock-policy+ratelimit-once".into(),
        ..JobSpec::default()
    };
    let started = std::time::Instant::now();
    let (_dir, store, report) = run(spec).await;
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(1),
        "Retry-After: 1 was not waited for"
    );
    assert_eq!(report.counts.failed, 0);
    assert_eq!(report.counts.done, 6);
    let policy_calls: i64 = conversations(store.as_ref(), report.job.id)
        .await
        .iter()
        .flat_map(|c| c.usage.iter())
        .filter(|u| u.role == "policy")
        .map(|u| u.calls)
        .sum();
    assert!(policy_calls > 6);
}

#[tokio::test]
async fn a_malformed_model_response_fails_the_item_and_is_never_a_zero_reward() {
    let spec = JobSpec {
        policy_model: "mock-policy+malformed".into(),
        max_retries: 1,
        ..JobSpec::default()
    };
    let (_dir, store, report) = run(spec).await;
    assert_eq!(report.counts.failed, 6);
    assert_eq!(report.counts.done, 0);
    assert!(conversations(store.as_ref(), report.job.id)
        .await
        .is_empty());
    assert_eq!(report.summary.mean_reward, None);
    let leased = store
        .lease_items(report.job.id, "probe", 10, 1000)
        .await
        .unwrap();
    assert!(leased.is_empty(), "failed items are not silently redone");
    assert_eq!(
        store.reset_failed_items(report.job.id).await.unwrap(),
        6,
        "but they are retryable"
    );
}

#[tokio::test]
async fn a_user_simulator_that_stays_empty_ends_with_user_error_and_no_reward() {
    let spec = JobSpec {
        user_model: "mock-user+empty".into(),
        ..JobSpec::default()
    };
    let (_dir, store, report) = run(spec).await;
    let all = conversations(store.as_ref(), report.job.id).await;
    assert_eq!(all.len(), 6);
    for c in &all {
        assert_eq!(c.conversation.termination, "user_error");
        assert_eq!(
            c.conversation.reward, None,
            "a broken simulator says nothing about the policy"
        );
        let user = c.usage.iter().find(|u| u.role == "user").unwrap();
        assert_eq!(user.calls, 2, "an empty message is retried once");
    }
}

#[tokio::test]
async fn rewards_vary_across_scenarios_and_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let spec = JobSpec {
        scenarios: common::repo().join("data/retail/scenarios.jsonl"),
        personas_per_scenario: 2,
        ..JobSpec::default()
    };
    let (_d, store, report) = {
        let s = spec;
        let (path, db) = write_job(dir.path(), &s);
        let job = sparring::config::load(&path).unwrap();
        let (store, r) = run_job(&db, &job).await;
        (dir, store, r)
    };
    let all = conversations(store.as_ref(), report.job.id).await;
    let rewards: Vec<f64> = all.iter().filter_map(|c| c.conversation.reward).collect();
    assert!(
        rewards.contains(&1.0) && rewards.contains(&0.0),
        "{rewards:?}"
    );
    let with_tools = all
        .iter()
        .filter(|c| c.messages.iter().any(|m| m.tool_calls.is_some()))
        .count();
    assert!(
        with_tools * 10 >= all.len() * 8,
        "most conversations call tools"
    );
}

// Regressions from running against a real llama.cpp server (issue 3).

#[tokio::test]
async fn a_user_who_keeps_talking_after_the_stop_token_is_cut_at_the_token() {
    let spec = JobSpec {
        user_model: "mock-user+stop-midtext".into(),
        ..JobSpec::default()
    };
    let (_dir, store, report) = run(spec).await;
    for c in conversations(store.as_ref(), report.job.id).await {
        assert_eq!(c.conversation.termination, "user_stop");
        let last_user = c.messages.iter().rev().find(|m| m.role == "user").unwrap();
        assert_eq!(last_user.content, "Perfect, thank you so much!");
        assert!(
            c.messages
                .iter()
                .all(|m| !m.content.contains("Agent: You're welcome")),
            "text after the token is dropped"
        );
    }
}

#[tokio::test]
async fn a_policy_that_returns_nothing_ends_with_policy_error_and_is_scored() {
    let spec = JobSpec {
        policy_model: "mock-policy+empty".into(),
        ..JobSpec::default()
    };
    let (_dir, store, report) = run(spec).await;
    for c in conversations(store.as_ref(), report.job.id).await {
        assert_eq!(c.conversation.termination, "policy_error");
        assert!(
            c.conversation.reward.is_some(),
            "an empty reply is the policy's failure"
        );
    }
}

#[tokio::test]
async fn a_scenario_with_reward_basis_none_is_generated_and_stores_no_reward() {
    let dir = tempfile::tempdir().unwrap();
    // chat-008 asks what the store's facts do not answer: nothing to score.
    let chat = std::fs::read_to_string(common::repo().join("data/chat/scenarios.jsonl")).unwrap();
    let lines: Vec<&str> = chat
        .lines()
        .filter(|l| l.contains("chat-008") || l.contains("chat-001"))
        .collect();
    assert!(
        lines[1].contains("\"reward_basis\": \"none\""),
        "{}",
        lines[1]
    );
    let scenarios = dir.path().join("chat.jsonl");
    std::fs::write(&scenarios, lines.join("\n") + "\n").unwrap();
    let spec = JobSpec {
        scenarios,
        ..JobSpec::default()
    };
    let (path, db) = write_job(dir.path(), &spec);
    std::fs::write(
        &path,
        std::fs::read_to_string(&path)
            .unwrap()
            .replace("builtin:retail", "builtin:chat"),
    )
    .unwrap();
    let job = sparring::config::load(&path).unwrap_or_else(|p| panic!("{p:?}"));
    let (store, report) = run_job(&db, &job).await;
    let all = conversations(store.as_ref(), report.job.id).await;
    assert_eq!(all.len(), 2);
    for c in &all {
        let unscored = c.conversation.scenario_id.starts_with("chat-008");
        assert_eq!(
            c.conversation.reward.is_none(),
            unscored,
            "{}: reward {:?}",
            c.conversation.scenario_id,
            c.conversation.reward
        );
    }
}
