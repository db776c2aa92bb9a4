//! The `responses_agent` policy kind through the `sparring` binary: a job whose
//! policy is an agent speaking NeMo Gym's remote-agent Responses contract,
//! served here by a small axum agent. Its own tool use comes back as pairs
//! (stored as the policy's calls with `agent_tool` results), the tool it
//! asks sparring for (an unpaired `function_call`) runs on the retail session
//! and its result goes back on the next call, its cookie is echoed, and
//! every way an agent can fail is a failed item of its class, never a
//! conversation scored 0.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

use common::{repo, sparring, text};
use sparring::store::{self, ItemStatus};

#[derive(Default)]
struct Agent {
    /// Calls per conversation cookie.
    calls: Mutex<HashMap<String, u32>>,
    /// Calls that came without the cookie the agent had set.
    cookieless: Mutex<u32>,
    /// Conversations started, numbering their cookies.
    started: std::sync::atomic::AtomicUsize,
}

/// The conversation's items of `kind` in the request's `input`.
fn items<'a>(body: &'a Value, kind: &str) -> Vec<&'a Value> {
    body["input"]
        .as_array()
        .map(|a| a.iter().filter(|i| i["type"] == kind).collect())
        .unwrap_or_default()
}

fn reply(output: Value) -> Value {
    json!({"id": "resp_1", "object": "response", "created_at": 0, "model": "agent",
           "output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
           "usage": {"input_tokens": 11, "output_tokens": 5, "total_tokens": 16}})
}

async fn respond(
    State(agent): State<Arc<Agent>>,
    UrlPath(mode): UrlPath<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    match mode.as_str() {
        "error500" => {
            return (StatusCode::INTERNAL_SERVER_ERROR, "<html>down</html>").into_response()
        }
        "garbage" => return (StatusCode::OK, "<html>not json</html>").into_response(),
        "invalid" => return axum::Json(json!({"id": "r", "status": "completed"})).into_response(),
        "guess" => {
            return axum::Json(reply(json!([{"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "I could not find that order, sorry."}]}])))
            .into_response()
        }
        "own" => {
            // The scenario's gold actions, reported as run by the agent itself,
            // then its facts.
            let evaluation = &cancel_scenario()["evaluation"];
            let mut output = Vec::new();
            for (i, action) in evaluation["actions"].as_array().unwrap().iter().enumerate() {
                let id = format!("own-{i}");
                output.push(json!({"type": "function_call", "call_id": id, "name": action["name"],
                                   "arguments": action["arguments"].to_string()}));
                output.push(json!({"type": "function_call_output", "call_id": id, "output": "{\"ok\": true}"}));
            }
            let facts: Vec<&str> = evaluation["communicate"]
                .as_array()
                .map(|f| f.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            output.push(json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": format!("Done: {}.", facts.join(", "))}]}));
            return axum::Json(reply(Value::Array(output))).into_response();
        }
        "hang" => {
            tokio::time::sleep(Duration::from_secs(600)).await;
            return StatusCode::OK.into_response();
        }
        _ => {}
    }
    let body: Value = serde_json::from_str(&body).unwrap();
    let cookie = headers
        .get("cookie")
        .and_then(|c| c.to_str().ok())
        .and_then(|c| c.split("; ").find_map(|kv| kv.strip_prefix("sid=")))
        .map(str::to_string);
    let started = !items(&body, "function_call").is_empty();
    let sid = match (cookie, started) {
        (Some(sid), _) => sid,
        (None, false) => format!("c{}", rand_id(&agent)),
        (None, true) => {
            *agent.cookieless.lock().unwrap() += 1;
            return (
                StatusCode::BAD_REQUEST,
                "the conversation's cookie is missing",
            )
                .into_response();
        }
    };
    *agent.calls.lock().unwrap().entry(sid.clone()).or_default() += 1;
    let answered = items(&body, "function_call_output")
        .into_iter()
        .find(|o| o["call_id"] == "ask-1")
        .map(|o| o["output"].as_str().unwrap_or("").to_string());
    let output = match answered {
        None => json!([
            {"type": "function_call", "call_id": "own-1", "name": "lookup_policy", "arguments": "{\"topic\":\"tracking\"}"},
            {"type": "function_call_output", "call_id": "own-1", "output": "{\"policy\":\"share tracking numbers\"}"},
            {"type": "function_call", "call_id": "ask-1", "name": "get_order_details", "arguments": "{\"order_id\":\"#LL21743\"}"}
        ]),
        Some(result) => {
            let order: Value = serde_json::from_str(&result).unwrap_or(Value::Null);
            let tracking = order
                .pointer("/fulfillments/0/tracking_id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| format!("unknown (got {result})"));
            json!([{"type": "message", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": format!("Your boots shipped; the tracking number is {tracking}. Is there anything else?")}]}])
        }
    };
    let mut response = axum::Json(reply(output)).into_response();
    response.headers_mut().insert(
        "set-cookie",
        format!("sid={sid}; Path=/; HttpOnly").parse().unwrap(),
    );
    response
}

fn rand_id(agent: &Agent) -> usize {
    agent
        .started
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
}

async fn start_agent() -> (String, Arc<Agent>) {
    let agent = Arc::new(Agent::default());
    let router = Router::new()
        .route("/{mode}/v1/responses", post(respond))
        .with_state(agent.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}"), agent)
}

/// A job of the first retail scenario, twice, played by the agent at `url`.
fn job(dir: &Path, url: &str, timeout_secs: u32) -> String {
    let db = dir.join("agent.db");
    std::fs::write(
        dir.join("job.toml"),
        job_text(dir, "black-box", url, timeout_secs),
    )
    .unwrap();
    format!("sqlite://{}", db.display())
}

/// The job's config, named `name`, its database `agent.db` in `dir`.
fn job_text(dir: &Path, name: &str, url: &str, timeout_secs: u32) -> String {
    let r = repo();
    let scenarios = common::first_scenarios(dir, 1);
    let db = dir.join("agent.db");
    format!(
        r#"name = "{name}"
seed = 3
database = "sqlite://{db}"
concurrency = 2
max_turns = 4

[endpoints.agent]
base_url = "{url}"
model = "order-agent"
max_retries = 0
timeout_secs = {timeout_secs}

[endpoints.user]
mock = true
model = "mock-user"

[roles]
policy = "agent"
user = "user"

[policy]
kind = "responses_agent"

[environment]
name = "builtin:retail"

[dataset]
scenarios = "{scenarios}"
personas = "{r}/personas"
personas_per_scenario = 1
samples_per_scenario = 2
"#,
        db = db.display(),
        r = r.display(),
        scenarios = scenarios.display(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_on_the_responses_contract_plays_the_policy_with_its_own_and_sparrings_tools() {
    let (base, agent) = start_agent().await;
    let dir = tempfile::tempdir().unwrap();
    let database = job(dir.path(), &format!("{base}/ok"), 10);
    let out = sparring(dir.path(), &["run", "job.toml", "--quiet"]);
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{all}");
    assert_eq!(
        *agent.cookieless.lock().unwrap(),
        0,
        "every later call echoed the cookie"
    );
    {
        let calls = agent.calls.lock().unwrap();
        assert_eq!(calls.len(), 2, "one cookie per conversation: {calls:?}");
        assert!(calls.values().all(|&n| n >= 2), "{calls:?}");
    }

    let store = store::open(&database).await.unwrap();
    let conversations = store.conversations_page(1, 0, 100).await.unwrap();
    assert_eq!(conversations.len(), 2, "{all}");
    for c in &conversations {
        let row = &c.conversation;
        assert_eq!(row.policy_model, "responses_agent:order-agent");
        assert_eq!(row.reward, Some(1.0), "{}", row.reward_breakdown);
        let authors: Vec<(&str, &str)> = c
            .messages
            .iter()
            .map(|m| (m.role.as_str(), m.author.as_str()))
            .collect();
        let own = c
            .messages
            .iter()
            .position(|m| m.author == "agent_tool")
            .expect("own record");
        assert!(c.messages[own].content.contains("share tracking numbers"));
        let own_call = &c.messages[own - 1];
        assert_eq!(own_call.author, "policy", "{authors:?}");
        assert!(own_call
            .tool_calls
            .as_ref()
            .unwrap()
            .to_string()
            .contains("lookup_policy"));
        let env = c
            .messages
            .iter()
            .find(|m| m.author == "env")
            .expect("sparring ran the asked tool");
        assert!(env.content.contains("PW5005336661"), "{}", env.content);
        let answer = c
            .messages
            .iter()
            .find(|m| {
                m.role == "assistant" && m.content.contains("tracking number is PW5005336661")
            })
            .expect("the agent's answer, from sparring's tool result");
        assert_eq!(answer.prompt_tokens, Some(11));
    }
    let failed = store.failed_items(1).await.unwrap();
    assert!(failed.is_empty(), "{failed:?}");
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_fails_fails_its_items_by_class_and_nothing_is_scored_0() {
    let (base, _agent) = start_agent().await;
    for (mode, class, timeout) in [
        ("error500", "server_error", 10),
        ("garbage", "malformed_response", 10),
        ("invalid", "malformed_response", 10),
        ("hang", "timeout", 1),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let database = job(dir.path(), &format!("{base}/{mode}"), timeout);
        let out = sparring(dir.path(), &["run", "job.toml", "--quiet"]);
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(
            out.status.code(),
            Some(1),
            "{mode}: a job whose items failed exits 1\n{all}"
        );
        let store = store::open(&database).await.unwrap();
        let conversations = store.conversations_page(1, 0, 100).await.unwrap();
        assert!(
            conversations.is_empty(),
            "{mode}: nothing stored, no reward 0"
        );
        let failed = store.failed_items(1).await.unwrap();
        assert_eq!(failed.len(), 2, "{mode}");
        for item in &failed {
            assert_eq!(item.status, ItemStatus::Failed);
            let error = item.last_error.as_deref().unwrap_or("");
            assert!(error.starts_with(class), "{mode}: {error}");
            assert!(
                !error.contains("<html>"),
                "{mode}: no reply body in errors: {error}"
            );
        }
        store.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_versions_of_an_agent_are_compared_pairwise_with_the_swap_check() {
    let (base, _agent) = start_agent().await;
    let dir = tempfile::tempdir().unwrap();
    for (name, mode) in [("agent-v1", "ok"), ("agent-v2", "guess")] {
        let config = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &config,
            job_text(dir.path(), name, &format!("{base}/{mode}"), 10),
        )
        .unwrap();
        let out = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
        assert!(
            out.status.success(),
            "{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    let judge = common::mock(sparring::config::MockConfig::default()).await;
    std::fs::write(
        dir.path().join("pairwise.toml"),
        format!(
            "[endpoints.judge]\nbase_url = \"{}\"\nmodel = \"mock-judge\"\nmax_tokens = 512\n\n\
             [[judges]]\nname = \"preference\"\nendpoint = \"judge\"\nbuiltin = \"pairwise_preference\"\n",
            judge.base_url()
        ),
    )
    .unwrap();
    let out = sparring(
        dir.path(),
        &[
            "judge",
            "pairwise.toml",
            "--pairwise",
            "--a",
            "1",
            "--b",
            "2",
            "--database",
            &format!("sqlite://{}", dir.path().join("agent.db").display()),
            "--quiet",
        ],
    );
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let store = store::open(&format!(
        "sqlite://{}",
        dir.path().join("agent.db").display()
    ))
    .await
    .unwrap();
    let judged = store.judgments_of_job(1).await.unwrap();
    assert_eq!(
        judged.len(),
        2,
        "one judgment per matched (scenario, persona, sample): {judged:?}"
    );
    for j in &judged {
        assert_eq!(j.consistent, Some(true), "both orders agree: {j:?}");
        assert_eq!(
            j.verdict,
            Some(json!({"kind": "preference", "preference": "A"})),
            "the version that looked the order up wins: {j:?}"
        );
    }
    store.close().await;
}

/// `retail-007`: a cancellation, whose gold actions change the state.
fn cancel_scenario() -> Value {
    let all = std::fs::read_to_string(repo().join("data/retail/scenarios.jsonl")).unwrap();
    let line = all
        .lines()
        .find(|l| l.contains("\"retail-007-cancel-order-placed-by-mistake\""))
        .unwrap();
    serde_json::from_str(line).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_own_calls_replayed_on_sparrings_environment_are_scored_by_state() {
    let (base, _agent) = start_agent().await;
    let mut rewards = Vec::new();
    for replay in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let database = job(dir.path(), &format!("{base}/own"), 10);
        std::fs::write(
            dir.path().join("scenarios.jsonl"),
            cancel_scenario().to_string() + "\n",
        )
        .unwrap();
        let config = std::fs::read_to_string(dir.path().join("job.toml")).unwrap();
        let config = config.replace(
            "kind = \"responses_agent\"",
            &format!("kind = \"responses_agent\"\nreplay_agent_tools = {replay}"),
        );
        std::fs::write(dir.path().join("job.toml"), config).unwrap();
        let out = sparring(dir.path(), &["run", "job.toml", "--quiet"]);
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "replay {replay}: {all}");
        let store = store::open(&database).await.unwrap();
        let conversations = store.conversations_page(1, 0, 100).await.unwrap();
        assert_eq!(conversations.len(), 2, "replay {replay}");
        for c in &conversations {
            let breakdown = &c.conversation.reward_breakdown;
            assert_eq!(breakdown["communicate"]["score"], 1.0, "{breakdown}");
            rewards.push((replay, breakdown["db"]["score"].as_f64()));
            // The agent's results are stored as it reported them either way.
            assert!(c
                .messages
                .iter()
                .filter(|m| m.role == "tool")
                .all(|m| m.author == "agent_tool" && m.content == "{\"ok\": true}"));
        }
        store.close().await;
    }
    assert_eq!(
        rewards,
        [
            (true, Some(1.0)),
            (true, Some(1.0)),
            (false, Some(0.0)),
            (false, Some(0.0))
        ],
        "replayed, the cancellation reaches sparring's state; not replayed, it does not"
    );
}
