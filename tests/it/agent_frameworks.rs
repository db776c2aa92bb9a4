//! The real agent frameworks sparring's agent policy kinds are tested against
//! (issues 29 and 39), each a small agent in `tests/agents/` with the orders
//! desk's two tools as its own and sparring's mock as its model: an OpenAI
//! Agents SDK agent behind the Responses contract, a LangGraph graph behind
//! `langgraph dev`, an A2A server built with `a2a-sdk` (and the same with A2A
//! 1.0 alone), a Google ADK agent behind `adk api_server` and behind ADK's
//! A2A server, a pydantic-ai agent behind fasta2a, a Strands agent behind
//! Strands' A2A server, and an agent that fails on purpose. They run on the
//! python of `scripts/agent-frameworks`, named by
//! `SPARRING_AGENT_FRAMEWORKS_PYTHON` (Strands on its own,
//! `SPARRING_AGENT_FRAMEWORKS_STRANDS_PYTHON`; skipped without them).
//!
//! [`start_agent`] is for every test that needs one of them; the tests here
//! drive each over raw HTTP, as the policy kinds will, and hold the shapes of
//! their answers (docs/agents-under-test.md shows them).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sparring::config::MockConfig;
use sparring::mock_llm::openings::opening;
use sparring::mock_llm::user::first_person;
use sparring::mock_llm::MockServer;
use sparring::persona::Scenario;

use crate::common::repo;

/// The model the agents ask for: the mock policy without its deliberate
/// flaws, so every conversation makes the gold calls and states the facts.
pub const AGENT_MODEL: &str = "mock-policy+perfect";

/// Which agent of `tests/agents/` to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentKind {
    /// `openai_agents_server.py`: the Responses contract at `/v1/responses`.
    OpenAiAgents,
    /// `langgraph_agent/` under `langgraph dev`: `/threads/{id}/runs/wait`.
    LangGraph,
    /// `a2a_agent.py`: JSON-RPC at `/`, the card at `/.well-known/agent-card.json`.
    A2a,
    /// `a2a_agent.py --v1-only`: A2A 1.0 alone, streaming.
    A2aV1,
    /// `adk_agent/` under `adk api_server`: `/apps/orders_desk/...`, `/run`, `/run_sse`.
    AdkRest,
    /// `adk_a2a.py`: ADK's A2A server (`to_a2a`) over the same agent.
    AdkA2a,
    /// `pydantic_ai_agent.py`: pydantic-ai behind fasta2a.
    PydanticAi,
    /// `strands_agent.py`: Strands behind its A2A server (its own venv).
    Strands,
    /// `faulty_agent.py`: fails as its path's first segment says.
    Faulty,
    /// `path_recorder.py`: uvicorn, recording every path it is sent.
    PathRecorder,
}

impl AgentKind {
    /// The path that answers 200 once the agent is up.
    fn ready_path(self) -> &'static str {
        match self {
            AgentKind::LangGraph => "/ok",
            AgentKind::AdkRest => "/list-apps",
            AgentKind::PathRecorder => "/seen",
            _ => "/health",
        }
    }
}

/// An agent process on a loopback port; its process group is stopped on drop.
pub struct RunningAgent {
    child: Child,
    base_url: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl RunningAgent {
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// What the agent wrote to stdout and stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for RunningAgent {
    fn drop(&mut self) {
        // The child leads its own process group (`process_group(0)`), which
        // holds whatever it spawned (`langgraph dev`'s server).
        let group = format!("-{}", self.child.id());
        let signal = |name: &str| {
            let _ = Command::new("kill")
                .args([name, "--", &group])
                .stderr(Stdio::null())
                .status();
        };
        signal("-TERM");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                signal("-KILL");
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        signal("-KILL");
        let _ = self.child.wait();
    }
}

/// The python of Strands' venv (`scripts/agent-frameworks strands`), or
/// `None` after saying the test is skipped.
pub fn strands_python() -> Option<PathBuf> {
    match std::env::var("SPARRING_AGENT_FRAMEWORKS_STRANDS_PYTHON") {
        Ok(python) if !python.is_empty() => Some(PathBuf::from(python)),
        _ => {
            println!(
                "SKIPPED: the Strands agent needs Python with strands-agents[a2a,openai]; set \
                 SPARRING_AGENT_FRAMEWORKS_STRANDS_PYTHON (scripts/agent-frameworks strands \
                 prints it)"
            );
            None
        }
    }
}

/// The python of `scripts/agent-frameworks`, or `None` after saying the test
/// is skipped.
pub fn frameworks_python() -> Option<PathBuf> {
    match std::env::var("SPARRING_AGENT_FRAMEWORKS_PYTHON") {
        Ok(python) if !python.is_empty() => Some(PathBuf::from(python)),
        _ => {
            println!(
                "SKIPPED: the framework agents need Python with openai-agents, langgraph-cli and \
                 a2a-sdk; set SPARRING_AGENT_FRAMEWORKS_PYTHON (scripts/agent-frameworks prints it)"
            );
            None
        }
    }
}

/// The orders desk's scenarios (`tests/agents/data/scenarios.jsonl`).
pub fn orders_scenarios_path() -> PathBuf {
    repo().join("tests/agents/data/scenarios.jsonl")
}

pub fn orders_scenarios() -> Vec<Scenario> {
    sparring::persona::load::load_scenarios(&orders_scenarios_path())
        .unwrap_or_else(|problems| panic!("{problems:?}"))
}

pub fn orders_scenario(id: &str) -> Scenario {
    orders_scenarios()
        .into_iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("no scenario {id} in {}", orders_scenarios_path().display()))
}

/// The mock model server playing the orders desk's scenarios (what
/// `sparring mock-llm --scenarios tests/agents/data/scenarios.jsonl` serves):
/// the agents' model.
pub async fn orders_mock() -> MockServer {
    orders_mock_with(Vec::new()).await
}

/// [`orders_mock`] playing `extra` scenarios too.
pub async fn orders_mock_with(extra: Vec<Scenario>) -> MockServer {
    let mut scenarios = orders_scenarios();
    scenarios.extend(extra);
    MockServer::start(([127, 0, 0, 1], 0).into(), scenarios, MockConfig::default())
        .await
        .unwrap()
}

/// Start `kind` with the mock at `mock_base_url` (`.../v1`) as its model,
/// asking for [`AGENT_MODEL`]; `None` (and a SKIPPED line) without the
/// frameworks' python.
pub async fn start_agent(kind: AgentKind, mock_base_url: &str) -> Option<RunningAgent> {
    start_agent_with_model(kind, mock_base_url, AGENT_MODEL).await
}

/// [`start_agent`] asking the mock for `model`.
pub async fn start_agent_with_model(
    kind: AgentKind,
    mock_base_url: &str,
    model: &str,
) -> Option<RunningAgent> {
    let python = match kind {
        AgentKind::Strands => strands_python()?,
        _ => frameworks_python()?,
    };
    let agents = repo().join("tests/agents");
    let dir = tempfile::tempdir().unwrap();
    let port = crate::common::free_port();
    let port_text = port.to_string();
    let mut command = match kind {
        AgentKind::OpenAiAgents => script(&python, &agents.join("openai_agents_server.py")),
        AgentKind::A2a => script(&python, &agents.join("a2a_agent.py")),
        AgentKind::A2aV1 => {
            let mut command = script(&python, &agents.join("a2a_agent.py"));
            command.arg("--v1-only");
            command
        }
        AgentKind::AdkRest => adk_api_server(&python, &agents, dir.path()),
        AgentKind::AdkA2a => script(&python, &agents.join("adk_a2a.py")),
        AgentKind::PydanticAi => script(&python, &agents.join("pydantic_ai_agent.py")),
        AgentKind::Strands => script(&python, &agents.join("strands_agent.py")),
        AgentKind::Faulty => script(&python, &agents.join("faulty_agent.py")),
        AgentKind::PathRecorder => script(&python, &agents.join("path_recorder.py")),
        AgentKind::LangGraph => langgraph_dev(&python, &agents, dir.path()),
    };
    let log = dir.path().join("agent.log");
    let out = std::fs::File::create(&log).unwrap();
    let err = out.try_clone().unwrap();
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command
        .args(["--host", "127.0.0.1", "--port", &port_text])
        .env("OPENAI_BASE_URL", mock_base_url)
        .env("OPENAI_API_KEY", "none")
        .env("AGENT_MODEL", model)
        .env("LANGGRAPH_CLI_NO_ANALYTICS", "1")
        .env("LANGSMITH_TRACING", "false")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {kind:?} with {}: {e}", python.display()));
    let mut agent = RunningAgent {
        child,
        base_url: format!("http://127.0.0.1:{port}"),
        log,
        _dir: dir,
    };
    wait_until_ready(&mut agent, kind).await;
    Some(agent)
}

fn script(python: &Path, file: &Path) -> Command {
    let mut command = Command::new(python);
    command.arg(file);
    command
}

/// `langgraph dev` over a copy of `tests/agents/langgraph_agent` (and the
/// `orders.py` it imports) in `dir`: the server resolves the graph's path
/// from its working directory and keeps its state in `.langgraph_api/` there.
fn langgraph_dev(python: &Path, agents: &Path, dir: &Path) -> Command {
    let copy = dir.join("agents");
    let graph_dir = copy.join("langgraph_agent");
    std::fs::create_dir_all(&graph_dir).unwrap();
    std::fs::copy(agents.join("orders.py"), copy.join("orders.py")).unwrap();
    for file in ["langgraph.json", "graph.py"] {
        std::fs::copy(
            agents.join("langgraph_agent").join(file),
            graph_dir.join(file),
        )
        .unwrap();
    }
    let langgraph = python.with_file_name("langgraph");
    let mut command = Command::new(langgraph);
    command
        .args([
            "dev",
            "--no-browser",
            "--no-reload",
            "--n-jobs-per-worker",
            "8",
        ])
        .current_dir(&graph_dir);
    command
}

/// `adk api_server` over a copy of `tests/agents/adk_agent` (and the
/// `orders.py` its agent imports) in `dir`: ADK keeps files of its own
/// (`.adk/`) in the agent's folder.
fn adk_api_server(python: &Path, agents: &Path, dir: &Path) -> Command {
    let copy = dir.join("agents");
    let app = copy.join("adk_agent").join("orders_desk");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::copy(agents.join("orders.py"), copy.join("orders.py")).unwrap();
    for file in ["__init__.py", "agent.py"] {
        std::fs::copy(
            agents.join("adk_agent").join("orders_desk").join(file),
            app.join(file),
        )
        .unwrap();
    }
    let mut command = Command::new(python.with_file_name("adk"));
    command
        .args(["api_server", "--no-reload"])
        .arg(copy.join("adk_agent"));
    command
}

/// A client for the agents (reqwest is built without a crypto provider of
/// its own), giving up after `timeout`.
pub fn http_client(timeout: Duration) -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().timeout(timeout).build().unwrap()
}

/// Poll the agent's ready path for up to 90 s (`langgraph dev` imports a
/// lot); panic with its log if it exits or never answers.
async fn wait_until_ready(agent: &mut RunningAgent, kind: AgentKind) {
    let client = http_client(Duration::from_secs(2));
    let url = format!("{}{}", agent.base_url, kind.ready_path());
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Ok(response) = client.get(&url).send().await {
            if response.status().is_success() {
                return;
            }
        }
        if let Ok(Some(status)) = agent.child.try_wait() {
            panic!(
                "{kind:?} exited ({status}) before answering; its log:\n{}",
                agent.log()
            );
        }
        assert!(
            Instant::now() < deadline,
            "{kind:?} gave no answer on {url} in 90 s; its log:\n{}",
            agent.log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The orders mock, `kind` over it, and a client with a minute's patience;
/// `None` when skipped.
async fn mock_and_agent(kind: AgentKind) -> Option<(MockServer, RunningAgent, reqwest::Client)> {
    let mock = orders_mock().await;
    let agent = start_agent(kind, &mock.base_url()).await?;
    Some((mock, agent, http_client(Duration::from_secs(60))))
}

/// What the mock user says once asked to identify itself.
fn identifies(scenario: &Scenario) -> String {
    format!("Sure. {}", first_person(&scenario.user.known_info))
}

const CONFIRMS: &str = "Yes, please go ahead.";

async fn post(
    client: &reqwest::Client,
    url: &str,
    body: &Value,
    cookie: Option<&str>,
) -> (u16, reqwest::header::HeaderMap, String) {
    let mut request = client.post(url).json(body);
    if let Some(cookie) = cookie {
        request = request.header("Cookie", cookie);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.unwrap())
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The Responses output's items of one type.
fn items<'a>(output: &'a Value, kind: &str) -> Vec<&'a Value> {
    output
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == kind)
        .collect()
}

fn reply_text(output: &Value) -> String {
    let messages = items(output, "message");
    assert_eq!(messages.len(), 1, "one assistant message: {output}");
    messages[0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Each `function_call` of `output` with its `function_call_output` (same
/// `call_id`), as (name, arguments, output).
fn pairs(output: &Value) -> Vec<(String, Value, String)> {
    let outputs = items(output, "function_call_output");
    items(output, "function_call")
        .into_iter()
        .map(|call| {
            let answer = outputs
                .iter()
                .find(|o| o["call_id"] == call["call_id"])
                .unwrap_or_else(|| panic!("no output for {call} in {output}"));
            (
                call["name"].as_str().unwrap().to_string(),
                json_of(call["arguments"].as_str().unwrap()),
                answer["output"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_sdk_agent_runs_its_own_tools_and_refuses_a_call_without_its_cookie() {
    let Some((_mock, agent, client)) = mock_and_agent(AgentKind::OpenAiAgents).await else {
        return;
    };
    let scenario = orders_scenario("orders-002-cancel-the-socks");
    let url = format!("{}/v1/responses", agent.base_url());

    let mut input = vec![user(&opening(&scenario))];
    let (status, headers, body) = post(&client, &url, &json!({"input": input}), None).await;
    assert_eq!(status, 200, "{body}\n{}", agent.log());
    let set_cookie = headers["set-cookie"].to_str().unwrap();
    let cookie = set_cookie.split(';').next().unwrap().to_string();
    assert!(cookie.starts_with("agent_session="), "{set_cookie}");
    let first = json_of(&body);
    assert_eq!(first["object"], "response");
    assert!(pairs(&first["output"]).is_empty(), "{first}");
    assert!(reply_text(&first["output"]).contains("email"), "{first}");

    input.extend(first["output"].as_array().unwrap().iter().cloned());
    input.push(user(&identifies(&scenario)));
    let (status, _, body) = post(&client, &url, &json!({"input": input}), None).await;
    assert_eq!(status, 400, "a later call without the cookie: {body}");
    assert!(body.contains("agent_session"), "{body}");

    let (status, headers, body) =
        post(&client, &url, &json!({"input": input}), Some(&cookie)).await;
    assert_eq!(status, 200, "{body}\n{}", agent.log());
    assert!(
        !headers.contains_key("set-cookie"),
        "one cookie per conversation"
    );
    let second = json_of(&body);
    let made = pairs(&second["output"]);
    assert_eq!(made.len(), 1, "{second}");
    assert_eq!(made[0].0, "get_order_status");
    assert_eq!(made[0].1, json!({"order_id": "#A1001"}));
    assert!(made[0].2.contains("\"pending\""), "{}", made[0].2);
    assert!(
        reply_text(&second["output"]).contains("(yes/no)"),
        "{second}"
    );
    // The pairs come before the reply, each call before its output.
    let kinds: Vec<&str> = second["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["function_call", "function_call_output", "message"]);

    input.extend(second["output"].as_array().unwrap().iter().cloned());
    input.push(user(CONFIRMS));
    let (status, _, body) = post(&client, &url, &json!({"input": input}), Some(&cookie)).await;
    assert_eq!(status, 200, "{body}\n{}", agent.log());
    let third = json_of(&body);
    let made = pairs(&third["output"]);
    assert_eq!(made.len(), 1, "{third}");
    assert_eq!(made[0].0, "cancel_order");
    assert_eq!(
        made[0].1,
        json!({"order_id": "#A1001", "reason": "no longer needed"})
    );
    assert!(made[0].2.contains("CX-1001"), "{}", made[0].2);
    for fact in &scenario.evaluation.communicate {
        assert!(
            reply_text(&third["output"]).contains(fact.as_str()),
            "{fact} in {third}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_of_a_tool_the_caller_hosts_goes_out_unpaired_and_its_output_comes_back() {
    // The desk must first look the customer up with a tool only the caller
    // has (as sparring hosts an environment's tools), then uses its own.
    let scenario: Scenario = serde_json::from_value(json!({
        "id": "hosted-lookup",
        "user": {
            "reason_for_contact": "You want to know where your lantern is, and the desk must look you up first.",
            "known_info": "Your email is ada@example.com. Your order id is #A1002.",
            "task_instructions": "Ask where the lantern is."
        },
        "evaluation": {
            "actions": [
                {"name": "find_customer", "arguments": {"email": "ada@example.com"}},
                {"name": "get_order_status", "arguments": {"order_id": "#A1002"}}
            ],
            "communicate": ["PL4471902"],
            "reward_basis": ["communicate"]
        }
    }))
    .unwrap();
    let mock = orders_mock_with(vec![scenario.clone()]).await;
    let Some(agent) = start_agent(AgentKind::OpenAiAgents, &mock.base_url()).await else {
        return;
    };
    let client = http_client(Duration::from_secs(60));
    let url = format!("{}/v1/responses", agent.base_url());
    let tools = json!([{
        "type": "function",
        "name": "find_customer",
        "description": "Find a customer by email.",
        "parameters": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}
    }]);

    let mut input = vec![user(&opening(&scenario))];
    let body = json!({"input": input, "tools": tools});
    let (status, headers, text) = post(&client, &url, &body, None).await;
    assert_eq!(status, 200, "{text}\n{}", agent.log());
    let cookie = headers["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    input.extend(json_of(&text)["output"].as_array().unwrap().iter().cloned());
    input.push(user(&identifies(&scenario)));

    let body = json!({"input": input, "tools": tools});
    let (status, _, text) = post(&client, &url, &body, Some(&cookie)).await;
    assert_eq!(status, 200, "{text}\n{}", agent.log());
    let asked = json_of(&text)["output"].clone();
    assert_eq!(
        asked.as_array().unwrap().len(),
        1,
        "only the unpaired call: {asked}"
    );
    let call = &asked[0];
    assert_eq!(
        (call["type"].as_str(), call["name"].as_str()),
        (Some("function_call"), Some("find_customer"))
    );
    assert_eq!(
        json_of(call["arguments"].as_str().unwrap()),
        json!({"email": "ada@example.com"})
    );

    input.extend(asked.as_array().unwrap().iter().cloned());
    input.push(json!({
        "type": "function_call_output",
        "call_id": call["call_id"],
        "output": "{\"customer_id\": \"c-7\", \"name\": \"Ada\"}"
    }));
    let body = json!({"input": input, "tools": tools});
    let (status, _, text) = post(&client, &url, &body, Some(&cookie)).await;
    assert_eq!(status, 200, "{text}\n{}", agent.log());
    let done = json_of(&text)["output"].clone();
    let made = pairs(&done);
    assert_eq!(made.len(), 1, "{done}");
    assert_eq!(
        (made[0].0.as_str(), &made[0].1),
        ("get_order_status", &json!({"order_id": "#A1002"}))
    );
    assert!(reply_text(&done).contains("PL4471902"), "{done}");
}

/// A LangGraph thread id: a UUID (the server refuses anything else).
fn thread_id() -> String {
    let n: u128 = rand::random();
    let hex = format!("{n:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

fn langgraph_run(message: &str) -> Value {
    json!({
        "assistant_id": "orders",
        "input": {"messages": [{"role": "user", "content": message}]},
        "if_not_exists": "create"
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_langgraph_agent_keeps_the_thread_and_reports_each_runs_reply_and_trace() {
    let Some((_mock, agent, client)) = mock_and_agent(AgentKind::LangGraph).await else {
        return;
    };
    let scenario = orders_scenario("orders-001-where-is-the-lantern");
    let thread = thread_id();
    let url = format!("{}/threads/{thread}/runs/wait", agent.base_url());

    let (status, _, body) = post(&client, &url, &langgraph_run(&opening(&scenario)), None).await;
    assert_eq!(status, 200, "{body}\n{}", agent.log());
    let first = json_of(&body);
    assert!(
        first["reply"].as_str().unwrap().contains("email"),
        "{first}"
    );
    assert_eq!(first["trace"], json!([]));

    let (status, _, body) = post(&client, &url, &langgraph_run(&identifies(&scenario)), None).await;
    assert_eq!(status, 200, "{body}\n{}", agent.log());
    let second = json_of(&body);
    let trace = second["trace"].as_array().unwrap();
    assert_eq!(trace.len(), 1, "{second}");
    assert_eq!(trace[0]["name"], "get_order_status");
    assert_eq!(trace[0]["arguments"], json!({"order_id": "#A1002"}));
    assert!(trace[0]["output"].as_str().unwrap().contains("PL4471902"));
    let reply = second["reply"].as_str().unwrap();
    assert!(reply.contains("PL4471902"), "{reply}");
    // The thread holds the whole conversation: human, ai, human, ai's call,
    // the tool's answer, ai.
    let messages = second["messages"].as_array().unwrap();
    let types: Vec<&str> = messages
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["human", "ai", "human", "ai", "tool", "ai"]);
    assert_eq!(messages.last().unwrap()["content"], reply);

    // A thread the server does not know, without `if_not_exists`: 404.
    let lost = format!("{}/threads/{}/runs/wait", agent.base_url(), thread_id());
    let body = json!({"assistant_id": "orders", "input": {"messages": [user("hello")]}});
    let (status, _, text) = post(&client, &lost, &body, None).await;
    assert_eq!(status, 404, "{text}");
}

fn a2a_send(id: u64, text: &str, context: Option<&str>, task: Option<&str>) -> Value {
    let mut message = json!({
        "kind": "message",
        "messageId": format!("m{id}"),
        "role": "user",
        "parts": [{"kind": "text", "text": text}]
    });
    if let Some(context) = context {
        message["contextId"] = json!(context);
    }
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "message/send", "params": {"message": message}})
}

/// The tool calls of a task's artifacts named `tool_calls`, in order.
fn a2a_calls(task: &Value) -> Vec<Value> {
    task["artifacts"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .filter(|a| a["name"] == "tool_calls")
        .flat_map(|a| {
            a["parts"][0]["data"]["tool_calls"]
                .as_array()
                .unwrap()
                .clone()
        })
        .collect()
}

fn a2a_reply(task: &Value) -> String {
    task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_a2a_agent_keeps_each_context_and_reports_its_tool_calls_as_data_artifacts() {
    let Some((_mock, agent, client)) = mock_and_agent(AgentKind::A2a).await else {
        return;
    };
    let scenario = orders_scenario("orders-004-cancel-the-stove");
    let root = format!("{}/", agent.base_url());

    let card = client
        .get(format!("{}/.well-known/agent-card.json", agent.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(card.status(), 200);
    let card = json_of(&card.text().await.unwrap());
    assert_eq!(card["name"], "orders desk");
    assert_eq!(card["url"], root.as_str(), "{card}");
    assert_eq!(card["preferredTransport"], "JSONRPC");

    let (status, _, body) = post(
        &client,
        &root,
        &a2a_send(1, &opening(&scenario), None, None),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}\n{}", agent.log());
    let first = json_of(&body)["result"].clone();
    assert_eq!(first["kind"], "task", "{first}");
    assert_eq!(first["status"]["state"], "input-required", "{first}");
    assert!(a2a_reply(&first).contains("email"));
    assert!(a2a_calls(&first).is_empty());
    let context = first["contextId"].as_str().unwrap().to_string();
    let task = first["id"].as_str().unwrap().to_string();

    let send = a2a_send(2, &identifies(&scenario), Some(&context), Some(&task));
    let (status, _, body) = post(&client, &root, &send, None).await;
    assert_eq!(status, 200, "{body}\n{}", agent.log());
    let second = json_of(&body)["result"].clone();
    assert_eq!(second["contextId"], context.as_str(), "the context is kept");
    assert_eq!(
        second["id"],
        task.as_str(),
        "an input-required task goes on"
    );
    assert_eq!(second["status"]["state"], "input-required", "{second}");
    assert!(a2a_reply(&second).contains("(yes/no)"));
    let calls = a2a_calls(&second);
    assert_eq!(calls.len(), 1, "{second}");
    assert_eq!(calls[0]["name"], "get_order_status");
    assert_eq!(calls[0]["arguments"], json!({"order_id": "#A1004"}));

    let send = a2a_send(3, CONFIRMS, Some(&context), Some(&task));
    let (status, _, body) = post(&client, &root, &send, None).await;
    assert_eq!(status, 200, "{body}\n{}", agent.log());
    let third = json_of(&body)["result"].clone();
    assert_eq!(third["status"]["state"], "completed", "{third}");
    // A continued task's artifacts accumulate: this turn's calls are the new one.
    let calls = a2a_calls(&third);
    assert_eq!(calls.len(), 2, "{third}");
    assert_eq!(calls[1]["name"], "cancel_order");
    assert_eq!(
        calls[1]["arguments"],
        json!({"order_id": "#A1004", "reason": "ordered by mistake"})
    );
    assert!(calls[1]["output"].as_str().unwrap().contains("CX-1004"));
    for fact in &scenario.evaluation.communicate {
        assert!(
            a2a_reply(&third).contains(fact.as_str()),
            "{fact} in {third}"
        );
    }

    // Another context is another conversation, with its own orders table:
    // the stove cancelled above is still pending there.
    let other = orders_scenario("orders-004-cancel-the-stove");
    let (_, _, body) = post(
        &client,
        &root,
        &a2a_send(4, &opening(&other), None, None),
        None,
    )
    .await;
    let fresh = json_of(&body)["result"].clone();
    assert_ne!(fresh["contextId"], context.as_str());
    let send = a2a_send(
        5,
        &identifies(&other),
        fresh["contextId"].as_str(),
        fresh["id"].as_str(),
    );
    let (_, _, body) = post(&client, &root, &send, None).await;
    let calls = a2a_calls(&json_of(&body)["result"]);
    assert!(
        calls[0]["output"].as_str().unwrap().contains("\"pending\""),
        "{calls:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_a2a_agent_whose_model_fails_answers_a_failed_task() {
    let mock = orders_mock().await;
    let Some(agent) =
        start_agent_with_model(AgentKind::A2a, &mock.base_url(), "no-such-model").await
    else {
        return;
    };
    let client = http_client(Duration::from_secs(60));
    let root = format!("{}/", agent.base_url());
    let (status, _, body) = post(&client, &root, &a2a_send(1, "Hello?", None, None), None).await;
    assert_eq!(status, 200, "{body}");
    let task = json_of(&body)["result"].clone();
    assert_eq!(task["status"]["state"], "failed", "{task}");
    assert!(a2a_reply(&task).contains("the agent failed"), "{task}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_faulty_agent_fails_each_way_its_path_names() {
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::Faulty, &mock.base_url()).await else {
        return;
    };
    let client = http_client(Duration::from_secs(2));
    let base = agent.base_url();
    let body = json!({"input": [user("hello")]});
    let at = |mode: &str, tail: &str| format!("{base}/{mode}/{tail}");

    for tail in ["v1/responses", "threads/t/runs/wait"] {
        let (status, _, text) = post(&client, &at("ok", tail), &body, None).await;
        assert_eq!(status, 200, "{text}");
        json_of(&text);

        let hung = client.post(at("hang", tail)).json(&body).send().await;
        assert!(hung.as_ref().is_err_and(|e| e.is_timeout()), "{hung:?}");

        let (status, _, text) = post(&client, &at("error500", tail), &body, None).await;
        assert_eq!(status, 500, "{text}");

        let (status, headers, text) = post(&client, &at("garbage", tail), &body, None).await;
        assert_eq!(status, 200);
        assert_eq!(headers["content-type"], "application/json");
        assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");

        let (status, _, text) = post(&client, &at("garbage-json", tail), &body, None).await;
        assert_eq!(status, 200);
        let value = json_of(&text);
        assert!(
            !value["output"].is_array() && value.get("reply").is_none(),
            "{value}"
        );
    }

    // A session's first request is answered, a later one is not: on the
    // Responses contract a session is its cookie, elsewhere its path.
    let (status, headers, text) = post(&client, &at("close", "v1/responses"), &body, None).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(json_of(&text)["object"], "response");
    let cookie = headers["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let closed = client
        .post(at("close", "v1/responses"))
        .header("Cookie", &cookie)
        .json(&body)
        .send()
        .await;
    let error = closed.expect_err("the connection closes unanswered");
    assert!(!error.is_timeout() && error.is_request(), "{error:?}");
    let path = at("close", "threads/t/runs/wait");
    assert_eq!(post(&client, &path, &body, None).await.0, 200);
    let closed = client.post(&path).json(&body).send().await;
    assert!(closed.is_err_and(|e| !e.is_timeout()));

    let (status, headers, _) = post(&client, &at("lost", "v1/responses"), &body, None).await;
    assert_eq!(status, 200);
    let cookie = headers["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let (status, _, text) = post(&client, &at("lost", "v1/responses"), &body, Some(&cookie)).await;
    assert_eq!(
        (status, json_of(&text)["detail"].as_str()),
        (404, Some("session not found"))
    );
    let path = at("lost", "threads/t/runs/wait");
    assert_eq!(post(&client, &path, &body, None).await.0, 200);
    let (status, _, text) = post(&client, &path, &body, None).await;
    assert_eq!(
        (status, json_of(&text)["detail"].as_str()),
        (404, Some("session not found"))
    );
}
