//! Agents built with real frameworks as the policy, through the `sparring`
//! binary: the OpenAI Agents SDK agent of `tests/agents/` served on NeMo
//! Gym's remote-agent Responses contract (`responses_agent`) plays the orders
//! desk's scenarios against the mock user, its own tool use verified by
//! trace; and `faulty_agent.py` fails in each way an agent can, each a
//! failed item of its class with nothing stored as a reward of 0. The `a2a`
//! and `http` kinds have their own files.

use crate::agent_frameworks::{orders_mock, orders_scenarios_path, start_agent, AgentKind};
use crate::common::{repo, sparring, text};

use std::path::Path;

use sparring::store::{self, ItemStatus};

/// A job of the orders desk's scenarios whose policy is the agent at
/// `agent_url`, the user the mock at `mock_url`, in `dir`; its database.
fn orders_job(dir: &Path, agent_url: &str, mock_url: &str, timeout_secs: u32) -> String {
    let db = dir.join("agents.db");
    let toml = format!(
        r#"name = "orders-agent"
seed = 5
database = "sqlite://{db}"
concurrency = 3
max_turns = 8

[endpoints.agent]
base_url = "{agent_url}"
model = "orders-agent"
max_retries = 0
timeout_secs = {timeout_secs}

[endpoints.user]
base_url = "{mock_url}"
model = "mock-user"
max_retries = 0

[roles]
policy = "agent"
user = "user"

[user_simulator]
opens = "user"

[policy]
kind = "responses_agent"

[policy.responses_agent]
send_instructions = false

[environment]
name = "builtin:chat"

[dataset]
scenarios = "{scenarios}"
personas = "{personas}"
personas_per_scenario = 1
"#,
        db = db.display(),
        scenarios = orders_scenarios_path().display(),
        personas = repo().join("personas").display(),
    );
    std::fs::write(dir.join("job.toml"), toml).unwrap();
    format!("sqlite://{}", db.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_agents_sdk_agent_plays_the_orders_desk_verified_by_its_trace() {
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::OpenAiAgents, &mock.base_url()).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let database = orders_job(dir.path(), agent.base_url(), &mock.base_url(), 30);
    let out = sparring(dir.path(), &["run", "job.toml", "--quiet"]);
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    if !out.status.success() {
        let store = store::open(&database).await.unwrap();
        let failed = store.failed_items(1).await.unwrap();
        panic!("{all}\nfailed: {failed:?}\nagent log:\n{}", agent.log());
    }

    let store = store::open(&database).await.unwrap();
    let conversations = store.conversations_page(1, 0, 100).await.unwrap();
    assert_eq!(conversations.len(), 6, "{all}");
    for c in &conversations {
        let row = &c.conversation;
        assert_eq!(row.policy_model, "responses_agent:orders-agent");
        let breakdown = &row.reward_breakdown;
        assert_eq!(row.reward, Some(1.0), "{}: {breakdown}", row.scenario_id);
        assert_eq!(breakdown["actions"]["score"], 1.0, "{breakdown}");
        assert_eq!(breakdown["communicate"]["score"], 1.0, "{breakdown}");
        // The agent ran its tools itself: each call is the policy's, each
        // result the agent's, none sparring's.
        let results: Vec<_> = c.messages.iter().filter(|m| m.role == "tool").collect();
        assert!(!results.is_empty(), "{}", row.scenario_id);
        assert!(
            results.iter().all(|m| m.author == "agent_tool"),
            "{:?}",
            c.messages
        );
        let scenario_calls: usize = c
            .messages
            .iter()
            .filter_map(|m| m.tool_calls.as_ref())
            .map(|calls| calls.as_array().map_or(0, Vec::len))
            .sum();
        assert_eq!(scenario_calls, results.len(), "every call has its result");
        assert!(c
            .messages
            .iter()
            .any(|m| m.role == "user" && m.author == "user"));
    }
    assert!(store.failed_items(1).await.unwrap().is_empty());
    store.close().await;

    // The trace exports like any tool use.
    let out = sparring(
        dir.path(),
        &[
            "export",
            "--job",
            "1",
            "--format",
            "openai",
            "--out",
            "out.jsonl",
            "--database",
            &database,
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert_eq!(rows.lines().count(), 6);
    assert!(
        rows.contains("get_order_status"),
        "the agent's calls are in the rows"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_hangs_errs_talks_nonsense_or_loses_the_session_fails_its_items() {
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::Faulty, &mock.base_url()).await else {
        return;
    };
    for (mode, classes) in [
        ("hang", &["timeout"][..]),
        ("error500", &["server_error"][..]),
        ("garbage", &["malformed_response"][..]),
        ("garbage-json", &["malformed_response"][..]),
        ("close", &["connection"][..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("{}/{mode}", agent.base_url());
        let database = orders_job(dir.path(), &url, &mock.base_url(), 2);
        let out = sparring(dir.path(), &["run", "job.toml", "--quiet"]);
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{mode}: {all}");
        let store = store::open(&database).await.unwrap();
        let stored = store.conversations_page(1, 0, 100).await.unwrap();
        assert!(
            stored.is_empty(),
            "{mode}: no conversation, so no reward of 0"
        );
        let failed = store.failed_items(1).await.unwrap();
        assert_eq!(failed.len(), 6, "{mode}");
        for item in &failed {
            assert_eq!(item.status, ItemStatus::Failed);
            let error = item.last_error.as_deref().unwrap_or("");
            assert!(
                classes.iter().any(|c| error.starts_with(c)),
                "{mode}: {error}"
            );
            assert!(!error.contains("<html>"), "{mode}: {error}");
        }
        store.close().await;
    }
}
