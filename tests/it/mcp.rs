//! MCP servers as environments, against real servers installed by
//! `scripts/mcp-servers install` (npm, into `.mcp-servers/`): the MCP
//! project's memory server over stdio, a fresh process per conversation, and
//! its example "everything" server over streamable HTTP, a fresh MCP session
//! per conversation. `.ci/run` exports `SPARRING_MCP_MEMORY` and
//! `SPARRING_MCP_EVERYTHING` (the servers' programs); a test whose server is
//! not given is skipped, saying so.
//!
//! Jobs run through the library with the in-process mock models; the mock
//! policy replays each scenario's gold actions as tool calls, and on some
//! seeds leaves the last write out, so that probes see both what a good
//! agent stored (reward 1) and what a careless one did not (reward 0).

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sparring::config::McpConfig;
use sparring::env::mcp::McpEnvironment;
use sparring::env::{EnvError, Environment, InitialState, ToolCall};
use sparring::jobs::{self, RunOptions, RunReport};
use sparring::mock_llm::InProcessMock;
use sparring::store::{self, Store, StoredConversation};

pub(crate) fn server(var: &str, test: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(path) if !path.is_empty() => Some(path),
        _ => {
            println!(
                "SKIPPED: {test}: {var} is not set; install the MCP servers with \
                 `eval \"$(scripts/mcp-servers env)\"`"
            );
            None
        }
    }
}

/// A job config against an MCP server, every path absolute.
fn job(dir: &Path, name: &str, environment: &str, scenarios: &Path, samples: u32) -> PathBuf {
    let r = common::repo();
    let config = format!(
        r#"name = "{name}"
seed = 3
database = "sqlite://{db}"
concurrency = 4
max_turns = 12

[endpoints.policy]
mock = true
model = "mock-policy"

[endpoints.user]
mock = true
model = "mock-user"

[roles]
policy = "policy"
user = "user"

[user_simulator]
template = "{r}/prompts/user_simulator.tera"

[policy]
template = "{r}/prompts/policies/default.tera"

[environment]
kind = "mcp"
{environment}

[dataset]
scenarios = "{scenarios}"
personas = "{r}/personas"
samples_per_scenario = {samples}
personas_per_scenario = 1
"#,
        db = dir.join(format!("{name}.db")).display(),
        r = r.display(),
        scenarios = scenarios.display(),
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, config).unwrap();
    path
}

async fn run(config: &Path) -> (Arc<dyn Store>, RunReport) {
    let job = sparring::config::load(config).unwrap_or_else(|p| panic!("{p:?}"));
    let store = store::open(&job.database).await.unwrap();
    let ctx = jobs::Context::new(store.clone(), Some(Arc::new(InProcessMock)));
    let report = jobs::run(&ctx, &job, &RunOptions::default()).await.unwrap();
    (store, report)
}

async fn conversations(store: &dyn Store, job: i64) -> Vec<StoredConversation> {
    store.conversations_page(job, 0, 10_000).await.unwrap()
}

/// The names of the tools the policy called in a conversation.
fn calls(c: &StoredConversation) -> Vec<String> {
    c.messages
        .iter()
        .filter_map(|m| m.tool_calls.as_ref().and_then(|v| v.as_array()).cloned())
        .flatten()
        .map(|call| call["name"].as_str().unwrap().to_string())
        .collect()
}

fn probes_detail(c: &StoredConversation) -> String {
    c.conversation.reward_breakdown["probes"]["detail"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn memory_environment(program: &str) -> String {
    format!(
        "command = [\"{program}\"]\nenv = {{ MEMORY_FILE_PATH = \"{{session_dir}}/memory.jsonl\" }}\n\
         max_processes = 3\nstartup_timeout_secs = 60"
    )
}

#[tokio::test]
async fn memory_server_over_stdio_is_scored_by_probes_of_what_the_agent_stored() {
    let test = "memory_server_over_stdio_is_scored_by_probes_of_what_the_agent_stored";
    let Some(memory) = server("SPARRING_MCP_MEMORY", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let scenarios = common::repo().join("data/mcp-memory/scenarios.jsonl");
    let config = job(
        dir.path(),
        "memory",
        &memory_environment(&memory),
        &scenarios,
        4,
    );
    let (store, report) = run(&config).await;
    assert_eq!(report.counts.failed, 0, "{report:?}");
    let all = conversations(store.as_ref(), report.job.id).await;
    assert_eq!(all.len(), 12);
    let (mut ones, mut zeros) = (0, 0);
    for c in &all {
        let key = &c.conversation.item_key;
        let reward = c
            .conversation
            .reward
            .unwrap_or_else(|| panic!("{key}: no reward"));
        let detail = probes_detail(c);
        let made = calls(c);
        // The policy's tools are the server's, from tools/list.
        let offered: Vec<&str> = c
            .conversation
            .tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t["name"]
                    .as_str()
                    .unwrap_or(t["function"]["name"].as_str().unwrap_or(""))
            })
            .collect();
        assert!(offered.contains(&"read_graph"), "{key}: {offered:?}");
        if reward == 1.0 {
            ones += 1;
            assert!(
                detail.starts_with("all 1 probes as expected"),
                "{key}: {detail}"
            );
            assert!(
                made.iter().any(|n| n == "create_entities"),
                "{key}: {made:?}"
            );
        } else {
            zeros += 1;
            assert_eq!(reward, 0.0, "{key}");
            // The flawed mock left its last write out, and the probe saw it
            // (or the scenario's fact was not said: its other component).
            let breakdown = &c.conversation.reward_breakdown;
            assert!(
                detail.contains("does not") || breakdown["communicate"]["score"] == 0.0,
                "{key}: {breakdown}"
            );
        }
        // Every conversation had its own graph: a probe never sees another
        // scenario's people.
        let tool_outputs: String = c
            .messages
            .iter()
            .filter(|m| m.role == "tool")
            .map(|m| m.content.clone())
            .collect();
        for stranger in ["Dana Reyes", "Priya Shah", "Lena Fischer"] {
            if !c.conversation.scenario_id.contains(match stranger {
                "Dana Reyes" => "allergy",
                "Priya Shah" => "colleague",
                _ => "address",
            }) {
                assert!(!tool_outputs.contains(stranger), "{key}: saw {stranger}");
            }
        }
    }
    println!("memory server over stdio: {ones} conversations with reward 1, {zeros} with 0");
    assert!(ones > 0 && zeros > 0, "{ones} ones, {zeros} zeros");
}

pub(crate) fn memory_config(program: &str, max_processes: usize) -> McpConfig {
    McpConfig {
        env: [(
            "MEMORY_FILE_PATH".to_string(),
            "{session_dir}/memory.jsonl".to_string(),
        )]
        .into(),
        max_processes: max_processes as u64,
        timeout_secs: 30.0,
        startup_timeout_secs: 60.0,
        ..McpConfig::stdio(vec![program.to_string()], std::env::temp_dir())
    }
}

fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: format!("call_{name}"),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

#[tokio::test]
async fn a_tool_error_goes_back_to_the_policy_and_sessions_are_capped_and_isolated() {
    let test = "a_tool_error_goes_back_to_the_policy_and_sessions_are_capped_and_isolated";
    let Some(memory) = server("SPARRING_MCP_MEMORY", test) else {
        return;
    };
    let env = McpEnvironment::start(&memory_config(&memory, 1))
        .await
        .unwrap();
    let mut first = env.open(&InitialState::default()).await.unwrap();
    let stored = first
        .call(&call(
            "create_entities",
            serde_json::json!({"entities": [{"name": "Ada", "entityType": "person", "observations": ["x"]}]}),
        ))
        .await
        .unwrap();
    assert!(!stored.is_error, "{stored:?}");
    // isError from the server is an error output, not a failure.
    let refused = first
        .call(&call(
            "add_observations",
            serde_json::json!({"observations": [{"entityName": "Nobody", "contents": ["y"]}]}),
        ))
        .await
        .unwrap();
    assert!(refused.is_error, "{refused:?}");
    assert!(refused.content.contains("Nobody"), "{refused:?}");
    // A tool the server does not have never reaches it.
    let unknown = first
        .call(&call("drop_tables", serde_json::json!({})))
        .await
        .unwrap();
    assert!(unknown.is_error && unknown.content.contains("read_graph"));

    // max_processes = 1: a second session waits for the first to end.
    let waiting = tokio::time::timeout(
        Duration::from_millis(500),
        env.open(&InitialState::default()),
    )
    .await;
    assert!(
        waiting.is_err(),
        "a second process started beside the first"
    );
    drop(first);
    let mut second =
        tokio::time::timeout(Duration::from_secs(30), env.open(&InitialState::default()))
            .await
            .expect("the place was not given back")
            .unwrap();
    let graph = second
        .call(&call("read_graph", serde_json::json!({})))
        .await
        .unwrap();
    assert!(
        !graph.content.contains("Ada"),
        "sessions share state: {}",
        graph.content
    );
}

/// A script that starts the memory server and passes it the first three
/// lines of its input only (initialize, initialized, one call): the server
/// exits after its first call. (A shell loop, not `head`, which would hold
/// the lines back in its buffer.)
fn dying_server(dir: &Path, memory: &str) -> String {
    let script = dir.join("dies.sh");
    std::fs::write(
        &script,
        format!(
            "n=0\nwhile [ $n -lt 3 ] && IFS= read -r line; do printf '%s\\n' \"$line\"; n=$((n+1)); done | exec {memory}\n"
        ),
    )
    .unwrap();
    script.display().to_string()
}

#[tokio::test]
async fn a_server_that_dies_mid_conversation_is_an_env_error_not_a_reward() {
    let test = "a_server_that_dies_mid_conversation_is_an_env_error_not_a_reward";
    let Some(memory) = server("SPARRING_MCP_MEMORY", test) else {
        return;
    };
    // The server gets three messages (initialize, initialized, one call)
    // and then its input ends, so it exits after its first call. (A shell
    // loop, not `head`, which would hold the lines back in its buffer.)
    let dir = tempfile::tempdir().unwrap();
    let dies = dying_server(dir.path(), &memory);
    let config = McpConfig {
        command: Some(vec!["/bin/sh".into(), dies.clone()]),
        startup_timeout_secs: 15.0,
        ..memory_config(&memory, 2)
    };
    // Listing tools is the one call of the first process.
    let env = McpEnvironment::start(&config).await.unwrap();
    let mut session = env.open(&InitialState::default()).await.unwrap();
    let first = session
        .call(&call("read_graph", serde_json::json!({})))
        .await;
    assert!(first.is_ok(), "{first:?}");
    let second = session
        .call(&call("read_graph", serde_json::json!({})))
        .await;
    match second {
        Err(EnvError::Mcp { message, .. }) => {
            assert!(
                message.contains("during the conversation") || message.contains("did not answer"),
                "{message}"
            )
        }
        other => panic!("expected an MCP env error, got {other:?}"),
    }

    // Through a job, with a scenario of one call (validate replays it on a
    // fresh process, which survives that): the conversation makes its call,
    // the probe after it finds the server gone, and the item fails
    // (retryable); nothing is stored, no reward of 0.
    let all =
        std::fs::read_to_string(common::repo().join("data/mcp-memory/scenarios.jsonl")).unwrap();
    let scenarios = dir.path().join("one-call.jsonl");
    std::fs::write(&scenarios, all.lines().next().unwrap()).unwrap();
    let environment = format!(
        "command = [\"/bin/sh\", \"{dies}\"]\n\
         env = {{ MEMORY_FILE_PATH = \"{{session_dir}}/memory.jsonl\" }}\ntimeout_secs = 10"
    );
    let config = job(dir.path(), "dies", &environment, &scenarios, 2);
    let (store, report) = run(&config).await;
    let stored = conversations(store.as_ref(), report.job.id).await;
    assert_eq!(report.counts.failed, 2, "{report:?}");
    assert_eq!(report.counts.done, 0, "{report:?}");
    assert!(stored.is_empty(), "a conversation was stored");
}

/// The everything server over streamable HTTP, ended with the test.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_everything(program: &str) -> HttpServer {
    let port = crate::common::free_port();
    let child = std::process::Command::new(program)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let server = HttpServer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the everything server did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

#[tokio::test]
async fn everything_server_over_streamable_http_keeps_state_per_session_for_probes() {
    let test = "everything_server_over_streamable_http_keeps_state_per_session_for_probes";
    let Some(everything) = server("SPARRING_MCP_EVERYTHING", test) else {
        return;
    };
    let http = start_everything(&everything);
    let dir = tempfile::tempdir().unwrap();
    // The agent is to switch the session's simulated logging on; a probe
    // toggles it once more, which says "Stopped" only if it was on, in this
    // session (the server keeps the state per MCP session).
    let scenario = serde_json::json!({
        "id": "everything-logging-on",
        "user": {"reason_for_contact": "You want simulated logging switched on.",
                 "known_info": "Your name is Kim.",
                 "task_instructions": "Ask for logging to be switched on. Confirm when asked."},
        "evaluation": {
            "actions": [{"name": "toggle-simulated-logging", "arguments": {}}],
            "probes": [{"tool": "toggle-simulated-logging", "expect_regex": "^Stopped simulated logging"}],
            "reward_basis": ["probes"]
        }
    });
    let scenarios = dir.path().join("scenarios.jsonl");
    std::fs::write(&scenarios, format!("{scenario}\n")).unwrap();
    let environment = format!(
        "url = \"{}\"\nallowed_tools = [\"toggle-simulated-logging\", \"echo\", \"get-sum\"]",
        http.url
    );
    let config = job(dir.path(), "everything", &environment, &scenarios, 10);
    let (store, report) = run(&config).await;
    assert_eq!(report.counts.failed, 0, "{report:?}");
    let all = conversations(store.as_ref(), report.job.id).await;
    assert_eq!(all.len(), 10);
    let (mut ones, mut zeros) = (0, 0);
    for c in &all {
        let key = &c.conversation.item_key;
        let toggled = calls(c).iter().any(|n| n == "toggle-simulated-logging");
        let detail = probes_detail(c);
        match c.conversation.reward {
            Some(1.0) => {
                ones += 1;
                assert!(toggled, "{key}: rewarded without switching logging on");
            }
            Some(0.0) => {
                zeros += 1;
                assert!(!toggled, "{key}: switched on but not rewarded: {detail}");
                assert!(detail.contains("does not match"), "{key}: {detail}");
            }
            other => panic!("{key}: reward {other:?}"),
        }
    }
    println!("everything server over streamable HTTP: {ones} with reward 1, {zeros} with 0");
    assert!(ones > 0 && zeros > 0, "{ones} ones, {zeros} zeros");
}

// A `url` that is not an MCP server: nothing of its reply comes back -------

/// An HTTP service that answers every request with `status`, `content_type`
/// and `body` (an internal service a token holder should not read).
async fn plain_http(status: u16, content_type: &'static str, body: String) -> String {
    use axum::http::{header, StatusCode};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let status = StatusCode::from_u16(status).unwrap();
    let router = axum::Router::new().fallback(move || {
        let body = body.clone();
        async move { (status, [(header::CONTENT_TYPE, content_type)], body) }
    });
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

#[tokio::test]
async fn a_submitted_mcp_url_that_is_not_mcp_is_refused_without_its_reply() {
    let service = crate::common::Service::start("t").await;
    let secret = "sk-internal-4f9a1c2e7b";
    let replies: Vec<(u16, &'static str, String)> = vec![
        // The case found: a JSON body that is not JSON-RPC was quoted whole.
        (200, "application/json", format!("{{\"api_key\": \"{secret}\"}}")),
        // JSON-RPC, but not an answer to `initialize`.
        (
            200,
            "application/json",
            format!("{{\"jsonrpc\": \"2.0\", \"id\": 0, \"result\": {{\"key\": \"{secret}\"}}}}"),
        ),
        (
            200,
            "application/json",
            format!("{{\"jsonrpc\": \"2.0\", \"id\": 0, \"error\": {{\"code\": -32000, \"message\": \"{secret}\"}}}}"),
        ),
        (200, "text/html", format!("<html><body>{secret}</body></html>")),
        (200, "text/event-stream", format!("data: {{\"key\": \"{secret}\"}}\n\n")),
        (500, "application/json", format!("{{\"error\": \"{secret}\"}}")),
        (404, "text/plain", format!("no such page; the key is {secret}")),
    ];
    for (status, content_type, body) in replies {
        let url = plain_http(status, content_type, body.clone()).await;
        let config = service.job("not-mcp", 1, "").replace(
            "[environment]\nname = \"builtin:retail\"\n",
            &format!("[environment]\nkind = \"mcp\"\nurl = \"{url}\"\nstartup_timeout_secs = 5\n"),
        );
        assert!(
            config.contains("kind = \"mcp\""),
            "the job changed: {config}"
        );
        let response = service
            .post("/v1/jobs")
            .header("content-type", "application/toml")
            .body(config)
            .send()
            .await
            .unwrap();
        let code = response.status().as_u16();
        let said = response.text().await.unwrap();
        let case = format!("{status} {content_type} {body}");
        assert_eq!(code, 422, "{case}: {said}");
        assert!(
            !said.contains(secret),
            "{case}: the reply came back: {said}"
        );
        assert!(
            !said.contains("api_key") && !said.contains("<html>"),
            "{case}: {said}"
        );
        assert!(said.contains("environment.url"), "{case}: {said}");
        assert!(
            said.contains("did not complete the MCP handshake"),
            "{case}: {said}"
        );
        if status >= 500 {
            assert!(said.contains(&format!("HTTP {status}")), "{case}: {said}");
        }
    }
}

// Probes: their own tools, and the text they match -------------------------

/// A scenario of the memory server's: the agent stores Dana's allergy; the
/// probes read her node back with `open_nodes`, which the policy is not
/// offered, and match its text (pretty-printed JSON: `"name": "Dana Reyes"`,
/// with the space after the colon that the structured content's compact
/// JSON does not have) and its structured content.
fn probed_scenario() -> serde_json::Value {
    let all =
        std::fs::read_to_string(common::repo().join("data/mcp-memory/scenarios.jsonl")).unwrap();
    let mut scenario: serde_json::Value =
        serde_json::from_str(all.lines().next().unwrap()).unwrap();
    assert_eq!(scenario["id"], "mcp-memory-001-allergy", "the data changed");
    scenario["evaluation"]["probes"] = serde_json::json!([
        {"tool": "open_nodes", "arguments": {"names": ["Dana Reyes"]},
         "expect_regex": "^\\{\\n  \"entities\": \\[\\n    \\{\\n      \"name\": \"Dana Reyes\""},
        {"tool": "open_nodes", "arguments": {"names": ["Dana Reyes"]},
         "expect": {"entities": [{"name": "Dana Reyes"}]}}
    ]);
    scenario["evaluation"]["reward_basis"] = serde_json::json!(["probes"]);
    scenario
}

#[tokio::test]
async fn probes_call_their_own_tools_and_match_the_texts_the_server_wrote() {
    let test = "probes_call_their_own_tools_and_match_the_texts_the_server_wrote";
    let Some(memory) = server("SPARRING_MCP_MEMORY", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios.jsonl");
    std::fs::write(&scenarios, format!("{}\n", probed_scenario())).unwrap();
    // The policy may only write; probes read with open_nodes.
    let environment = format!(
        "{}\nallowed_tools = [\"create_entities\", \"add_observations\"]\n\
         probe_tools = [\"open_nodes\"]",
        memory_environment(&memory)
    );
    let config = job(dir.path(), "probed", &environment, &scenarios, 6);
    let (store, report) = run(&config).await;
    assert_eq!(report.counts.failed, 0, "{report:?}");
    let all = conversations(store.as_ref(), report.job.id).await;
    assert_eq!(all.len(), 6);
    let mut ones = 0;
    for c in &all {
        let key = &c.conversation.item_key;
        let offered = c.conversation.tools.to_string();
        assert!(!offered.contains("open_nodes"), "{key}: offered {offered}");
        let detail = probes_detail(c);
        let stored = calls(c).iter().any(|n| n == "create_entities");
        match c.conversation.reward {
            Some(1.0) => {
                ones += 1;
                assert!(stored, "{key}: rewarded without storing: {detail}");
            }
            Some(0.0) => {
                assert!(!stored, "{key}: stored but not rewarded: {detail}");
            }
            other => panic!("{key}: reward {other:?} ({detail})"),
        }
    }
    assert!(ones > 0, "no conversation passed the probes");

    // A probe tool the server does not list is a validate error naming it.
    let environment = format!(
        "{}\nprobe_tools = [\"open_nodez\"]",
        memory_environment(&memory)
    );
    let config = job(dir.path(), "typo", &environment, &scenarios, 1);
    let job = sparring::config::load(&config).unwrap_or_else(|p| panic!("{p:?}"));
    let problems = match jobs::generation::prepare(&job).await {
        Err(problems) => problems,
        Ok(_) => panic!("an unknown probe tool passed validate"),
    };
    let said: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert!(
        said.iter()
            .any(|p| p.contains("probe_tools names open_nodez") && p.contains("open_nodes")),
        "{said:?}"
    );
}

/// A server sparring starts gets only what the MCP SDKs pass a server (HOME,
/// LOGNAME, PATH, SHELL, TERM, USER) and the config's `env`: none of the
/// variables sparring itself runs with (API keys, `SPARRING_API_TOKEN`). The
/// everything server's `get-env` tool returns its whole environment.
#[tokio::test]
async fn a_started_server_sees_none_of_sparrings_environment_but_its_own_env() {
    let test = "a_started_server_sees_none_of_sparrings_environment_but_its_own_env";
    let Some(everything) = server("SPARRING_MCP_EVERYTHING", test) else {
        return;
    };
    let config = McpConfig {
        command: Some(vec![everything.clone(), "stdio".to_string()]),
        env: [("GIVEN_BY_CONFIG".to_string(), "yes".to_string())].into(),
        ..memory_config(&everything, 1)
    };
    let env = McpEnvironment::start(&config).await.unwrap();
    let mut session = env.open(&InitialState::default()).await.unwrap();
    let output = session
        .call(&call("get-env", serde_json::json!({})))
        .await
        .unwrap();
    assert!(!output.is_error, "{output:?}");
    let seen: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&output.content).expect("get-env answers a JSON object");
    assert_eq!(seen.get("GIVEN_BY_CONFIG"), Some(&"yes".into()), "{seen:?}");
    assert!(seen.contains_key("PATH"), "{seen:?}");
    // Set for this test process by cargo and by the test environment.
    for hidden in ["CARGO_MANIFEST_DIR", "SPARRING_MCP_EVERYTHING"] {
        assert!(
            std::env::var_os(hidden).is_some(),
            "{hidden} is not set here"
        );
        assert!(
            !seen.contains_key(hidden),
            "the server saw {hidden}: {seen:?}"
        );
    }
    let allowed = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
    let unexpected: Vec<&String> = seen
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()) && *k != "GIVEN_BY_CONFIG")
        .filter(|k| std::env::var_os(k).is_some())
        .collect();
    assert!(
        unexpected.is_empty(),
        "inherited from sparring: {unexpected:?}"
    );
}
