//! Probes through the agent frameworks (issue 42): the orders desk's agents
//! of `tests/agents/`, built with the OpenAI Agents SDK (`responses_agent`),
//! the A2A SDK (`a2a`), LangGraph under `langgraph dev` (`http`) and, a
//! framework the issue does not name, pydantic-ai behind fasta2a (`a2a`),
//! each meet three pushing users (`tests/agents/data/probes.jsonl`: another
//! customer's order to cancel, pressed over several turns). Their model is
//! sparring's mock: asked as `mock-policy+perfect` it holds every line, as
//! `mock-policy+wrong` it gives in. The `held` component reads the agent's
//! own `cancel_order` calls from its trace, so the first must score 1 and
//! the second 0, with the user turn it broke at. Skipped without
//! `SPARRING_AGENT_FRAMEWORKS_PYTHON`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agent_frameworks::{orders_mock_with, start_agent_with_model, AgentKind};
use crate::black_box_http::LANGGRAPH_POLICY;
use crate::common::{repo, sparring, text};
use crate::frameworks_play_the_orders_desk::{job_of, user_opens};

fn probes_path() -> PathBuf {
    repo().join("tests/agents/data/probes.jsonl")
}

/// Job 1's probe cell, after running `config`.
async fn run_and_break_down(dir: &Path, config: &Path, db: &str, log: &str) -> Value {
    let out = sparring(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    if !out.status.success() {
        let pool = sqlx::SqlitePool::connect(db).await.unwrap();
        let errors: Vec<(Option<String>,)> = sqlx::query_as("SELECT last_error FROM items")
            .fetch_all(&pool)
            .await
            .unwrap();
        panic!(
            "{}\n{}\nitems: {errors:#?}\nthe agent's log:\n{log}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    let stats = sparring(
        dir,
        &[
            "stats",
            "--job",
            "1",
            "--by",
            "probe.family",
            "--json",
            "--database",
            db,
        ],
    );
    assert!(stats.status.success(), "{}", text(&stats.stderr));
    let report: Value = serde_json::from_slice(&stats.stdout).unwrap();
    let cells = report["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 1, "{report}");
    assert_eq!(cells[0]["value"], "policy_pressure");
    cells[0]["probe"].clone()
}

/// `kind` with its `[policy.KIND]` table, against a perfect and a wrong model.
async fn holds_and_breaks(agent: AgentKind, kind: &str, table: &str, label: &str) {
    let probes = sparring::persona::load::load_scenarios(&probes_path())
        .unwrap_or_else(|problems| panic!("{problems:?}"));
    assert!(probes
        .iter()
        .all(|p| !p.probe.as_ref().unwrap().escalation.is_empty()));
    let mock = orders_mock_with(probes).await;
    for (model, held) in [("mock-policy+perfect", 1.0), ("mock-policy+wrong", 0.0)] {
        let Some(running) = start_agent_with_model(agent, &mock.base_url(), model).await else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let (config, db) = job_of(
            dir.path(),
            running.base_url(),
            &mock.base_url(),
            kind,
            table,
            &probes_path(),
        );
        user_opens(&config);
        let probe = run_and_break_down(dir.path(), &config, &db, &running.log()).await;
        assert_eq!(probe["probes"], 3, "{label} {model}: {probe}");
        assert_eq!(probe["decided"], 3, "{label} {model}: {probe}");
        assert_eq!(
            probe["hold_rate"]["mean"].as_f64(),
            Some(held),
            "{label} {model}: {probe}\nthe agent's log:\n{}",
            running.log()
        );
        let flips: u64 = probe["turn_of_flip"]
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(
            flips,
            if held == 0.0 { 3 } else { 0 },
            "{label} {model}: {probe}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_agents_sdk_holds_the_line_with_a_perfect_model_and_breaks_with_a_wrong_one() {
    holds_and_breaks(
        AgentKind::OpenAiAgents,
        "responses_agent",
        "send_instructions = false",
        "openai-agents",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_a2a_sdk_agent_holds_and_breaks_the_line_as_its_model_does() {
    holds_and_breaks(AgentKind::A2a, "a2a", "", "a2a-sdk").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_langgraph_agent_holds_and_breaks_the_line_as_its_model_does() {
    let table = LANGGRAPH_POLICY
        .split_once("[policy.http]\n")
        .unwrap()
        .1
        .replace(
            "\"assistant_id\": \"agent\"",
            "\"assistant_id\": \"orders\"",
        );
    holds_and_breaks(AgentKind::LangGraph, "http", &table, "langgraph").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pydantic_ai_behind_fasta2a_holds_and_breaks_the_line_as_its_model_does() {
    holds_and_breaks(AgentKind::PydanticAi, "a2a", "", "pydantic-ai").await;
}
