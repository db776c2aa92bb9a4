//! The agent frameworks people use, each playing the orders desk
//! (`tests/agents/data/`) as sparring's policy with the framework's defaults,
//! streaming included, and sparring's mock as its model (issue 39): Google
//! ADK behind `adk api_server` (kind `http`, its session made first) and
//! behind ADK's own A2A server, pydantic-ai behind fasta2a, Strands behind
//! Strands' A2A server (A2A 0.3), and an a2a-sdk server that speaks A2A 1.0
//! alone. Each is run twice, a plain send and a streamed one, by the
//! `sparring` binary over a SQLite file; every conversation must score the
//! mock's perfect agent's reward (1, every gold call made and every fact
//! said, `reward_basis = ["actions", "communicate"]`), its tool calls stored
//! as `agent_tool` results, the agent's token usage stored as the policy's,
//! and `sparring stats` must warn of nothing. Skipped without
//! `SPARRING_AGENT_FRAMEWORKS_PYTHON` (Strands:
//! `SPARRING_AGENT_FRAMEWORKS_STRANDS_PYTHON`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agent_frameworks::{
    orders_mock, orders_scenarios_path, start_agent, start_agent_with_model, AgentKind,
};
use crate::common::{repo, sparring, text};

/// The gold calls of each orders scenario.
const GOLD_CALLS: [(&str, usize); 6] = [
    ("orders-001-where-is-the-lantern", 1),
    ("orders-002-cancel-the-socks", 2),
    ("orders-003-when-did-the-blanket-arrive", 1),
    ("orders-004-cancel-the-stove", 2),
    ("orders-005-shipped-cannot-be-cancelled", 1),
    ("orders-006-refund-of-the-pegs", 1),
];

/// The orders scenarios, scored by the agent's calls and words, in `dir`.
fn scored_scenarios(dir: &Path) -> PathBuf {
    let scored = std::fs::read_to_string(orders_scenarios_path()).unwrap();
    assert_eq!(scored.matches("\"actions\", \"communicate\"").count(), 6);
    let file = dir.join("scenarios.jsonl");
    std::fs::write(&file, scored).unwrap();
    file
}

/// A job of the six scenarios whose policy is the agent at `agent`, of
/// `kind` with its `table` (the TOML under `[policy.KIND]`).
fn job(dir: &Path, agent: &str, mock: &str, kind: &str, table: &str) -> (PathBuf, String) {
    let scenarios = scored_scenarios(dir);
    job_of(dir, agent, mock, kind, table, &scenarios)
}

/// The job at `config` with the user opening the conversation, which every
/// framework here takes (the Agents SDK refuses an agent turn it never made).
pub(crate) fn user_opens(config: &Path) {
    let written = std::fs::read_to_string(config).unwrap();
    std::fs::write(
        config,
        written.replacen(
            "[user_simulator]\n",
            "[user_simulator]\nopens = \"user\"\n",
            1,
        ),
    )
    .unwrap();
}

/// [`job`] over the scenarios at `scenarios`.
pub(crate) fn job_of(
    dir: &Path,
    agent: &str,
    mock: &str,
    kind: &str,
    table: &str,
    scenarios: &Path,
) -> (PathBuf, String) {
    let db = dir.join("desk.db");
    let r = repo();
    let toml = format!(
        r#"name = "desk"
seed = 3
database = "sqlite://{db}"
concurrency = 3
max_turns = 10

[endpoints.agent]
base_url = "{agent}"
model = "orders-desk"
max_retries = 0
timeout_secs = 60
input_price_per_million = 1.0
output_price_per_million = 2.0

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
kind = "{kind}"
max_steps_per_turn = 12

[policy.{kind}]
{table}

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

/// One stored conversation, as this story checks it.
#[derive(Debug)]
struct Stored {
    policy_model: String,
    termination: String,
    reward: Option<f64>,
    /// (author, content) of each message.
    messages: Vec<(String, String)>,
    /// The policy's stored (prompt, completion) tokens.
    policy_tokens: (i64, i64),
    warning: Option<String>,
}

async fn stored(db: &str) -> HashMap<String, Stored> {
    let pool = sqlx::SqlitePool::connect(db).await.unwrap();
    let rows: Vec<(i64, String, String, String, Option<f64>, String)> = sqlx::query_as(
        "SELECT id, scenario_id, policy_model, termination, reward, metadata FROM conversations",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let mut out = HashMap::new();
    for (id, scenario, policy_model, termination, reward, metadata) in rows {
        let messages: Vec<(String, String)> = sqlx::query_as(
            "SELECT author, content FROM messages WHERE conversation_id = ? ORDER BY idx",
        )
        .bind(id)
        .fetch_all(&pool)
        .await
        .unwrap();
        let policy_tokens: (i64, i64) = sqlx::query_as(
            "SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0) \
             FROM conversation_usage WHERE conversation_id = ? AND role = 'policy'",
        )
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
        let metadata: Value = serde_json::from_str(&metadata).unwrap();
        out.insert(
            scenario,
            Stored {
                policy_model,
                termination,
                reward,
                messages,
                policy_tokens,
                warning: metadata["policy_warning"].as_str().map(str::to_string),
            },
        );
    }
    out
}

/// Run the job and hold what it stored to the perfect agent's: each
/// scenario's reward 1, its gold calls stored as the agent's own, its reply
/// said, its tokens counted, no warning; and `sparring stats` agreeing.
async fn plays_the_desk(dir: &Path, config: &Path, db: &str, agent_log: &str, label: &str) {
    let out = sparring(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(
        out.status.success(),
        "{}\n{}\nthe agent's log:\n{agent_log}",
        text(&out.stdout),
        text(&out.stderr),
    );
    let conversations = stored(db).await;
    assert_eq!(conversations.len(), 6, "{conversations:#?}");
    for (id, calls) in GOLD_CALLS {
        let c = &conversations[id];
        assert_eq!(c.policy_model, label, "{id}");
        assert_eq!(
            c.reward,
            Some(1.0),
            "{id}: {} {:#?}",
            c.termination,
            c.messages
        );
        let results: Vec<_> = c.messages.iter().filter(|m| m.0 == "agent_tool").collect();
        assert_eq!(results.len(), calls, "{id}: {:#?}", c.messages);
        assert!(
            results.iter().all(|m| m.1.contains("order_id")),
            "{id}: the tools' outputs: {results:?}"
        );
        assert!(
            c.messages
                .iter()
                .any(|m| m.0 == "policy" && m.1.contains("All done.")),
            "{id}: {:#?}",
            c.messages
        );
        assert!(
            c.policy_tokens.0 > 0 && c.policy_tokens.1 > 0,
            "{id}: the agent's usage was not stored: {:?}",
            c.policy_tokens
        );
        assert_eq!(c.warning, None, "{id}");
    }
    let stats = sparring(dir, &["stats", "--job", "1", "--json", "--database", db]);
    assert!(stats.status.success(), "{}", text(&stats.stderr));
    let report: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(report["conversations"]["reward"]["mean"], 1.0, "{report}");
    assert!(
        report["conversations"].get("warnings").is_none(),
        "{report}"
    );
    let policy = report["usage"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "policy")
        .unwrap_or_else(|| panic!("no policy usage: {report}"));
    assert!(policy["prompt_tokens"].as_u64().unwrap() > 0, "{policy}");
    assert!(
        policy["cost"]["usd"].as_f64().unwrap() > 0.0,
        "priced by the endpoint: {policy}"
    );
}

/// The ADK agent's `[policy.http]`: its session made first, then `path`.
fn adk_table(path: &str, streaming: bool) -> String {
    format!(
        r#"path = "{path}"
body = '''
{{"app_name": "orders_desk", "user_id": "sparring", "session_id": "{{{{ session_id }}}}",
 "streaming": {streaming},
 "new_message": {{"role": "user", "parts": [{{"text": {{{{ last_user | json_encode() }}}}}}]}}}}
'''
reply = "/-1/content/parts"
trace_format = "adk_events"

[policy.http.session_create]
path = "/apps/orders_desk/users/sparring/sessions/{{{{ session }}}}"
body = "{{}}"
status = 200
id = "/id"
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adk_api_server_plays_the_orders_desk_over_http_its_session_made_first_plain_and_streamed()
{
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::AdkRest, &mock.base_url()).await else {
        return;
    };
    for (path, streaming) in [("/run", false), ("/run_sse", true)] {
        let dir = tempfile::tempdir().unwrap();
        let table = adk_table(path, streaming);
        let (config, db) = job(
            dir.path(),
            agent.base_url(),
            &mock.base_url(),
            "http",
            &table,
        );
        plays_the_desk(dir.path(), &config, &db, &agent.log(), "http:orders-desk").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adk_without_its_session_made_first_fails_every_item_rejected_not_a_reward_of_0() {
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::AdkRest, &mock.base_url()).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let table = adk_table("/run", false);
    let without = table
        .split("[policy.http.session_create]")
        .next()
        .unwrap()
        .to_string();
    let (config, db) = job(
        dir.path(),
        agent.base_url(),
        &mock.base_url(),
        "http",
        &without,
    );
    let out = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(stored(&db).await.is_empty(), "nothing is stored");
    let pool = sqlx::SqlitePool::connect(&db).await.unwrap();
    let errors: Vec<(String,)> = sqlx::query_as("SELECT last_error FROM items")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(errors.len(), 6);
    for (error,) in errors {
        assert!(error.starts_with("rejected"), "{error}");
        assert!(error.contains("404"), "{error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adks_a2a_server_plays_the_orders_desk_its_calls_read_from_the_task_history() {
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::AdkA2a, &mock.base_url()).await else {
        return;
    };
    for table in ["", "stream = true"] {
        let dir = tempfile::tempdir().unwrap();
        let (config, db) = job(dir.path(), agent.base_url(), &mock.base_url(), "a2a", table);
        plays_the_desk(dir.path(), &config, &db, &agent.log(), "a2a:orders_desk").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pydantic_ai_through_fasta2a_plays_the_orders_desk_asked_after_and_streamed() {
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::PydanticAi, &mock.base_url()).await else {
        return;
    };
    for table in ["", "stream = true"] {
        let dir = tempfile::tempdir().unwrap();
        let (config, db) = job(dir.path(), agent.base_url(), &mock.base_url(), "a2a", table);
        plays_the_desk(dir.path(), &config, &db, &agent.log(), "a2a:orders desk").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strands_a2a_server_plays_the_orders_desk_over_a2a_0_3_sent_and_streamed() {
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::Strands, &mock.base_url()).await else {
        return;
    };
    for table in ["", "stream = true"] {
        let dir = tempfile::tempdir().unwrap();
        let (config, db) = job(dir.path(), agent.base_url(), &mock.base_url(), "a2a", table);
        plays_the_desk(dir.path(), &config, &db, &agent.log(), "a2a:orders desk").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_a2a_sdk_server_of_a2a_1_0_alone_plays_the_orders_desk_sent_and_streamed() {
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::A2aV1, &mock.base_url()).await else {
        return;
    };
    for table in ["stream = true", ""] {
        let dir = tempfile::tempdir().unwrap();
        let (config, db) = job(dir.path(), agent.base_url(), &mock.base_url(), "a2a", table);
        plays_the_desk(dir.path(), &config, &db, &agent.log(), "a2a:orders desk").await;
    }
    // Told to speak 0.3, which its card does not list: refused at the job's
    // setup, before any item runs.
    let dir = tempfile::tempdir().unwrap();
    let (config, db) = job(
        dir.path(),
        agent.base_url(),
        &mock.base_url(),
        "a2a",
        "version = \"0.3\"",
    );
    let out = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let said = text(&out.stderr);
    assert!(
        said.contains("agent card") && said.contains("version = \"0.3\"") && said.contains("1.0"),
        "{said}"
    );
    assert!(stored(&db).await.is_empty());
}

/// The failed items' errors of the job in `db`, none stored.
async fn failed_items(db: &str) -> Vec<String> {
    assert!(
        stored(db).await.is_empty(),
        "a failing agent stores nothing"
    );
    let pool = sqlx::SqlitePool::connect(db).await.unwrap();
    let rows: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT status, last_error FROM items")
            .fetch_all(&pool)
            .await
            .unwrap();
    rows.into_iter()
        .map(|(status, error)| {
            assert_eq!(status, "failed");
            error.unwrap_or_default()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_whose_model_says_nothing_fails_every_item_as_empty_reply_never_a_reward_of_0() {
    let mock = orders_mock().await;
    // Strands streams the model and answers its (empty) text as an artifact;
    // the a2a-sdk agent answers it as the status message.
    for kind in [AgentKind::Strands, AgentKind::A2aV1] {
        let Some(agent) = start_agent_with_model(kind, &mock.base_url(), "mock-policy+empty").await
        else {
            return;
        };
        for table in ["", "stream = true"] {
            let dir = tempfile::tempdir().unwrap();
            let (config, db) = job(dir.path(), agent.base_url(), &mock.base_url(), "a2a", table);
            let out = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{kind:?}: {}",
                text(&out.stderr)
            );
            let errors = failed_items(&db).await;
            assert_eq!(errors.len(), 6, "{kind:?}");
            for error in errors {
                assert!(
                    error.starts_with("empty_reply") && error.contains("no text"),
                    "{kind:?} {table:?}: {error}\n{}",
                    agent.log()
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adk_events_left_unread_leave_a_warning_that_sparring_stats_shows() {
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::AdkRest, &mock.base_url()).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The events are the answer, but nothing says to read them as a trace.
    let table = adk_table("/run", false).replace("trace_format = \"adk_events\"\n", "");
    let (config, db) = job(
        dir.path(),
        agent.base_url(),
        &mock.base_url(),
        "http",
        &table,
    );
    let out = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let conversations = stored(&db).await;
    for (id, c) in &conversations {
        assert!(
            !c.messages.iter().any(|m| m.0 == "agent_tool"),
            "{id}: nothing was read"
        );
        let warning = c
            .warning
            .as_deref()
            .unwrap_or_else(|| panic!("{id}: no warning"));
        assert!(
            warning.contains("/0/content/parts/0/functionCall")
                && warning.contains("no policy.http.trace is set"),
            "{id}: {warning}"
        );
    }
    let stats = sparring(dir.path(), &["stats", "--job", "1", "--database", &db]);
    let said = text(&stats.stdout);
    assert!(
        said.contains("Warnings\n  6 of 6 conversations: the agent's answers hold tool use"),
        "{said}"
    );
    let json = sparring(
        dir.path(),
        &["stats", "--job", "1", "--json", "--database", &db],
    );
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        report["conversations"]["warnings"][0]["conversations"], 6,
        "{report}"
    );
}

/// An A2A server the issue does not name: LangGraph's own, which `langgraph
/// dev` serves for each assistant at `/a2a/{assistant_id}`, its card at
/// `/.well-known/agent-card.json?assistant_id=...` (so `card_path` names it).
/// It answers A2A 1.0 (with 0.3's `kind`s in it) and reports a turn's tool
/// results, but not its calls' arguments (`{"tool_results": [{"toolCallId",
/// "name", "content"}]}`): the conversations play and say what the user must
/// hear, but no tool call can be stored, so each keeps a warning saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn langgraphs_own_a2a_server_plays_the_desk_but_its_tool_results_alone_leave_a_warning() {
    let mock = orders_mock().await;
    let Some(agent) = start_agent(AgentKind::LangGraph, &mock.base_url()).await else {
        return;
    };
    let client = crate::agent_frameworks::http_client(std::time::Duration::from_secs(10));
    let assistants: Value = client
        .post(format!("{}/assistants/search", agent.base_url()))
        .json(&serde_json::json!({"graph_id": "orders"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let assistant = assistants[0]["assistant_id"].as_str().unwrap();
    for stream in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let table = format!(
            "path = \"/a2a/{assistant}\"\ncard_path = \
             \"/.well-known/agent-card.json?assistant_id={assistant}\"\nstream = {stream}"
        );
        let (config, db) = job(
            dir.path(),
            agent.base_url(),
            &mock.base_url(),
            "a2a",
            &table,
        );
        // Scored by what the agent said: its calls cannot be read.
        let words_only = std::fs::read_to_string(orders_scenarios_path())
            .unwrap()
            .replace(
                "\"reward_basis\": [\"actions\", \"communicate\"]",
                "\"reward_basis\": [\"communicate\"]",
            );
        assert_eq!(words_only.matches("[\"communicate\"]").count(), 6);
        std::fs::write(dir.path().join("scenarios.jsonl"), words_only).unwrap();
        let out = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
        assert!(
            out.status.success(),
            "{}\n{}",
            text(&out.stderr),
            agent.log()
        );
        let conversations = stored(&db).await;
        assert_eq!(conversations.len(), 6);
        for (id, c) in &conversations {
            assert_eq!(c.policy_model, "a2a:orders", "{id}");
            assert_eq!(c.reward, Some(1.0), "{id}: {:#?}", c.messages);
            let warning = c.warning.as_deref().unwrap_or_default();
            assert!(
                warning.contains("/data/tool_results") && warning.contains("tool results alone"),
                "{id}: {warning:?}"
            );
        }
    }
}

/// An evaluation (issue 43) whose policies are two agent frameworks of
/// different kinds: pydantic-ai behind fasta2a (`a2a`, the job as written)
/// and the OpenAI Agents SDK (`responses_agent`, its own `[policies.policy]`
/// table and base URL). Each plays the desk perfectly, so the table ranks
/// them even: 6 shared items, reward 1 each, no disagreement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evaluation_compares_two_agent_frameworks_of_different_kinds_on_the_same_items() {
    let mock = orders_mock().await;
    let Some(pydantic) = start_agent(AgentKind::PydanticAi, &mock.base_url()).await else {
        return;
    };
    let Some(agents_sdk) = start_agent(AgentKind::OpenAiAgents, &mock.base_url()).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (config, db) = job(dir.path(), pydantic.base_url(), &mock.base_url(), "a2a", "");
    // Every policy meets the same users, so the job's `[user_simulator]` is
    // theirs together. With the agent's scripted greeting first (the
    // default), the Agents SDK server sees an agent turn it never made and
    // no session cookie, and refuses every conversation (HTTP 400): this
    // evaluation has the user open, which both agents take.
    user_opens(&config);
    let evaluation = dir.path().join("frameworks.toml");
    std::fs::write(
        &evaluation,
        format!(
            "[evaluation]\nname = \"frameworks\"\njob = \"{job}\"\nbaseline = \"pydantic-ai\"\n\n\
             [[policies]]\nname = \"pydantic-ai\"\n\n\
             [[policies]]\nname = \"openai-agents\"\n\
             [policies.endpoint]\nbase_url = \"{sdk}\"\n\
             [policies.policy]\nkind = \"responses_agent\"\nmax_steps_per_turn = 12\n\
             [policies.policy.responses_agent]\nsend_instructions = false\n",
            job = config.display(),
            sdk = agents_sdk.base_url(),
        ),
    )
    .unwrap();
    let out = sparring(
        dir.path(),
        &[
            "evaluate",
            evaluation.to_str().unwrap(),
            "--quiet",
            "--json",
        ],
    );
    if !out.status.success() {
        let pool = sqlx::SqlitePool::connect(&db).await.unwrap();
        let failed: Vec<(i64, Option<String>)> =
            sqlx::query_as("SELECT job_id, last_error FROM items WHERE status = 'failed'")
                .fetch_all(&pool)
                .await
                .unwrap();
        panic!(
            "{}\nfailed: {failed:#?}\npydantic-ai:\n{}\nagents sdk:\n{}",
            text(&out.stderr),
            pydantic.log(),
            agents_sdk.log()
        );
    }
    let table: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(table["shared_items"], 6, "{table}");
    let policies = table["policies"].as_array().unwrap();
    let models: Vec<&str> = policies
        .iter()
        .map(|p| p["policy"].as_str().unwrap())
        .collect();
    assert_eq!(
        models,
        ["a2a:orders desk", "responses_agent:orders-desk"],
        "{table}"
    );
    for p in policies {
        assert_eq!(p["mean_reward"]["mean"], 1.0, "{p}");
        assert!(p["cost_per_conversation"].as_f64().unwrap() > 0.0, "{p}");
    }
    let against = &policies[1]["against_baseline"];
    assert_eq!(against["only_this_passed"], 0, "{against}");
    assert_eq!(against["only_baseline_passed"], 0, "{against}");
    assert!(policies.iter().all(|p| p["conversations"] == 6), "{table}");
}
