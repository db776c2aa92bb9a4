//! `[policy] kind = "http"` over a real job: the `sparring` binary runs a job
//! whose policy is an agent behind HTTP, stores into a SQLite file, and the
//! test reads what was stored. The agent here is a stand-in for a LangGraph
//! server (`langgraph dev`'s `POST /threads/{thread_id}/runs/wait`, its
//! request and answer shapes), served by this test: it keeps each thread's
//! messages, wants UUID thread ids, `assistant_id` and `if_not_exists`,
//! answers with the thread's whole message list every time (so the trace
//! repeats earlier turns' calls), sets a cookie on a thread's first answer
//! and wants it back after. On its first turn in a thread it calls the
//! scenario's gold tools itself and states the fact the user must hear.
//! The first segment of the base URL's path picks how it behaves: `ok`, or
//! a failure (`500`, `hang`, `garbage`, `noreply`, `lost`). The last two
//! tests drive the real agents of `tests/agents` (skipped without
//! `SPARRING_AGENT_FRAMEWORKS_PYTHON`): the LangGraph agent under `langgraph
//! dev` through the orders desk's scenarios, and the faulty agent's six ways
//! of failing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::agent_frameworks::{
    orders_mock, orders_scenarios, orders_scenarios_path, start_agent, AgentKind,
};
use crate::common::{self, repo, text};

/// The scenario every job here runs: a shipped order's tracking number,
/// verified by the agent's trace (`actions`) and what it said
/// (`communicate`), since sparring cannot read the agent's own tools.
const SCENARIO: &str = "retail-001-tracking-of-shipped-boots";

#[derive(Default)]
struct Thread {
    messages: Vec<Value>,
    /// The session header and cookie of every call in the thread.
    sessions: Vec<Option<String>>,
}

#[derive(Default)]
struct Agent {
    threads: Mutex<HashMap<String, Thread>>,
    /// Requests refused for a broken contract: (status, why).
    refused: Mutex<Vec<String>>,
}

/// The gold calls of [`SCENARIO`] and the outputs the agent's tools give.
fn gold_calls() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "find_user_id_by_email",
            json!({"email": "theo.lindqvist@inkwell.example"}),
            "theo_lindqvist_4821",
        ),
        (
            "get_order_details",
            json!({"order_id": "#LL21743"}),
            "{\"status\": \"shipped\", \"tracking\": \"PW5005336661\"}",
        ),
    ]
}

fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups
            .iter()
            .all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn refuse(agent: &Agent, status: StatusCode, why: &str) -> Response {
    agent.refused.lock().unwrap().push(why.to_string());
    (status, axum::Json(json!({"detail": why}))).into_response()
}

async fn runs_wait(
    State(agent): State<Arc<Agent>>,
    UrlPath((mode, thread_id)): UrlPath<(String, String)>,
    headers: HeaderMap,
    body: String,
) -> Response {
    match mode.as_str() {
        "500" => return (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response(),
        "hang" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            return StatusCode::NO_CONTENT.into_response();
        }
        "garbage" => return (StatusCode::OK, "<html>an error page</html>").into_response(),
        "noreply" => return axum::Json(json!({"output": "hi"})).into_response(),
        _ => {}
    }
    if !is_uuid(&thread_id) {
        return refuse(
            &agent,
            StatusCode::UNPROCESSABLE_ENTITY,
            "thread_id is not a UUID",
        );
    }
    let Ok(request) = serde_json::from_str::<Value>(&body) else {
        return refuse(&agent, StatusCode::UNPROCESSABLE_ENTITY, "body is not JSON");
    };
    if request["assistant_id"] != "agent" || request["if_not_exists"] != "create" {
        return refuse(
            &agent,
            StatusCode::UNPROCESSABLE_ENTITY,
            "assistant_id or if_not_exists",
        );
    }
    let input = &request["input"]["messages"];
    let (Some(said), Some(1)) = (input[0]["content"].as_str(), input.as_array().map(Vec::len))
    else {
        return refuse(&agent, StatusCode::UNPROCESSABLE_ENTITY, "input.messages");
    };
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let mut threads = agent.threads.lock().unwrap();
    let known = threads.contains_key(&thread_id);
    if mode == "lost" && known {
        return (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"detail": "Thread not found"})),
        )
            .into_response();
    }
    if known && header("cookie").as_deref() != Some(&format!("lb={}", &thread_id[..8])[..]) {
        drop(threads);
        return refuse(
            &agent,
            StatusCode::BAD_REQUEST,
            "the thread's cookie was not sent back",
        );
    }
    let thread = threads.entry(thread_id.clone()).or_default();
    thread.sessions.push(header("x-sparring-session"));
    let n = thread.messages.len();
    thread
        .messages
        .push(json!({"type": "human", "content": said, "id": format!("m{n}")}));
    if !known {
        let calls: Vec<Value> = gold_calls()
            .into_iter()
            .enumerate()
            .map(|(i, (name, args, _))| {
                json!({"name": name, "args": args, "id": format!("call_{i}"), "type": "tool_call"})
            })
            .collect();
        thread
            .messages
            .push(json!({"type": "ai", "content": "", "tool_calls": calls}));
        for (i, (name, _, output)) in gold_calls().into_iter().enumerate() {
            thread.messages.push(
                json!({"type": "tool", "name": name, "tool_call_id": format!("call_{i}"), "content": output}),
            );
        }
        thread.messages.push(json!({"type": "ai", "content": [
            {"type": "text", "text": "Your boots have shipped. "},
            {"type": "text", "text": "The tracking number is PW5005336661."}
        ]}));
    } else {
        thread.messages.push(
            json!({"type": "ai", "content": "Glad to help. Is there anything else?", "tool_calls": []}),
        );
    }
    let answer = json!({"messages": thread.messages});
    let mut response = axum::Json(answer).into_response();
    if !known {
        response.headers_mut().insert(
            "set-cookie",
            format!("lb={}; Path=/; HttpOnly", &thread_id[..8])
                .parse()
                .unwrap(),
        );
    }
    response
}

/// A plain JSON endpoint (docs/agents-under-test.md's FastAPI example): it
/// keeps nothing, gets the whole dialogue every turn, wants the session
/// cookie, and reports this turn's calls as flat records.
async fn chat(
    State(agent): State<Arc<Agent>>,
    UrlPath(_mode): UrlPath<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let Ok(request) = serde_json::from_str::<Value>(&body) else {
        return refuse(&agent, StatusCode::UNPROCESSABLE_ENTITY, "body is not JSON");
    };
    let (Some(conversation), Some(messages)) = (
        request["conversation"].as_str(),
        request["messages"].as_array(),
    ) else {
        return refuse(
            &agent,
            StatusCode::UNPROCESSABLE_ENTITY,
            "conversation, messages",
        );
    };
    let cookie = headers.get("cookie").and_then(|v| v.to_str().ok());
    if cookie != Some(&format!("session={conversation}")[..]) {
        return refuse(&agent, StatusCode::BAD_REQUEST, "no session cookie");
    }
    if messages.last().map(|m| &m["role"]) != Some(&json!("user")) {
        return refuse(
            &agent,
            StatusCode::UNPROCESSABLE_ENTITY,
            "the last message is not the user's",
        );
    }
    let turn = messages.iter().filter(|m| m["role"] == "user").count();
    agent
        .threads
        .lock()
        .unwrap()
        .entry(conversation.to_string())
        .or_default()
        .sessions
        .push(Some(conversation.to_string()));
    if turn == 1 {
        let calls: Vec<Value> = gold_calls()
            .into_iter()
            .map(|(name, args, output)| json!({"name": name, "arguments": args, "output": output}))
            .collect();
        axum::Json(
            json!({"reply": "Shipped; the tracking number is PW5005336661.", "tool_calls": calls}),
        )
        .into_response()
    } else {
        axum::Json(json!({"reply": "Anything else?", "tool_calls": []})).into_response()
    }
}

/// The stand-in agent on a loopback port: its base URL and its state.
async fn start_stand_in() -> (String, Arc<Agent>) {
    let agent = Arc::new(Agent::default());
    let app = axum::Router::new()
        .route(
            "/{mode}/threads/{thread_id}/runs/wait",
            axum::routing::post(runs_wait),
        )
        .route("/{mode}/chat", axum::routing::post(chat))
        .with_state(agent.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}"), agent)
}

/// [`SCENARIO`] alone, scored by the agent's trace and what it said.
fn scenarios(dir: &Path) -> PathBuf {
    let all = std::fs::read_to_string(repo().join("data/retail/scenarios.jsonl")).unwrap();
    let line = all
        .lines()
        .find(|l| l.contains(&format!("\"id\": \"{SCENARIO}\"")))
        .unwrap();
    let mut scenario: Value = serde_json::from_str(line).unwrap();
    scenario["evaluation"]["reward_basis"] = json!(["actions", "communicate"]);
    let path = dir.join("scenarios.jsonl");
    std::fs::write(&path, format!("{scenario}\n")).unwrap();
    path
}

/// The `[policy.http]` a LangGraph server needs.
pub const LANGGRAPH_POLICY: &str = r#"[policy]
kind = "http"

[policy.http]
path = "/threads/{{ uuid }}/runs/wait"
body = '''
{"assistant_id": "agent",
 "input": {"messages": [{"role": "user", "content": {{ last_user | json_encode() }}}]},
 "if_not_exists": "create"}
'''
reply = "/messages/-1/content"
trace = "/messages"
session_header = "X-Sparring-Session"
"#;

/// docs/agents-under-test.md's `[policy.http]` of a plain JSON endpoint.
const PLAIN_POLICY: &str = r#"[policy]
kind = "http"

[policy.http]
path = "/chat"
body = '{"messages": {{ messages | json_encode() }}, "conversation": "{{ session }}"}'
reply = "/reply"
trace = "/tool_calls"
session_cookie = "session"
"#;

/// What a job here varies: the agent, the user's endpoint, the scenarios.
struct Setup<'a> {
    agent_url: &'a str,
    agent_model: &'a str,
    timeout_secs: u32,
    max_turns: u32,
    /// `mock = true` (the job's own mock), or `base_url = "..."`.
    user_endpoint: String,
    environment: &'a str,
    scenarios: PathBuf,
    personas: u32,
}

/// Write the job of `setup` with `policy` into `dir`: its path and database.
fn write_job(dir: &Path, setup: &Setup, policy: &str) -> (PathBuf, String) {
    let db = dir.join("sparring.db");
    let config = format!(
        r#"name = "black-box-http"
seed = 7
database = "sqlite://{db}"
concurrency = 4
max_turns = {max_turns}

[endpoints.agent]
base_url = "{agent}"
model = "{model}"
max_retries = 0
timeout_secs = {timeout}

[endpoints.user]
{user}
model = "mock-user"

[roles]
policy = "agent"
user = "user"

[user_simulator]
template = "{r}/prompts/user_simulator.tera"

{policy}

[environment]
name = "{environment}"

[dataset]
scenarios = "{scenarios}"
personas = "{r}/personas"
personas_per_scenario = {personas}
"#,
        db = db.display(),
        max_turns = setup.max_turns,
        agent = setup.agent_url,
        model = setup.agent_model,
        timeout = setup.timeout_secs,
        user = setup.user_endpoint,
        r = repo().display(),
        environment = setup.environment,
        scenarios = setup.scenarios.display(),
        personas = setup.personas,
    );
    let path = dir.join("job.toml");
    std::fs::write(&path, config).unwrap();
    (path, format!("sqlite://{}", db.display()))
}

/// A job of [`SCENARIO`] with `personas` personas, its policy the agent at
/// `base_url` as `policy` describes it.
fn job(dir: &Path, base_url: &str, personas: u32, policy: &str) -> (PathBuf, String) {
    let setup = Setup {
        agent_url: base_url,
        agent_model: "orders-agent",
        timeout_secs: 1,
        max_turns: 3,
        user_endpoint: "mock = true".into(),
        environment: "builtin:retail",
        scenarios: scenarios(dir),
        personas,
    };
    write_job(dir, &setup, policy)
}

async fn run(dir: &Path, config: &Path) -> std::process::Output {
    let (dir, config) = (dir.to_path_buf(), config.to_path_buf());
    tokio::task::spawn_blocking(move || {
        common::sparring(&dir, &["run", config.to_str().unwrap(), "--quiet"])
    })
    .await
    .unwrap()
}

struct Stored {
    /// (status, last_error) of each item.
    items: Vec<(String, Option<String>)>,
    /// (id, policy_model, termination, reward, reward_breakdown) of each conversation.
    conversations: Vec<(i64, String, String, Option<f64>, String)>,
}

async fn stored(db: &str) -> (Stored, sqlx::SqlitePool) {
    let pool = sqlx::SqlitePool::connect(db).await.unwrap();
    let items = sqlx::query_as("SELECT status, last_error FROM items ORDER BY id")
        .fetch_all(&pool)
        .await
        .unwrap();
    let conversations = sqlx::query_as(
        "SELECT id, policy_model, termination, reward, reward_breakdown FROM conversations ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    (
        Stored {
            items,
            conversations,
        },
        pool,
    )
}

/// (role, author, content, tool_calls) of a conversation's messages.
async fn messages(
    pool: &sqlx::SqlitePool,
    conversation: i64,
) -> Vec<(String, String, String, Option<String>)> {
    sqlx::query_as(
        "SELECT role, author, content, tool_calls FROM messages WHERE conversation_id = $1 ORDER BY idx",
    )
    .bind(conversation)
    .fetch_all(pool)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_langgraph_style_agent_is_the_policy_its_replies_and_tool_trace_stored_once_and_scored() {
    let (base, agent) = start_stand_in().await;
    let dir = tempfile::tempdir().unwrap();
    let (config, db) = job(dir.path(), &format!("{base}/ok"), 2, LANGGRAPH_POLICY);
    let validated = common::sparring(dir.path(), &["validate", config.to_str().unwrap()]);
    assert_eq!(
        validated.status.code(),
        Some(0),
        "{}",
        text(&validated.stderr)
    );
    let out = run(dir.path(), &config).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        agent.refused.lock().unwrap().is_empty(),
        "{:?}",
        agent.refused.lock().unwrap()
    );

    let (stored, pool) = stored(&db).await;
    assert_eq!(stored.items.len(), 2);
    assert!(
        stored.items.iter().all(|(status, _)| status == "done"),
        "{:?}",
        stored.items
    );
    assert_eq!(stored.conversations.len(), 2);
    for (id, policy_model, termination, reward, breakdown) in &stored.conversations {
        assert_eq!(policy_model, "http:orders-agent", "never the URL");
        assert_eq!(*reward, Some(1.0), "{termination}: {breakdown}");
        let breakdown: Value = serde_json::from_str(breakdown).unwrap();
        let components = breakdown.to_string();
        assert!(
            components.contains("actions") && components.contains("communicate"),
            "{components}"
        );
        let messages = messages(&pool, *id).await;
        let policy_text: Vec<&str> = messages
            .iter()
            .filter(|(role, author, content, _)| {
                role == "assistant" && author == "policy" && !content.is_empty()
            })
            .map(|(_, _, content, _)| content.as_str())
            .collect();
        assert_eq!(
            policy_text.first().copied(),
            Some("Your boots have shipped. The tracking number is PW5005336661."),
            "{messages:?}"
        );
        // The thread's calls are reported on every turn and stored once,
        // before the reply they led to.
        let calls: Vec<&(String, String, String, Option<String>)> = messages
            .iter()
            .filter(|(_, _, _, calls)| calls.as_deref().is_some_and(|c| c != "[]"))
            .collect();
        assert_eq!(calls.len(), 2, "{messages:?}");
        assert!(calls[0]
            .3
            .as_deref()
            .unwrap()
            .contains("find_user_id_by_email"));
        assert!(calls[1].3.as_deref().unwrap().contains("get_order_details"));
        let results: Vec<&str> = messages
            .iter()
            .filter(|(role, ..)| role == "tool")
            .map(|(_, author, content, _)| {
                assert_eq!(author, "agent_tool");
                content.as_str()
            })
            .collect();
        assert_eq!(
            results,
            [
                "theo_lindqvist_4821",
                "{\"status\": \"shipped\", \"tracking\": \"PW5005336661\"}"
            ]
        );
        let first_reply = messages
            .iter()
            .position(|(_, _, content, _)| {
                content.contains("PW5005336661") && !content.starts_with('{')
            })
            .unwrap();
        let last_result = messages
            .iter()
            .rposition(|(role, ..)| role == "tool")
            .unwrap();
        assert!(last_result < first_reply, "{messages:?}");
    }
    // One thread (a UUID) per conversation, the same session header on each
    // of its calls, a different one in the other.
    let threads = agent.threads.lock().unwrap();
    assert_eq!(threads.len(), 2);
    let sessions: Vec<&String> = threads
        .values()
        .map(|thread| {
            let first = thread.sessions[0].as_ref().expect("the session header");
            assert!(first.starts_with("sparring-"), "{first}");
            assert!(thread.sessions.iter().all(|s| s.as_ref() == Some(first)));
            first
        })
        .collect();
    assert_ne!(sessions[0], sessions[1]);
    assert!(
        threads.values().any(|t| t.sessions.len() > 1),
        "a conversation had a later turn, which sent the cookie back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_json_agent_gets_the_whole_dialogue_and_its_turns_calls_are_stored_as_reported() {
    let (base, agent) = start_stand_in().await;
    let dir = tempfile::tempdir().unwrap();
    let (config, db) = job(dir.path(), &format!("{base}/ok"), 2, PLAIN_POLICY);
    let out = run(dir.path(), &config).await;
    let (stored, pool) = stored(&db).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}\n{:?}",
        text(&out.stdout),
        text(&out.stderr),
        stored.items
    );
    assert!(
        agent.refused.lock().unwrap().is_empty(),
        "{:?}",
        agent.refused.lock().unwrap()
    );
    assert_eq!(stored.conversations.len(), 2);
    for (id, _, termination, reward, breakdown) in &stored.conversations {
        assert_eq!(*reward, Some(1.0), "{termination}: {breakdown}");
        let messages = messages(&pool, *id).await;
        let results: Vec<(&str, &str)> = messages
            .iter()
            .filter(|(role, ..)| role == "tool")
            .map(|(_, author, content, _)| (author.as_str(), content.as_str()))
            .collect();
        assert_eq!(results.len(), 2, "{messages:?}");
        assert!(results.iter().all(|(author, _)| *author == "agent_tool"));
    }
    assert!(
        agent
            .threads
            .lock()
            .unwrap()
            .values()
            .any(|t| t.sessions.len() > 1),
        "a conversation had a later turn"
    );
}

/// Run a one-item job against the agent in `mode`; the item's status and
/// error, and that no conversation (so no reward) was stored.
async fn failure_of(mode: &str) -> String {
    let (base, _agent) = start_stand_in().await;
    let dir = tempfile::tempdir().unwrap();
    let (config, db) = job(dir.path(), &format!("{base}/{mode}"), 1, LANGGRAPH_POLICY);
    let out = run(dir.path(), &config).await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "{mode}: a failed item fails the run: {}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let (stored, _) = stored(&db).await;
    assert_eq!(stored.items.len(), 1, "{mode}");
    assert!(
        stored.conversations.is_empty(),
        "{mode}: a failing agent stores no conversation, so no reward of 0: {:?}",
        stored.conversations
    );
    let (status, error) = &stored.items[0];
    assert_eq!(status, "failed", "{mode}");
    error.clone().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_answers_500_fails_its_item_as_a_server_error() {
    let error = failure_of("500").await;
    assert!(error.starts_with("server_error"), "{error}");
    assert!(error.contains("HTTP 500"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_hangs_fails_its_item_at_the_endpoints_timeout() {
    let started = std::time::Instant::now();
    let error = failure_of("hang").await;
    assert!(error.starts_with("timeout"), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_is_not_json_fails_its_item_as_malformed() {
    let error = failure_of("garbage").await;
    assert!(error.starts_with("malformed_response"), "{error}");
    assert!(error.contains("is not JSON"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_without_the_reply_pointer_fails_its_item_naming_the_pointer() {
    let error = failure_of("noreply").await;
    assert!(error.starts_with("malformed_response"), "{error}");
    assert!(
        error.contains("no reply at policy.http.reply = \"/messages/-1/content\""),
        "{error}"
    );
    assert!(error.contains("keys output"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_the_agent_lost_fails_its_item_as_rejected() {
    let error = failure_of("lost").await;
    assert!(error.starts_with("rejected"), "{error}");
    assert!(error.contains("HTTP 404"), "{error}");
}

/// The orders desk's scenarios (tests/agents/data), scored by the agent's
/// trace and what it said.
fn orders_scenarios_scored_by_trace(dir: &Path) -> PathBuf {
    let all = std::fs::read_to_string(orders_scenarios_path()).unwrap();
    let lines: Vec<String> = all
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut scenario: Value = serde_json::from_str(line).unwrap();
            scenario["evaluation"]["reward_basis"] = json!(["actions", "communicate"]);
            scenario.to_string()
        })
        .collect();
    let path = dir.join("orders.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_langgraph_agent_under_langgraph_dev_plays_the_policy_of_a_job() {
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::LangGraph, &mock.base_url()).await else {
        return;
    };
    // The thread's state: its last message and all its messages, every turn.
    langgraph_job(
        agent.base_url(),
        &mock.base_url(),
        "/messages/-1/content",
        "/messages",
    )
    .await;
    // What the graph puts in its state besides: this run's reply and calls.
    langgraph_job(agent.base_url(), &mock.base_url(), "/reply", "/trace").await;
}

/// A job of the orders desk's scenarios against the LangGraph agent at
/// `agent_url`, its reply and trace read at `reply` and `trace`: every
/// conversation scored 1 by `actions` and `communicate`, each call stored once.
async fn langgraph_job(agent_url: &str, mock_url: &str, reply: &str, trace: &str) {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = orders_scenarios_scored_by_trace(dir.path());
    let policy = LANGGRAPH_POLICY
        .replace(
            "\"assistant_id\": \"agent\"",
            "\"assistant_id\": \"orders\"",
        )
        .replace("/messages/-1/content", reply)
        .replace("trace = \"/messages\"", &format!("trace = \"{trace}\""));
    let setup = Setup {
        agent_url,
        agent_model: "orders",
        timeout_secs: 60,
        max_turns: 8,
        user_endpoint: format!("base_url = \"{mock_url}\""),
        environment: "builtin:chat",
        scenarios,
        personas: 1,
    };
    let (config, db) = write_job(dir.path(), &setup, &policy);
    let out = run(dir.path(), &config).await;
    let (stored, pool) = stored(&db).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}\nitems: {:?}",
        text(&out.stdout),
        text(&out.stderr),
        stored.items
    );
    let gold: HashMap<String, usize> = orders_scenarios()
        .into_iter()
        .map(|s| (s.id.clone(), s.evaluation.actions.len()))
        .collect();
    assert_eq!(stored.conversations.len(), gold.len());
    for (id, policy_model, termination, reward, breakdown) in &stored.conversations {
        assert_eq!(policy_model, "http:orders");
        assert_eq!(*reward, Some(1.0), "{termination}: {breakdown}");
        let scenario: (String,) =
            sqlx::query_as("SELECT scenario_id FROM conversations WHERE id = $1")
                .bind(id)
                .fetch_one(&pool)
                .await
                .unwrap();
        let messages = messages(&pool, *id).await;
        // Each call the thread reports, every turn again, is stored once,
        // with the agent's tool's answer.
        let mut call_ids: Vec<String> = messages
            .iter()
            .filter_map(|(_, _, _, calls)| calls.as_deref())
            .flat_map(|calls| serde_json::from_str::<Vec<Value>>(calls).unwrap())
            .map(|call| call["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(call_ids.len(), gold[&scenario.0], "{messages:?}");
        call_ids.dedup();
        assert_eq!(call_ids.len(), gold[&scenario.0], "{messages:?}");
        assert!(messages
            .iter()
            .filter(|(role, ..)| role == "tool")
            .all(|(_, author, content, _)| author == "agent_tool" && !content.is_empty()));
    }
}

/// The first of the orders desk's scenarios alone.
fn one_orders_scenario(dir: &Path) -> PathBuf {
    let all = std::fs::read_to_string(orders_scenarios_path()).unwrap();
    let path = dir.join("one.jsonl");
    std::fs::write(&path, format!("{}\n", all.lines().next().unwrap())).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_faulty_agents_failures_each_fail_the_item_with_their_class_and_store_no_reward() {
    let Some(agent) = start_agent(AgentKind::Faulty, "http://127.0.0.1:9/v1").await else {
        return;
    };
    let policy = r#"[policy]
kind = "http"

[policy.http]
path = "/conversations/{{ session }}"
body = '{"message": {{ last_user | json_encode() }}}'
reply = "/reply"
trace = "/trace"
"#;
    for (mode, class) in [
        ("error500", "server_error"),
        ("hang", "timeout"),
        ("garbage", "malformed_response"),
        ("garbage-json", "malformed_response"),
        ("close", "connection"),
        ("lost", "rejected"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let base_url = format!("{}/{mode}", agent.base_url());
        let setup = Setup {
            agent_url: &base_url,
            agent_model: "faulty",
            timeout_secs: 1,
            max_turns: 3,
            user_endpoint: "mock = true".into(),
            environment: "builtin:chat",
            scenarios: one_orders_scenario(dir.path()),
            personas: 1,
        };
        let (config, db) = write_job(dir.path(), &setup, policy);
        let out = run(dir.path(), &config).await;
        let (stored, _) = stored(&db).await;
        assert_eq!(out.status.code(), Some(1), "{mode}: {:?}", stored.items);
        assert!(
            stored.conversations.is_empty(),
            "{mode}: {:?}",
            stored.conversations
        );
        let (status, error) = &stored.items[0];
        assert_eq!(status, "failed", "{mode}");
        let error = error.as_deref().unwrap_or_default();
        assert!(error.starts_with(class), "{mode}: {error}");
    }
}
