//! Stepped sessions (issue 40, docs/sessions.md): episodes whose policy is
//! the caller, stepped through the library, OpenEnv's HTTP and WebSocket
//! protocol (`sparring openenv`'s router) and the service's `/v1/sessions`.
//! The caller here is a trainer whose model is the mock policy, asked as the
//! batch engine asks it; the simulated user is the mock user.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use sparring::config::Job;
use sparring::env::ToolSpec;
use sparring::jobs::models::{connect_models, Models};
use sparring::jobs::{self, RunOptions};
use sparring::llm::message::{Message, Role, ToolCall};
use sparring::llm::{ChatModel, ChatRequest};
use sparring::mock_llm::InProcessMock;
use sparring::server::openenv::{openenv_router, OpenEnvState};
use sparring::stepped::{Host, Limits, OpenRequest, Sessions};
use sparring::store::{self, Store};
use tokio_tungstenite::tungstenite::Message as Frame;

use crate::common::{first_scenarios, write_job, JobSpec};

/// A job config opened for sessions, and the trainer's model (the mock policy).
struct Bed {
    _dir: tempfile::TempDir,
    store: Arc<dyn Store>,
    host: Arc<Host>,
    job: Job,
    policy: Arc<dyn ChatModel>,
    _models: Models,
}

async fn bed(spec: JobSpec, scenarios: usize) -> Bed {
    let dir = tempfile::tempdir().unwrap();
    let spec = JobSpec {
        scenarios: first_scenarios(dir.path(), scenarios),
        ..spec
    };
    let (path, db) = write_job(dir.path(), &spec);
    let job = sparring::config::load(&path).unwrap_or_else(|p| panic!("{p:?}"));
    let store = store::open(&db).await.unwrap();
    let ctx = jobs::Context::new(store.clone(), Some(Arc::new(InProcessMock)));
    let host = Arc::new(
        Host::open(&ctx, job.clone())
            .await
            .unwrap_or_else(|e| panic!("{}", e.message())),
    );
    let scenarios = sparring::persona::load::load_scenarios(job.dataset.data()).unwrap();
    let models = connect_models(&job, &scenarios, ctx.mock()).await.unwrap();
    Bed {
        _dir: dir,
        store,
        host,
        job,
        policy: models.policy.clone(),
        _models: models,
    }
}

/// A chat completions message as the engine's `Message`.
fn message_of(v: &Value) -> Message {
    let role = Role::parse(v["role"].as_str().unwrap()).unwrap();
    let mut m = Message::text(role, v["content"].as_str().unwrap_or(""));
    m.tool_call_id = v["tool_call_id"].as_str().map(str::to_string);
    m.tool_calls = v["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| ToolCall {
            id: c["id"].as_str().unwrap().to_string(),
            name: c["function"]["name"].as_str().unwrap().to_string(),
            arguments: c["function"]["arguments"].as_str().unwrap().to_string(),
        })
        .collect();
    m
}

fn tools_of(v: &Value) -> Vec<ToolSpec> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| ToolSpec {
            name: t["function"]["name"].as_str().unwrap().into(),
            description: t["function"]["description"].as_str().unwrap().into(),
            parameters: t["function"]["parameters"].clone(),
        })
        .collect()
}

/// The trainer's turn: the mock policy asked as `ModelPolicy` asks it, its
/// message as an action.
async fn policy_action(
    policy: &dyn ChatModel,
    history: &[Message],
    tools: &[ToolSpec],
    seed: u64,
    scenario: &str,
) -> (Value, Message) {
    let response = policy
        .complete(ChatRequest {
            role: sparring::llm::Role::Policy,
            messages: history.to_vec(),
            tools: tools.to_vec().into(),
            seed: Some(seed),
            scenario: Some(scenario.to_string()),
            parallel_tool_calls: Some(false),
            ..ChatRequest::default()
        })
        .await
        .unwrap();
    let m = response.message;
    let calls: Vec<Value> = m
        .tool_calls
        .iter()
        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
        .collect();
    (
        json!({"role": "assistant", "content": &*m.content, "tool_calls": calls}),
        m,
    )
}

/// One whole episode through the library: its last observation's JSON.
async fn play(bed: &Bed, request: OpenRequest) -> Value {
    let id = Sessions::new_id();
    let (mut live, first) = bed.host.open_session(&id, request).await.unwrap();
    let first = first.json();
    let tools = tools_of(&first["tools"]);
    let seed = first["metadata"]["seed"].as_u64().unwrap();
    let scenario = first["metadata"]["scenario_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut history: Vec<Message> = first["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(message_of)
        .collect();
    let mut last = first;
    for _ in 0..200 {
        if last["done"] == true {
            return last;
        }
        let (action, own) =
            policy_action(bed.policy.as_ref(), &history, &tools, seed, &scenario).await;
        history.push(own);
        let observation = live.step(&action).await.unwrap().json();
        history.extend(
            observation["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(message_of),
        );
        last = observation;
    }
    panic!("the episode did not end in 200 steps");
}

fn spec() -> JobSpec {
    JobSpec::default()
}

#[tokio::test]
async fn a_stepped_episode_driven_by_the_jobs_own_policy_model_stores_what_the_batch_episode_stores(
) {
    let bed = bed(spec(), 3).await;
    // The batch: the same job config run as a job (a job of its own).
    let ctx = jobs::Context::new(bed.store.clone(), Some(Arc::new(InProcessMock)));
    let report = jobs::run(&ctx, &bed.job, &RunOptions::default())
        .await
        .unwrap();
    let batch = bed
        .store
        .conversations_page(report.job.id, 0, 100)
        .await
        .unwrap();
    assert_eq!(batch.len(), 3);
    for b in &batch {
        let c = &b.conversation;
        let end = play(
            &bed,
            OpenRequest {
                scenario: sparring::stepped::request::ScenarioChoice::Id(c.scenario_id.clone()),
                persona: sparring::stepped::request::PersonaChoice::Id(c.persona_id.clone()),
                seed: Some(c.seed as u64),
                ..OpenRequest::default()
            },
        )
        .await;
        let id = end["metadata"]["conversation_id"].as_i64().unwrap();
        let stepped = bed.store.get_conversation(id).await.unwrap().unwrap();
        let shape = |m: &sparring::store::MessageRow| {
            (
                m.role.clone(),
                m.author.clone(),
                m.content.clone(),
                m.tool_calls.clone(),
            )
        };
        assert_eq!(
            stepped.messages.iter().map(shape).collect::<Vec<_>>(),
            b.messages.iter().map(shape).collect::<Vec<_>>(),
            "scenario {}: the stepped conversation differs from the batch one",
            c.scenario_id
        );
        let s = &stepped.conversation;
        assert_eq!(
            (s.termination.clone(), s.reward, s.reward_breakdown.clone()),
            (c.termination.clone(), c.reward, c.reward_breakdown.clone()),
            "scenario {}",
            c.scenario_id
        );
        assert_eq!(end["reward"].as_f64(), s.reward);
        assert_eq!(end["metadata"]["termination"], json!(s.termination));
        assert_eq!(s.user_checks, c.user_checks, "the same user checks");
        assert_eq!(s.policy_model, "external");
        assert_eq!(s.job_id, bed.host.job().id, "stored in the host's job");
    }
    let host_job = bed.store.get_job(bed.host.job().id).await.unwrap().unwrap();
    assert_eq!(host_job.name, "test (sessions)");
}

#[tokio::test]
async fn the_first_observation_holds_the_opening_and_tools_and_no_hidden_field() {
    let bed = bed(spec(), 6).await;
    let scenarios = sparring::persona::load::load_scenarios(bed.job.dataset.data()).unwrap();
    for scenario in &scenarios {
        let request = OpenRequest {
            scenario: sparring::stepped::request::ScenarioChoice::Id(scenario.id.clone()),
            seed: Some(3),
            ..OpenRequest::default()
        };
        let (_live, first) = bed
            .host
            .open_session(&Sessions::new_id(), request)
            .await
            .unwrap();
        let text = first.json().to_string();
        for hidden in [
            &scenario.user.task_instructions,
            &scenario.user.known_info,
            &scenario.user.unknown_info,
        ] {
            if hidden.len() > 20 {
                assert!(
                    !text.contains(hidden.as_str()),
                    "{}: shows {hidden}",
                    scenario.id
                );
            }
        }
        for action in &scenario.evaluation.actions {
            let args = serde_json::to_string(&action.arguments).unwrap();
            if args.len() < 8 {
                continue;
            }
            assert!(
                !text.contains(&args),
                "{}: shows gold arguments {args}",
                scenario.id
            );
        }
        let json = first.json();
        assert!(!json["tools"].as_array().unwrap().is_empty());
        assert_eq!(json["messages"][0]["role"], "system");
        assert_eq!(json["done"], false);
        assert!(json["reward"].is_null());
        assert_eq!(json["metadata"]["scenario_id"], json!(scenario.id));
    }
}

/// `sparring openenv`'s router over `bed`'s host, on a free loopback port.
async fn openenv(bed: &Bed, limits: Limits) -> (String, Arc<Sessions>) {
    let sessions = Sessions::new(limits);
    sessions.spawn_reaper();
    let state = OpenEnvState {
        host: bed.host.clone(),
        sessions: sessions.clone(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("127.0.0.1:{}", listener.local_addr().unwrap().port());
    tokio::spawn(async move { axum::serve(listener, openenv_router(state)).await });
    (url, sessions)
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(addr: &str) -> Ws {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .unwrap();
    ws
}

async fn send(ws: &mut Ws, message: Value) -> Value {
    ws.send(Frame::Text(message.to_string().into()))
        .await
        .unwrap();
    recv(ws).await
}

async fn recv(ws: &mut Ws) -> Value {
    loop {
        match tokio::time::timeout(Duration::from_secs(30), ws.next())
            .await
            .unwrap()
        {
            Some(Ok(Frame::Text(t))) => return serde_json::from_str(&t).unwrap(),
            Some(Ok(Frame::Close(_))) | None => return Value::Null,
            Some(Ok(_)) => continue,
            Some(Err(e)) => panic!("{e}"),
        }
    }
}

fn limits(max: usize, idle_secs: u64) -> Limits {
    Limits {
        max_sessions: max,
        idle: Duration::from_secs(idle_secs),
    }
}

#[tokio::test]
async fn over_the_websocket_an_episode_ends_with_the_reward_it_stored() {
    let bed = bed(spec(), 2).await;
    let (addr, sessions) = openenv(&bed, limits(4, 60)).await;
    let mut ws = connect(&addr).await;
    let first = send(
        &mut ws,
        json!({"type": "reset", "data": {"scenario_id": "retail-002-brightest-rechargeable-lantern", "seed": 11, "model": "trainer-step-3"}}),
    )
    .await;
    assert_eq!(first["type"], "observation", "{first}");
    let observation = &first["data"]["observation"];
    let tools = tools_of(&observation["tools"]);
    let scenario = observation["metadata"]["scenario_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut history: Vec<Message> = observation["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(message_of)
        .collect();
    let mut last = first["data"].clone();
    while last["done"] != true {
        let (action, own) =
            policy_action(bed.policy.as_ref(), &history, &tools, 11, &scenario).await;
        history.push(own);
        let reply = send(&mut ws, json!({"type": "step", "data": action})).await;
        assert_eq!(reply["type"], "observation", "{reply}");
        history.extend(
            reply["data"]["observation"]["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(message_of),
        );
        last = reply["data"].clone();
    }
    let id = last["observation"]["metadata"]["conversation_id"]
        .as_i64()
        .unwrap();
    let stored = bed.store.get_conversation(id).await.unwrap().unwrap();
    assert_eq!(last["reward"].as_f64(), stored.conversation.reward);
    assert!(stored.conversation.reward.is_some());
    assert_eq!(stored.conversation.policy_model, "trainer-step-3");
    let state = send(&mut ws, json!({"type": "state"})).await;
    assert_eq!(state["data"]["done"], true);
    assert_eq!(state["data"]["end"]["conversation_id"], json!(id));
    // A step after the end: a clear error, nothing changed.
    let after = send(
        &mut ws,
        json!({"type": "step", "data": {"content": "anything else?"}}),
    )
    .await;
    assert_eq!(after["data"]["code"], "EXECUTION_ERROR", "{after}");
    assert_eq!(after["data"]["kind"], "ended");
    assert_eq!(after["data"]["conversation_id"], json!(id));
    // A reset on the same connection starts another episode.
    let again = send(&mut ws, json!({"type": "reset", "data": {"seed": 1}})).await;
    assert_eq!(again["type"], "observation");
    assert_eq!(sessions.active(), 1);
    send(&mut ws, json!({"type": "close"})).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(sessions.active(), 0, "closing gives the place back");
}

#[tokio::test]
async fn a_wrong_message_names_its_field_and_the_session_goes_on() {
    let bed = bed(spec(), 1).await;
    let (addr, _) = openenv(&bed, limits(4, 60)).await;
    let mut ws = connect(&addr).await;
    let before = send(&mut ws, json!({"type": "step", "data": {"content": "hi"}})).await;
    assert_eq!(
        (
            before["data"]["code"].as_str(),
            before["data"]["kind"].as_str()
        ),
        (Some("EXECUTION_ERROR"), Some("not_started"))
    );
    let bad_reset = send(&mut ws, json!({"type": "reset", "data": {"seed": "seven"}})).await;
    assert_eq!(bad_reset["data"]["code"], "VALIDATION_ERROR");
    assert_eq!(bad_reset["data"]["field"], "data.seed");
    let unknown = send(
        &mut ws,
        json!({"type": "reset", "data": {"scenario_id": "no-such"}}),
    )
    .await;
    assert_eq!(unknown["data"]["field"], "scenario_id", "{unknown}");
    let ok = send(&mut ws, json!({"type": "reset", "data": {"seed": 5}})).await;
    assert_eq!(ok["type"], "observation");
    for (action, field) in [
        (json!({"content": 7}), "action.content"),
        (json!({"role": "user", "content": "x"}), "action.role"),
        (
            json!({"tool_calls": [{"function": {"arguments": "{}"}}]}),
            "action.tool_calls[0].function.name",
        ),
        (
            json!({"content": "x", "prompt_token_ids": [1]}),
            "action.generation_token_ids",
        ),
        (json!("just text"), "action"),
    ] {
        let reply = send(&mut ws, json!({"type": "step", "data": action})).await;
        assert_eq!(reply["data"]["code"], "VALIDATION_ERROR", "{reply}");
        assert_eq!(reply["data"]["field"], field, "{reply}");
    }
    let not_json = {
        ws.send(Frame::Text("{not json".into())).await.unwrap();
        recv(&mut ws).await
    };
    assert_eq!(not_json["data"]["code"], "INVALID_JSON");
    let unknown_type = send(&mut ws, json!({"type": "jump"})).await;
    assert_eq!(unknown_type["data"]["code"], "UNKNOWN_TYPE");
    let extra = send(&mut ws, json!({"type": "state", "data": {}})).await;
    assert_eq!(extra["data"]["code"], "VALIDATION_ERROR");
    // A 10 MB action is read, refused by its size, and the session goes on.
    let huge = json!({"type": "step", "data": {"content": "x".repeat(10 * 1024 * 1024)}});
    let refused = send(&mut ws, huge).await;
    assert_eq!(refused["data"]["code"], "VALIDATION_ERROR");
    assert!(
        refused["data"]["message"]
            .as_str()
            .unwrap()
            .contains("2 MiB"),
        "{refused}"
    );
    let state = send(&mut ws, json!({"type": "state"})).await;
    assert_eq!(
        state["data"]["step_count"], 0,
        "no wrong step was taken: {state}"
    );
    let fine = send(
        &mut ws,
        json!({"type": "step", "data": {"content": "How can I help you?"}}),
    )
    .await;
    assert_eq!(fine["type"], "observation", "{fine}");
    // MCP's tool listing, as OpenEnv exposes it.
    let listed = send(
        &mut ws,
        json!({"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}),
    )
    .await;
    assert!(
        listed["data"]["result"]["tools"].as_array().unwrap().len() > 3,
        "{listed}"
    );
    assert!(listed["data"]["result"]["tools"][0]["inputSchema"].is_object());
}

#[tokio::test]
async fn capacity_is_max_concurrent_envs_and_a_dropped_connection_stores_nothing() {
    let bed = bed(spec(), 2).await;
    let (addr, sessions) = openenv(&bed, limits(2, 60)).await;
    let mut a = connect(&addr).await;
    let mut b = connect(&addr).await;
    let first = send(&mut a, json!({"type": "reset", "data": {"seed": 1}})).await;
    assert_eq!(first["type"], "observation");
    send(&mut b, json!({"type": "reset", "data": {"seed": 2}})).await;
    let mut c = connect(&addr).await;
    let full = recv(&mut c).await;
    assert_eq!(full["data"]["code"], "CAPACITY_REACHED", "{full}");
    assert_eq!(
        (
            full["data"]["active_sessions"].as_u64(),
            full["data"]["max_sessions"].as_u64()
        ),
        (Some(2), Some(2))
    );
    // `a` goes away mid-episode: its place comes back, nothing is stored.
    let step = send(
        &mut a,
        json!({"type": "step", "data": {"content": "Could you tell me your email?"}}),
    )
    .await;
    assert_eq!(step["type"], "observation");
    drop(a);
    for _ in 0..50 {
        if sessions.active() < 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(sessions.active(), 1);
    let stored = bed
        .store
        .conversations_page(bed.host.job().id, 0, 100)
        .await
        .unwrap();
    assert!(
        stored.is_empty(),
        "a session that never ended stored {}",
        stored.len()
    );
    let counts = bed.store.item_counts(bed.host.job().id).await.unwrap();
    assert_eq!(
        counts.done + counts.pending + counts.leased + counts.failed,
        0,
        "no item either"
    );
    let mut d = connect(&addr).await;
    let reset = send(&mut d, json!({"type": "reset", "data": {}})).await;
    assert_eq!(
        reset["type"], "observation",
        "a place was free again: {reset}"
    );
}

#[tokio::test]
async fn http_reset_and_step_continue_one_session_until_it_idles_out() {
    let bed = bed(spec(), 1).await;
    let (addr, _) = openenv(&bed, limits(4, 1)).await;
    let client = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        client
            .post(format!("http://{addr}{path}"))
            .json(&body)
            .send()
    };
    let reset: Value = post("/reset", json!({"seed": 4}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reset["done"], false);
    let id = reset["observation"]["metadata"]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let step = post(
        "/step",
        json!({"session_id": id, "action": {"content": "Hello, how can I help?"}}),
    )
    .await
    .unwrap();
    assert_eq!(step.status(), 200);
    let step: Value = step.json().await.unwrap();
    assert!(!step["observation"]["messages"]
        .as_array()
        .unwrap()
        .is_empty());
    let bad = post(
        "/step",
        json!({"session_id": id, "action": {"tool_calls": "x"}}),
    )
    .await
    .unwrap();
    assert_eq!(bad.status(), 422);
    let bad: Value = bad.json().await.unwrap();
    assert_eq!(
        bad["detail"][0]["loc"],
        json!(["body", "action", "tool_calls"])
    );
    let without = post("/step", json!({"action": {"content": "hi"}}))
        .await
        .unwrap();
    assert_eq!(without.status(), 422);
    let unknown = post(
        "/step",
        json!({"session_id": "ses_nope", "action": {"content": "hi"}}),
    )
    .await
    .unwrap();
    assert_eq!(unknown.status(), 404);
    let schema: Value = client
        .get(format!("http://{addr}/schema"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(schema["action"]["title"], "SparringAction");
    assert!(schema["observation"]["properties"]["messages"].is_object());
    let health: Value = client
        .get(format!("http://{addr}/health"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "healthy");
    tokio::time::sleep(Duration::from_millis(2600)).await;
    let expired = post(
        "/step",
        json!({"session_id": id, "action": {"content": "still there?"}}),
    )
    .await
    .unwrap();
    assert_eq!(expired.status(), 410);
    let expired: Value = expired.json().await.unwrap();
    assert_eq!(expired["kind"], "expired");
    assert_eq!(expired["code"], "SESSION_ERROR");
    let stored = bed
        .store
        .conversations_page(bed.host.job().id, 0, 10)
        .await
        .unwrap();
    assert!(stored.is_empty(), "an expired session stores nothing");
}

#[tokio::test]
async fn the_services_session_api_is_behind_its_token_and_data_root() {
    let service = crate::common::Service::start("sessions-token-0123456789").await;
    let config = service.job("svc", 2, "");
    std::fs::write(service.dir.path().join("job.toml"), &config).unwrap();
    let no_token = service
        .client
        .post(format!("{}/v1/sessions", service.url))
        .json(&json!({"config": "job.toml"}))
        .send()
        .await
        .unwrap();
    assert_eq!(no_token.status(), 401);
    let outside = service
        .post("/v1/sessions")
        .json(&json!({"config": "../job.toml"}))
        .send()
        .await
        .unwrap();
    assert_eq!(outside.status(), 422);
    let opened = service
        .post("/v1/sessions")
        .json(&json!({"config": "job.toml", "seed": 9}))
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 201);
    let location = opened.headers()["location"].to_str().unwrap().to_string();
    let first: Value = opened.json().await.unwrap();
    let id = first["metadata"]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(location, format!("/v1/sessions/{id}"));
    let bad = service
        .post(&format!("/v1/sessions/{id}/step"))
        .json(&json!({"content": "x", "usage": {"prompt_tokens": -1}}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 422);
    let bad: Value = bad.json().await.unwrap();
    assert_eq!(bad["errors"][0]["location"], "action.usage.prompt_tokens");
    let step = service
        .post(&format!("/v1/sessions/{id}/step"))
        .json(&json!({"content": "Hello! How can I help you today?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(step.status(), 200);
    let closed: Value = service
        .authorized_delete(&format!("/v1/sessions/{id}"))
        .await;
    assert_eq!(closed["closed"], true);
    let after = service
        .post(&format!("/v1/sessions/{id}/step"))
        .json(&json!({"content": "hello?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 410);
    let after: Value = after.json().await.unwrap();
    assert_eq!(after["kind"], "closed");
    let unknown = service.get("/v1/sessions/ses_000").send().await.unwrap();
    assert_eq!(unknown.status(), 404);
}
