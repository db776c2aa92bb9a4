//! `[policy] kind = "a2a"` end to end: `sparring run` (the binary, a SQLite
//! file) drives an A2A server as the policy while the mock plays the user.
//!
//! The server here is a small A2A agent over axum: JSON-RPC `message/send`
//! at `/`, its card at `/.well-known/agent-card.json`, a conversation per
//! `contextId` whose model is the mock policy (`mock-policy+perfect`, told
//! the scenario the conversation's opening names), running its own tools and
//! reporting them as an artifact named `tool_calls` (the shape of
//! `tests/agents/a2a_agent.py`, the a2a-sdk agent; as there, a task continued
//! over several messages answers with all its artifacts so far). It is strict about the
//! protocol: a message naming a context it never gave, or not continuing a
//! task it left `input-required`, is a JSON-RPC error, which fails the item.
//! Scenarios whose id starts with `fail-` make it fail in one way each.
//!
//! The last test drives the real thing, `tests/agents/a2a_agent.py` (a2a-sdk),
//! over the orders scenarios of `tests/agents/data/`, with
//! `SPARRING_AGENT_FRAMEWORKS_PYTHON` (else SKIPPED).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use sparring::config::MockConfig;
use sparring::mock_llm::user::first_person;
use sparring::mock_llm::MockServer;
use sparring::persona::Scenario;

use crate::agent_frameworks::{orders_mock, orders_scenarios_path, start_agent, AgentKind};
use crate::common::{repo, sparring, text};

/// The model the agent asks the mock for: the mock policy without flaws.
const AGENT_MODEL: &str = "mock-policy+perfect";

fn scenario(id: &str, reason: &str, known: &str, evaluation: Value) -> Value {
    json!({
        "id": id,
        "user": {
            "reason_for_contact": reason,
            "known_info": known,
            "task_instructions": "Give what you know when asked and confirm what the agent \
                proposes. Once you have the answer, thank the agent and end the conversation."
        },
        "evaluation": evaluation
    })
}

/// Two scenarios the agent answers (one reads, one writes after the user
/// confirms) and, with `failing`, one per way of failing.
fn scenarios(failing: bool) -> Vec<Value> {
    let basis = json!(["actions", "communicate"]);
    let mut all = vec![
        scenario(
            "orders-lantern",
            "You ordered a trail lantern last week and want to know where it is.",
            "Your order id is #A1002. Your email is ana@example.com.",
            json!({"actions": [{"name": "get_order_status", "arguments": {"order_id": "#A1002"}}],
                   "communicate": ["PL4471902"], "reward_basis": basis}),
        ),
        scenario(
            "orders-socks",
            "You ordered hiking socks two days ago and want to cancel the order.",
            "Your order id is #A1001. Your email is ana@example.com.",
            json!({"actions": [
                       {"name": "get_order_status", "arguments": {"order_id": "#A1001"}},
                       {"name": "cancel_order", "arguments": {"order_id": "#A1001", "reason": "no longer needed"}}],
                   "communicate": ["$24.00"], "reward_basis": basis}),
        ),
    ];
    if failing {
        for (id, reason) in [
            ("fail-rpc", "You want to know when the shop opens."),
            ("fail-state", "You want to know if the shop sells tents."),
            (
                "fail-500",
                "You want to know if a parcel can be sent abroad.",
            ),
            ("fail-hang", "You want to know the price of a camp stove."),
        ] {
            all.push(scenario(
                id,
                reason,
                "Your email is ana@example.com.",
                json!({"actions": [{"name": "get_order_status", "arguments": {"order_id": "#A1"}}],
                       "communicate": ["x"], "reward_basis": basis}),
            ));
        }
    }
    all
}

fn write_scenarios(dir: &Path, scenarios: &[Value]) -> PathBuf {
    let path = dir.join("scenarios.jsonl");
    let lines: Vec<String> = scenarios.iter().map(Value::to_string).collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// One context: the scenario its opening named, the chat with the mock, and
/// the task left waiting for the user.
#[derive(Default)]
struct Context {
    scenario: Option<String>,
    messages: Vec<Value>,
    waiting_task: Option<String>,
    /// The artifacts of the task waiting for the user.
    artifacts: Vec<Value>,
}

struct Desk {
    mock: String,
    http: reqwest::Client,
    /// Scenario ids by the mock user's opening.
    openings: HashMap<String, String>,
    contexts: Mutex<HashMap<String, Context>>,
    card: Value,
    card_reads: AtomicU64,
    next: AtomicU64,
}

fn tools() -> Value {
    let order = json!({"type": "object", "properties": {"order_id": {"type": "string"}}});
    json!([
        {"type": "function", "function": {"name": "get_order_status", "parameters": order}},
        {"type": "function", "function": {"name": "cancel_order", "parameters": {"type": "object",
            "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}}}}}
    ])
}

/// The desk's own tools: an order's status, or its cancellation.
fn run_tool(name: &str, arguments: &Value) -> String {
    let id = arguments["order_id"].as_str().unwrap_or_default();
    match (name, id) {
        ("get_order_status", "#A1002") => {
            json!({"order_id": id, "status": "shipped", "tracking_number": "PL4471902"})
        }
        ("get_order_status", _) => json!({"order_id": id, "status": "pending", "total": "$24.00"}),
        ("cancel_order", _) => json!({"order_id": id, "status": "cancelled", "refund": "$24.00"}),
        _ => json!({"error": format!("no tool {name}")}),
    }
    .to_string()
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Response {
    Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
        .into_response()
}

impl Desk {
    fn new_id(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// The mock policy's next message in `scenario`'s conversation.
    async fn complete(&self, scenario: Option<&str>, messages: &[Value]) -> Value {
        let mut request = self
            .http
            .post(format!("{}/chat/completions", self.mock))
            .header("content-type", "application/json")
            .body(
                json!({"model": AGENT_MODEL, "messages": messages, "tools": tools()}).to_string(),
            );
        if let Some(id) = scenario {
            request = request.header("x-sparring-scenario", id);
        }
        let body = request.send().await.unwrap().text().await.unwrap();
        let reply: Value = serde_json::from_str(&body).unwrap();
        reply["choices"][0]["message"].clone()
    }

    /// One user message in `context`: the reply and the tool calls made.
    async fn turn(&self, context_id: &str, text: &str) -> (String, Vec<Value>) {
        let (scenario, mut messages) = {
            let mut contexts = self.contexts.lock().unwrap();
            let context = contexts.get_mut(context_id).unwrap();
            if context.scenario.is_none() {
                context.scenario = self.openings.get(text.trim()).cloned();
            }
            context
                .messages
                .push(json!({"role": "user", "content": text}));
            (context.scenario.clone(), context.messages.clone())
        };
        let mut trace = Vec::new();
        let reply = loop {
            let message = self.complete(scenario.as_deref(), &messages).await;
            messages.push(message.clone());
            let calls = message["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if calls.is_empty() {
                break message["content"].as_str().unwrap_or_default().to_string();
            }
            for call in calls {
                let name = call["function"]["name"].as_str().unwrap_or_default();
                let arguments: Value =
                    serde_json::from_str(call["function"]["arguments"].as_str().unwrap_or("{}"))
                        .unwrap_or(json!({}));
                let output = run_tool(name, &arguments);
                messages
                    .push(json!({"role": "tool", "tool_call_id": call["id"], "content": output}));
                trace.push(json!({"id": call["id"], "name": name, "arguments": arguments, "output": output}));
            }
        };
        let mut contexts = self.contexts.lock().unwrap();
        contexts.get_mut(context_id).unwrap().messages = messages;
        (reply, trace)
    }
}

async fn serve_card(State(desk): State<Arc<Desk>>) -> Json<Value> {
    desk.card_reads.fetch_add(1, Ordering::Relaxed);
    Json(desk.card.clone())
}

async fn json_rpc(State(desk): State<Arc<Desk>>, Json(request): Json<Value>) -> Response {
    let id = request["id"].clone();
    if request["jsonrpc"] != "2.0" || request["method"] != "message/send" {
        return rpc_error(&id, -32601, "method not found");
    }
    let message = &request["params"]["message"];
    if message["role"] != "user" || message["messageId"].as_str().is_none() {
        return rpc_error(&id, -32602, "a user message with a messageId, please");
    }
    let text: Vec<&str> = message["parts"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p["kind"] == "text")
                .filter_map(|p| p["text"].as_str())
                .collect()
        })
        .unwrap_or_default();
    let text = text.join("\n");
    // The context: known, or new when the message names none.
    let (context_id, task_id) = {
        let mut contexts = desk.contexts.lock().unwrap();
        let context_id = match message["contextId"].as_str() {
            Some(known) if contexts.contains_key(known) => known.to_string(),
            Some(_) => return rpc_error(&id, -32001, "no such context"),
            None => {
                let new = desk.new_id("ctx");
                contexts.insert(new.clone(), Context::default());
                new
            }
        };
        let context = contexts.get_mut(&context_id).unwrap();
        let task_id = match (context.waiting_task.take(), message["taskId"].as_str()) {
            (Some(waiting), Some(given)) if waiting == given => waiting,
            (None, None) => {
                context.artifacts.clear();
                desk.new_id("task")
            }
            _ => {
                return rpc_error(
                    &id,
                    -32602,
                    "the task waiting for the user was not continued",
                )
            }
        };
        (context_id, task_id)
    };
    let scenario = {
        let contexts = desk.contexts.lock().unwrap();
        contexts[&context_id]
            .scenario
            .clone()
            .or_else(|| desk.openings.get(text.trim()).cloned())
    };
    match scenario.as_deref() {
        Some("fail-rpc") => return rpc_error(&id, -32603, "internal error"),
        Some("fail-500") => return (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response(),
        Some("fail-hang") => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            return rpc_error(&id, -32603, "too late");
        }
        Some("fail-state") => {
            return Json(json!({"jsonrpc": "2.0", "id": id, "result": {
                "kind": "task", "id": task_id, "contextId": context_id,
                "status": {"state": "failed", "message": {"kind": "message", "role": "agent",
                    "messageId": desk.new_id("msg"),
                    "parts": [{"kind": "text", "text": "the orders database is down"}]}}
            }}))
            .into_response()
        }
        _ => {}
    }
    let (reply, trace) = desk.turn(&context_id, &text).await;
    let asks =
        !reply.contains("anything else") && (reply.ends_with('?') || reply.contains("(yes/no)"));
    let artifacts = {
        let mut contexts = desk.contexts.lock().unwrap();
        let context = contexts.get_mut(&context_id).unwrap();
        if asks {
            context.waiting_task = Some(task_id.clone());
        }
        if !trace.is_empty() {
            context.artifacts.push(
                json!({"artifactId": desk.new_id("art"), "name": "tool_calls",
                "parts": [{"kind": "data", "data": {"tool_calls": trace}}]}),
            );
        }
        Value::Array(context.artifacts.clone())
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": {
        "kind": "task", "id": task_id, "contextId": context_id,
        "status": {
            "state": if asks { "input-required" } else { "completed" },
            "message": {"kind": "message", "role": "agent", "messageId": desk.new_id("msg"),
                        "contextId": context_id, "taskId": task_id,
                        "parts": [{"kind": "text", "text": reply}]}
        },
        "artifacts": artifacts
    }}))
    .into_response()
}

/// The desk on a free loopback port, with `card` as its card.
async fn start_desk(mock: &MockServer, scenarios: &[Value], card: Value) -> (String, Arc<Desk>) {
    let openings = scenarios
        .iter()
        .map(|s| {
            let reason = s["user"]["reason_for_contact"].as_str().unwrap();
            (
                first_person(reason).trim().to_string(),
                s["id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let desk = Arc::new(Desk {
        mock: mock.base_url(),
        http: {
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::new()
        },
        openings,
        contexts: Mutex::new(HashMap::new()),
        card,
        card_reads: AtomicU64::new(0),
        next: AtomicU64::new(1),
    });
    let router = Router::new()
        .route("/", post(json_rpc))
        .route("/.well-known/agent-card.json", get(serve_card))
        .with_state(desk.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, desk)
}

fn orders_card() -> Value {
    json!({"name": "orders desk", "url": "http://192.0.2.1/never-called",
           "preferredTransport": "JSONRPC", "protocolVersion": "0.3", "version": "1",
           "capabilities": {}, "skills": []})
}

/// The mock, playing the user (and the desk's model) in `scenarios`.
async fn mock_for(scenarios: &[Value]) -> MockServer {
    let parsed: Vec<Scenario> = scenarios
        .iter()
        .map(|s| serde_json::from_value(s.clone()).unwrap())
        .collect();
    MockServer::start(([127, 0, 0, 1], 0).into(), parsed, MockConfig::default())
        .await
        .unwrap()
}

fn job(dir: &Path, agent: &str, mock: &str, scenarios: &Path, a2a: &str) -> (PathBuf, String) {
    job_timed(dir, agent, mock, scenarios, a2a, 3)
}

/// [`job`] with the agent's calls timing out after `timeout_secs`.
fn job_timed(
    dir: &Path,
    agent: &str,
    mock: &str,
    scenarios: &Path,
    a2a: &str,
    timeout_secs: u32,
) -> (PathBuf, String) {
    let db = dir.join("a2a.db");
    let r = repo();
    let toml = format!(
        r#"name = "a2a"
seed = 7
database = "sqlite://{db}"
concurrency = 3
max_turns = 10

[endpoints.agent]
base_url = "{agent}"
model = "orders-desk"
max_retries = 0
timeout_secs = {timeout_secs}

[endpoints.user]
base_url = "{mock}"
model = "mock-user"
max_retries = 0
timeout_secs = 10

[roles]
policy = "agent"
user = "user"

[user_simulator]
template = "{r}/prompts/user_simulator.tera"

[policy]
template = "{r}/prompts/policies/default.tera"
kind = "a2a"

[policy.a2a]
{a2a}

[environment]
name = "builtin:chat"

[dataset]
scenarios = "{scenarios}"
personas = "{r}/personas"
personas_per_scenario = 1
"#,
        db = db.display(),
        r = r.display(),
        scenarios = scenarios.display(),
    );
    let path = dir.join("job.toml");
    std::fs::write(&path, toml).unwrap();
    (path, format!("sqlite://{}", db.display()))
}

/// A stored message: role, author, content, tool calls, tool call id.
type Row = (String, String, String, Option<String>, Option<String>);

struct Stored {
    policy_model: String,
    termination: String,
    reward: Option<f64>,
    messages: Vec<Row>,
}

async fn stored(db: &str) -> (HashMap<String, Stored>, HashMap<String, (String, String)>) {
    let pool = sqlx::SqlitePool::connect(db).await.unwrap();
    let rows: Vec<(i64, String, String, String, Option<f64>)> = sqlx::query_as(
        "SELECT id, scenario_id, policy_model, termination, reward FROM conversations",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let mut conversations = HashMap::new();
    for (id, scenario, policy_model, termination, reward) in rows {
        let messages = sqlx::query_as(
            "SELECT role, author, content, tool_calls, tool_call_id FROM messages \
             WHERE conversation_id = ? ORDER BY idx",
        )
        .bind(id)
        .fetch_all(&pool)
        .await
        .unwrap();
        conversations.insert(
            scenario,
            Stored {
                policy_model,
                termination,
                reward,
                messages,
            },
        );
    }
    let items: Vec<(String, String, Option<String>)> =
        sqlx::query_as("SELECT scenario_id, status, last_error FROM items")
            .fetch_all(&pool)
            .await
            .unwrap();
    let items = items
        .into_iter()
        .map(|(s, status, error)| (s, (status, error.unwrap_or_default())))
        .collect();
    (conversations, items)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_a2a_agent_plays_the_policy_and_its_failures_fail_items_never_score_0() {
    let dir = tempfile::tempdir().unwrap();
    let all = scenarios(true);
    let mock = mock_for(&all).await;
    let (agent, desk) = start_desk(&mock, &all, orders_card()).await;
    let file = write_scenarios(dir.path(), &all);
    let (config, db) = job(
        dir.path(),
        &agent,
        &mock.base_url(),
        &file,
        "read_card = true",
    );
    let out = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    // Items failed: exit 1.
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert_eq!(
        desk.card_reads.load(Ordering::Relaxed),
        1,
        "one card read a job"
    );

    let (conversations, items) = stored(&db).await;
    for id in ["orders-lantern", "orders-socks"] {
        assert_eq!(items[id].0, "done", "{id}: {:?}", items[id]);
        let c = &conversations[id];
        assert_eq!(c.policy_model, "a2a:orders desk", "{id}");
        assert_eq!(
            c.reward,
            Some(1.0),
            "{id}: {} {:?}",
            c.termination,
            c.messages
        );
        // The agent's words are the policy's, its tool results the agent's own.
        assert!(
            c.messages
                .iter()
                .any(|m| m.0 == "assistant" && m.1 == "policy" && m.2.starts_with("All done.")),
            "{id}: {:?}",
            c.messages
        );
        let calls: Vec<&String> = c
            .messages
            .iter()
            .filter(|m| m.1 == "policy")
            .filter_map(|m| m.3.as_ref())
            .collect();
        // Each call once, though a continued task answers with all of them.
        let names: Vec<&str> = calls
            .iter()
            .map(|c| {
                if c.contains("cancel_order") {
                    "cancel_order"
                } else {
                    "get_order_status"
                }
            })
            .collect();
        let gold: &[&str] = if id == "orders-socks" {
            &["get_order_status", "cancel_order"]
        } else {
            &["get_order_status"]
        };
        assert_eq!(names, gold, "{id}: {calls:?}");
        let results: Vec<_> = c.messages.iter().filter(|m| m.1 == "agent_tool").collect();
        assert_eq!(results.len(), calls.len(), "{id}: {:?}", c.messages);
        assert!(results
            .iter()
            .all(|m| m.0 == "tool" && m.4.is_some() && m.2.contains("order_id")));
    }
    // The write waited for the user's yes: a task left input-required and
    // continued (the desk refuses a message that does not continue it).
    let socks = &conversations["orders-socks"];
    assert!(socks.messages.iter().any(|m| m.2.contains("(yes/no)")));
    assert!(socks
        .messages
        .iter()
        .any(|m| m.3.as_deref().is_some_and(|c| c.contains("cancel_order"))));
    assert!(socks
        .messages
        .iter()
        .any(|m| m.1 == "agent_tool" && m.2.contains("cancelled")));

    for (id, class, says) in [
        ("fail-rpc", "agent_failed", "JSON-RPC error -32603"),
        ("fail-state", "agent_failed", "the orders database is down"),
        ("fail-500", "server_error", "500"),
        ("fail-hang", "timeout", "timed out"),
    ] {
        let (status, error) = &items[id];
        assert_eq!(status, "failed", "{id}: {error}");
        assert!(
            error.starts_with(class) && error.contains(says),
            "{id}: {error}"
        );
        assert!(
            !conversations.contains_key(id),
            "{id} stored a conversation"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_without_json_rpc_refuses_the_job_at_its_setup_and_read_card_false_skips_it() {
    let dir = tempfile::tempdir().unwrap();
    let some = scenarios(false);
    let mock = mock_for(&some).await;
    let grpc_only = json!({"name": "grpc desk", "preferredTransport": "GRPC"});
    let (agent, desk) = start_desk(&mock, &some, grpc_only).await;
    let file = write_scenarios(dir.path(), &some);
    let (config, db) = job(dir.path(), &agent, &mock.base_url(), &file, "");
    let out = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains("policy (kind = \"a2a\")")
            && said.contains("agent card")
            && said.contains("JSON-RPC"),
        "{said}"
    );
    assert_eq!(desk.card_reads.load(Ordering::Relaxed), 1);
    let (conversations, items) = stored(&db).await;
    assert!(conversations.is_empty());
    assert!(
        items.values().all(|(status, _)| status != "failed"),
        "no item ran: {items:?}"
    );

    // The same agent with its card not read: it answers, and the policy is
    // named after the endpoint's model.
    let dir = tempfile::tempdir().unwrap();
    let file = write_scenarios(dir.path(), &some);
    let (config, db) = job(
        dir.path(),
        &agent,
        &mock.base_url(),
        &file,
        "read_card = false",
    );
    let out = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(desk.card_reads.load(Ordering::Relaxed), 1, "not read again");
    let (conversations, _) = stored(&db).await;
    assert_eq!(conversations.len(), 2);
    for c in conversations.values() {
        assert_eq!(c.policy_model, "a2a:orders-desk");
        assert_eq!(c.reward, Some(1.0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_a2a_sdk_agent_plays_the_policy_over_the_orders_scenarios() {
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::A2a, &mock.base_url()).await else {
        return;
    };
    // The same agent with a model it cannot reach: each task ends failed.
    let Some(broken) = start_agent(AgentKind::A2a, "http://127.0.0.1:9/v1").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The orders set, scored by its gold calls too.
    let orders = std::fs::read_to_string(orders_scenarios_path()).unwrap();
    let scored = orders.replace(
        "\"reward_basis\": [\"communicate\"]",
        "\"reward_basis\": [\"actions\", \"communicate\"]",
    );
    assert_eq!(scored.matches("\"actions\", \"communicate\"").count(), 6);
    let file = dir.path().join("scenarios.jsonl");
    std::fs::write(&file, scored).unwrap();
    let (config, db) = job_timed(
        dir.path(),
        agent.base_url(),
        &mock.base_url(),
        &file,
        "",
        30,
    );
    let out = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(
        out.status.success(),
        "{}\n{}\n{}",
        text(&out.stdout),
        text(&out.stderr),
        agent.log()
    );
    let (conversations, items) = stored(&db).await;
    assert_eq!(items.len(), 6, "{items:?}");
    let gold_calls = [
        ("orders-001-where-is-the-lantern", 1),
        ("orders-002-cancel-the-socks", 2),
        ("orders-003-when-did-the-blanket-arrive", 1),
        ("orders-004-cancel-the-stove", 2),
        ("orders-005-shipped-cannot-be-cancelled", 1),
        ("orders-006-refund-of-the-pegs", 1),
    ];
    for (id, calls) in gold_calls {
        let c = &conversations[id];
        assert_eq!(c.policy_model, "a2a:orders desk");
        assert_eq!(
            c.reward,
            Some(1.0),
            "{id}: {} {:?}",
            c.termination,
            c.messages
        );
        let results: Vec<_> = c.messages.iter().filter(|m| m.1 == "agent_tool").collect();
        assert_eq!(results.len(), calls, "{id}: {:?}", c.messages);
        assert!(
            results.iter().all(|m| m.2.contains("order_id")),
            "{id}: {results:?}"
        );
        assert!(c
            .messages
            .iter()
            .any(|m| m.1 == "policy" && m.2.starts_with("All done.")));
    }

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("scenarios.jsonl");
    std::fs::write(&file, orders.lines().next().unwrap()).unwrap();
    let (config, db) = job_timed(
        dir.path(),
        broken.base_url(),
        &mock.base_url(),
        &file,
        "",
        30,
    );
    let out = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let (conversations, items) = stored(&db).await;
    assert!(conversations.is_empty());
    for (id, (status, error)) in items {
        assert_eq!(status, "failed", "{id}");
        assert!(
            error.starts_with("agent_failed") && error.contains("ended failed"),
            "{id}: {error}"
        );
    }
}
