//! Simulated tools end to end: a `simulated` environment's tools played by
//! the mock tools model over real HTTP. A contradiction the model is told to
//! make (`+contradict`: a repeated read answered differently, on some seeds)
//! is caught and asked for again once, so the item completes with
//! consistent results; a model that keeps contradicting itself fails the
//! item as `env_error`, never a tool result the policy sees.

use std::sync::Arc;

use crate::common::repo;
use sparring::jobs::{self, RunOptions, RunReport};
use sparring::mock_llm::InProcessMock;
use sparring::store::{self, Store, StoredConversation};

/// Only `sim-002-double-check` (the agent reads the same order twice), in `dir`.
fn double_check(dir: &std::path::Path) -> std::path::PathBuf {
    let all = std::fs::read_to_string(repo().join("data/simulated/scenarios.jsonl")).unwrap();
    let line = all
        .lines()
        .find(|l| l.contains("sim-002-double-check"))
        .unwrap();
    let path = dir.join("scenarios.jsonl");
    std::fs::write(&path, format!("{line}\n")).unwrap();
    path
}

async fn run(tools_model: &str) -> (tempfile::TempDir, Arc<dyn Store>, RunReport) {
    let dir = tempfile::tempdir().unwrap();
    let r = repo();
    let db = dir.path().join("sim.db");
    let text = format!(
        r#"name = "simulated"
seed = 3
database = "sqlite://{db}"
concurrency = 4
[endpoints.policy]
mock = true
model = "mock-policy+perfect"
[endpoints.user]
mock = true
model = "mock-user"
[endpoints.tools]
mock = true
model = "{tools_model}"
[roles]
policy = "policy"
user = "user"
tools = "tools"
[user_simulator]
template = "{r}/prompts/user_simulator.tera"
[policy]
template = "{r}/prompts/policies/default.tera"
[environment]
kind = "simulated"
tools = "{r}/data/simulated/tools.json"
[dataset]
scenarios = "{scenarios}"
personas = "{r}/personas"
personas_per_scenario = 1
samples_per_scenario = 10
"#,
        db = db.display(),
        r = r.display(),
        scenarios = double_check(dir.path()).display(),
    );
    let path = dir.path().join("job.toml");
    std::fs::write(&path, text).unwrap();
    let job = sparring::config::load(&path).unwrap_or_else(|p| panic!("{p:?}"));
    let store = store::open(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let ctx = jobs::Context::new(store.clone(), Some(Arc::new(InProcessMock)));
    let report = jobs::run(&ctx, &job, &RunOptions::default()).await.unwrap();
    (dir, store, report)
}

fn tool_results(c: &StoredConversation) -> Vec<serde_json::Value> {
    c.messages
        .iter()
        .filter(|m| m.role == "tool")
        .map(|m| serde_json::from_str(&m.content).unwrap())
        .collect()
}

fn tools_model_calls(c: &StoredConversation) -> i64 {
    c.usage
        .iter()
        .find(|u| u.role == "env")
        .map_or(0, |u| u.calls)
}

#[tokio::test]
async fn a_contradiction_the_tools_model_makes_is_caught_and_retried_once() {
    let (_dir, store, report) = run("mock-tools+contradict").await;
    assert_eq!(report.counts.failed, 0, "{report:?}");
    let all = store
        .conversations_page(report.job.id, 0, 100)
        .await
        .unwrap();
    assert_eq!(all.len(), 10);
    let mut retried = 0;
    for c in &all {
        let results = tool_results(c);
        assert_eq!(results.len(), 2, "{}", c.conversation.item_key);
        assert_eq!(
            results[0], results[1],
            "the second read agrees with the first"
        );
        assert_eq!(
            results[0]["status"], "processing",
            "kept to the hidden facts"
        );
        assert_eq!(c.conversation.reward, Some(1.0));
        match tools_model_calls(c) {
            2 => {}
            3 => retried += 1,
            n => panic!("{} tools model calls for 2 tool calls", n),
        }
    }
    assert!(
        retried > 0 && retried < 10,
        "the mock contradicts on about half the seeds; {retried} of 10 were retried"
    );
}

#[tokio::test]
async fn a_tools_model_that_keeps_contradicting_itself_fails_the_item_as_env_error() {
    let (dir, store, report) = run("mock-tools+contradict-always").await;
    assert_eq!(report.counts.failed, 10, "{report:?}");
    assert_eq!(report.counts.done, 0);
    let none = store
        .conversations_page(report.job.id, 0, 100)
        .await
        .unwrap();
    assert!(
        none.is_empty(),
        "a failed item stores no conversation, so no reward"
    );
    let pool =
        sqlx::SqlitePool::connect(&format!("sqlite://{}", dir.path().join("sim.db").display()))
            .await
            .unwrap();
    let errors: Vec<(String,)> =
        sqlx::query_as("SELECT last_error FROM items WHERE status = 'failed'")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(errors.len(), 10);
    for (error,) in errors {
        assert!(error.starts_with("env_error"), "{error}");
        assert!(
            error.contains("the policy's call to 'get_order'"),
            "{error}"
        );
        assert!(error.contains("contradicts earlier call #1"), "{error}");
        assert!(error.contains("retried once"), "{error}");
    }
}

#[tokio::test]
async fn a_result_off_its_output_schema_is_retried_and_replaced() {
    let (_dir, store, report) = run("mock-tools+bad-output").await;
    assert_eq!(report.counts.failed, 0, "{report:?}");
    let all = store
        .conversations_page(report.job.id, 0, 100)
        .await
        .unwrap();
    assert!(
        all.iter().any(|c| tools_model_calls(c) == 3),
        "some seed was retried"
    );
    for c in &all {
        for result in tool_results(c) {
            assert!(result.is_object(), "{result}");
        }
    }
}
