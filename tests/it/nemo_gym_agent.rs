//! sparring as a NeMo Gym agent server (`sparring agent`, the built binary over
//! real HTTP), driven by NeMo Gym's own rollout collection from the venv
//! (`ng_collect_rollouts`, through NeMo Gym's head server and its
//! `legacy_agent` environment server: `scripts/nemo_gym_collect.py`), and
//! every rollout it wrote validated with NeMo Gym's pydantic models and
//! held against what sparring stored. Skipped, saying so, without the venv
//! (`SPARRING_NEMO_GYM_PYTHON`) or, for the `example_multi_step` rows, its
//! resources server (`SPARRING_NEMO_GYM_EXAMPLE_MULTI_STEP_URL`,
//! `SPARRING_NEMO_GYM_DIR`).
//!
//! The example_multi_step story's policy speaks the Responses API with the
//! mock's token information (`+tokens`): every generation's
//! `prompt_token_ids`, `generation_token_ids` and `generation_log_probs` are
//! on its output item, as stored.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::nemo_gym::{python, python_script};
use common::{repo, text};
use serde_json::Value;

/// A running `sparring agent`, stopped (SIGTERM) by `stop` or when dropped.
struct AgentProcess {
    child: Child,
    url: String,
}

impl AgentProcess {
    fn start(dir: &Path, config: &Path) -> AgentProcess {
        Self::start_with(dir, config, &[])
    }

    fn start_with(dir: &Path, config: &Path, args: &[&str]) -> AgentProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sparring"))
            .args(["agent", "--config", config.to_str().unwrap()])
            .args(["--bind", "127.0.0.1:0"])
            .args(args)
            .current_dir(dir)
            .env_remove("SPARRING_DATABASE")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        if !line.starts_with("http://") {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            panic!("sparring agent did not print its address: {line:?} {stderr}");
        }
        AgentProcess {
            child,
            url: line.trim().to_string(),
        }
    }

    /// SIGTERM, then its exit status and what it said.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        (status, stderr)
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// NeMo Gym's rollout collection of `rows` × `repeats` through the agent;
/// the rollouts file it wrote.
fn collect(python: &str, agent: &AgentProcess, rows: &Path, out: &Path, repeats: u32) -> PathBuf {
    collect_at(python, &agent.url, rows, out, repeats)
}

/// [`collect`] through the agent at `url` (which may carry user info).
fn collect_at(python: &str, url: &str, rows: &Path, out: &Path, repeats: u32) -> PathBuf {
    let output = Command::new(python)
        .arg(repo().join("scripts/nemo_gym_collect.py"))
        .args(["--agent-url", url])
        .args(["--input", rows.to_str().unwrap()])
        .args(["--output", out.to_str().unwrap()])
        .args(["--num-repeats", &repeats.to_string()])
        .env("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        .output()
        .unwrap();
    let said = format!("{}{}", text(&output.stdout), text(&output.stderr));
    assert!(
        output.status.success(),
        "NeMo Gym's collection failed: {said}"
    );
    assert!(said.contains("Finished rollout collection"), "{said}");
    out.to_path_buf()
}

/// Every rollout validated by NeMo Gym's models (`BaseVerifyResponse`, and
/// its `response` as `NeMoGymResponse`), then what the test compares: per
/// rollout its indices, reward, sparring's conversation id, and the output
/// items' (type, role).
fn validated(python: &str, rollouts: &Path) -> Vec<Value> {
    let script = r#"
import json, sys
from nemo_gym.base_resources_server import BaseVerifyResponse
from nemo_gym.openai_utils import NeMoGymResponse
for line in open(sys.argv[1]):
    row = json.loads(line)
    BaseVerifyResponse.model_validate(row)
    NeMoGymResponse.model_validate(row["response"])
    print(json.dumps({
        "task": row.get("_ng_task_index"),
        "repeat": row.get("_ng_rollout_index"),
        "reward": row["reward"],
        "conversation_id": row["sparring"]["conversation_id"],
        "job_id": row["sparring"]["job_id"],
        "input": len(row["responses_create_params"]["input"]),
        "items": [[o.get("type"), o.get("role")] for o in row["response"]["output"]],
        "tokens": [
            [o.get("type"), o.get("role"), o.get("prompt_token_ids"), o.get("generation_token_ids"), o.get("generation_log_probs")]
            for o in row["response"]["output"] if "generation_token_ids" in o
        ],
    }))
"#;
    python_script(python, script, rollouts, "a rollout")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn items_of(rollout: &Value, kind: &str, role: Option<&str>) -> usize {
    rollout["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i[0] == kind && role.is_none_or(|r| i[1] == r))
        .count()
}

/// Each rollout's reward is its stored conversation's, and the agent's job
/// holds exactly these conversations.
async fn held_against_the_store(
    database: &str,
    rollouts: &[Value],
) -> Vec<sparring::store::StoredConversation> {
    let store = sparring::store::open(database).await.unwrap();
    let job = rollouts[0]["job_id"].as_i64().unwrap();
    let mut stored = Vec::new();
    for r in rollouts {
        assert_eq!(r["job_id"], job);
        let c = store
            .get_conversation(r["conversation_id"].as_i64().unwrap())
            .await
            .unwrap()
            .expect("the rollout's conversation is stored");
        assert_eq!(c.conversation.job_id, job);
        assert_eq!(
            c.conversation.reward,
            r["reward"].as_f64(),
            "the trainer got the stored reward: {r}"
        );
        stored.push(c);
    }
    let summary = store.job_summary(job).await.unwrap();
    assert_eq!(summary.conversations as usize, rollouts.len());
    // The agent stored its job's personas once, when it opened the job.
    let personas: Vec<String> = store
        .job_personas(job)
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.persona_id)
        .collect();
    for c in &stored {
        assert!(
            personas.contains(&c.conversation.persona_id),
            "{} not among the job's stored personas {personas:?}",
            c.conversation.persona_id
        );
    }
    store.close().await;
    stored
}

/// Every policy generation of a rollout carries its token information on an
/// output item (the policy's, never a user's), the lists the store holds for
/// that conversation, untouched.
async fn tokens_held_against_the_store(database: &str, rollouts: &[Value]) {
    let store = sparring::store::open(database).await.unwrap();
    for r in rollouts {
        let carried = r["tokens"].as_array().unwrap();
        assert!(
            !carried.is_empty(),
            "the policy's generations carry tokens: {r}"
        );
        for item in carried {
            assert_ne!(item[1], "user", "a user turn carries no tokens: {r}");
            assert_eq!(
                item[3].as_array().unwrap().len(),
                item[4].as_array().unwrap().len(),
                "a log probability per generated token: {r}"
            );
        }
        let stored = store
            .message_tokens(r["conversation_id"].as_i64().unwrap())
            .await
            .unwrap();
        let stored: Vec<Value> = stored
            .iter()
            .map(|(_, t)| {
                serde_json::json!([
                    t.prompt_token_ids,
                    t.generation_token_ids,
                    t.generation_log_probs
                ])
            })
            .collect();
        let sent: Vec<Value> = carried
            .iter()
            .map(|i| serde_json::json!([i[2], i[3], i[4]]))
            .collect();
        assert_eq!(sent, stored, "the stored lists, untouched: {r}");
    }
    store.close().await;
}

fn mean_reward_in_metrics(rollouts: &Path) -> f64 {
    let name = format!(
        "{}_aggregate_metrics.json",
        rollouts.file_stem().unwrap().to_str().unwrap()
    );
    let metrics: Value =
        serde_json::from_str(&std::fs::read_to_string(rollouts.with_file_name(name)).unwrap())
            .unwrap();
    let entry = metrics
        .as_array()
        .and_then(|a| a.first())
        .cloned()
        .unwrap_or(metrics);
    entry["key_metrics"]["mean/reward"].as_f64().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn nemo_gyms_collection_of_example_multi_step_rows_through_sparrings_agent_gets_its_verified_stored_rollouts(
) {
    let test = "nemo_gyms_collection_of_example_multi_step_rows_through_sparrings_agent_gets_its_verified_stored_rollouts";
    let Some(python) = python(test) else { return };
    let (Ok(url), Ok(servers)) = (
        std::env::var("SPARRING_NEMO_GYM_EXAMPLE_MULTI_STEP_URL"),
        std::env::var("SPARRING_NEMO_GYM_DIR"),
    ) else {
        println!(
            "SKIPPED: {test}: SPARRING_NEMO_GYM_EXAMPLE_MULTI_STEP_URL or SPARRING_NEMO_GYM_DIR is \
             not set; `scripts/nemo-gym start example_multi_step` starts the server"
        );
        return;
    };
    let data = Path::new(&servers).join("example_multi_step/data");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let database = format!("sqlite://{}", d.join("agent.db").display());
    let config = d.join("agent.toml");
    // The mock policy replays the calls NeMo Gym recorded for these rows.
    std::fs::write(
        &config,
        format!(
            r#"name = "multi-step-agent"
seed = 11
database = "{database}"
concurrency = 4

[endpoints.policy]
mock = true
model = "mock-policy+tokens"
api = "responses"

[endpoints.user]
mock = true
model = "mock-user"

[roles]
policy = "policy"
user = "user"

[user_simulator]
mode = "none"

[environment]
kind = "nemo_gym"
base_url = "{url}"

[dataset]
format = "nemo_gym"
rows = "{rows}"
replay = "{replay}"
"#,
            rows = data.join("example.jsonl").display(),
            replay = data.join("example_rollouts.jsonl").display(),
        ),
    )
    .unwrap();
    let agent = AgentProcess::start(d, &config);
    let out = collect(
        &python,
        &agent,
        &data.join("example.jsonl"),
        &d.join("rollouts.jsonl"),
        2,
    );
    let rollouts = validated(&python, &out);
    assert_eq!(rollouts.len(), 10, "5 rows × 2 repeats");
    let mut pairs: Vec<(i64, i64)> = rollouts
        .iter()
        .map(|r| (r["task"].as_i64().unwrap(), r["repeat"].as_i64().unwrap()))
        .collect();
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs.len(), 10, "every (task, repeat) once");
    for r in &rollouts {
        assert!(items_of(r, "function_call", None) >= 1, "{r}");
        assert_eq!(
            items_of(r, "function_call", None),
            items_of(r, "function_call_output", None),
            "{r}"
        );
        assert_eq!(items_of(r, "message", Some("assistant")), 1, "{r}");
        assert_eq!(
            items_of(r, "message", Some("user")),
            0,
            "no simulated user: {r}"
        );
    }
    let stored = held_against_the_store(&database, &rollouts).await;
    let rewards: Vec<f64> = rollouts
        .iter()
        .map(|r| r["reward"].as_f64().unwrap())
        .collect();
    assert!(
        rewards.contains(&1.0),
        "the replayed calls score: {rewards:?}"
    );
    let mean = rewards.iter().sum::<f64>() / rewards.len() as f64;
    assert!((mean_reward_in_metrics(&out) - mean).abs() < 1e-9);
    for c in &stored {
        assert!(
            c.messages.iter().any(|m| m.author == "env"),
            "tool results stored"
        );
    }
    tokens_held_against_the_store(&database, &rollouts).await;

    // One request's tool loop, as NeMo Gym's agents answer /v1/responses
    // (here under the prefix a rollout's self-calls carry).
    let row: Value = serde_json::from_str(
        std::fs::read_to_string(data.join("example.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let answer = reqwest::Client::new()
        .post(format!("{}/ng-rollout/r1/v1/responses", agent.url))
        .json(&row["responses_create_params"])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200);
    let response: Value = answer.json().await.unwrap();
    let saved = d.join("response.json");
    std::fs::write(&saved, response.to_string()).unwrap();
    let checked = python_script(
        &python,
        "import json, sys\nfrom nemo_gym.openai_utils import NeMoGymResponse\n\
         r = NeMoGymResponse.model_validate(json.load(open(sys.argv[1])))\n\
         print(r.status, sum(o.type == 'function_call' for o in r.output))",
        &saved,
        "a /v1/responses answer",
    );
    let (status, calls) = checked.trim().split_once(' ').unwrap();
    assert_eq!(status, "completed");
    assert!(calls.parse::<u32>().unwrap() >= 1, "{response}");

    let (status, said) = agent.stop();
    assert!(status.success(), "SIGTERM stops it cleanly: {said}");
}

#[tokio::test(flavor = "multi_thread")]
async fn nemo_gyms_collection_of_a_sparring_scenario_set_gets_the_simulated_users_turns_as_user_messages(
) {
    let test =
        "nemo_gyms_collection_of_a_sparring_scenario_set_gets_the_simulated_users_turns_as_user_messages";
    let Some(python) = python(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    // On SQLite, and on Postgres when SPARRING_TEST_POSTGRES names a server.
    for database in common::databases(dir.path(), test) {
        let d = dir.path().join(if database.is_some() {
            "postgres"
        } else {
            "sqlite"
        });
        std::fs::create_dir_all(&d).unwrap();
        scenario_set_story(&python, &d, database).await;
    }
}

async fn scenario_set_story(python: &str, d: &Path, database: Option<String>) {
    let spec = common::JobSpec {
        name: common::unique_name("retail-agent"),
        database,
        ..Default::default()
    };
    let (config, database) = common::write_job(d, &spec);
    // Rows that name sparring scenarios; the policy's input is sparring's.
    let ids: Vec<String> = std::fs::read_to_string(repo().join("data/retail/scenarios.jsonl"))
        .unwrap()
        .lines()
        .take(3)
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let rows = d.join("rows.jsonl");
    std::fs::write(
        &rows,
        ids.iter()
            .map(|id| {
                serde_json::json!({"responses_create_params": {"input": []}, "scenario_id": id})
                    .to_string()
                    + "\n"
            })
            .collect::<String>(),
    )
    .unwrap();

    let agent = AgentProcess::start(d, &config);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let refused_at = |body: Value| {
        let (client, url) = (client.clone(), format!("{}/run", agent.url));
        async move {
            let refused = client.post(url).json(&body).send().await.unwrap();
            assert_eq!(refused.status().as_u16(), 422);
            let body: Value = refused.json().await.unwrap();
            body["detail"][0]["loc"].clone()
        }
    };
    let unknown =
        serde_json::json!({"responses_create_params": {"input": []}, "scenario_id": "nope"});
    assert_eq!(
        refused_at(unknown).await,
        serde_json::json!(["body", "scenario_id"])
    );
    let no_input = serde_json::json!({"responses_create_params": {}});
    assert_eq!(
        refused_at(no_input).await,
        serde_json::json!(["body", "responses_create_params", "input"])
    );

    let out = collect(python, &agent, &rows, &d.join("rollouts.jsonl"), 2);
    let rollouts = validated(python, &out);
    assert_eq!(rollouts.len(), 6, "3 scenarios × 2 repeats");
    for r in &rollouts {
        assert_eq!(
            r["input"], 2,
            "the policy's system prompt and the job's greeting are the input: {r}"
        );
        assert_eq!(
            r["items"][0],
            serde_json::json!(["message", "user"]),
            "the user opens: {r}"
        );
        assert!(
            items_of(r, "message", Some("user")) >= 2,
            "later user turns: {r}"
        );
        assert!(items_of(r, "message", Some("assistant")) >= 1, "{r}");
    }
    let stored = held_against_the_store(&database, &rollouts).await;
    for (c, r) in stored.iter().zip(&rollouts) {
        let user_turns = c.messages.iter().filter(|m| m.author == "user").count();
        assert_eq!(
            user_turns,
            items_of(r, "message", Some("user")),
            "every stored simulated-user turn is a user message of the rollout"
        );
        assert!(c.conversation.user_checks.is_some(), "user checks ran");
    }
    let (status, said) = agent.stop();
    assert!(status.success(), "{said}");
    let job = rollouts[0]["job_id"].as_i64().unwrap();

    // Started again, the agent finds its job by the config's hash.
    let again = AgentProcess::start(d, &config);
    let health = json_of(client.get(format!("{}/health", again.url))).await;
    assert_eq!(health["job_id"], job);
    // The same task and repeat collected again is another rollout, stored
    // under the next free key.
    let first = std::fs::read_to_string(&rows).unwrap();
    let mut row: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    row["_ng_task_index"] = 0.into();
    row["_ng_rollout_index"] = 0.into();
    let rollout = json_of(client.post(format!("{}/run", again.url)).json(&row)).await;
    let key = rollout["sparring"]["item_key"].as_str().unwrap();
    assert!(key.ends_with("/t0.r0#2"), "{key}");
    assert_eq!(rollout["sparring"]["job_id"], job);
    again.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_with_a_token_is_collected_from_by_nemo_gym_with_the_token_in_its_host_and_refuses_the_rest(
) {
    let test = "an_agent_with_a_token_is_collected_from_by_nemo_gym_with_the_token_in_its_host";
    let Some(python) = python(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (config, _) = common::write_job(d, &common::JobSpec::default());
    let id = std::fs::read_to_string(repo().join("data/retail/scenarios.jsonl"))
        .unwrap()
        .lines()
        .next()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone())
        .unwrap();
    let rows = d.join("rows.jsonl");
    let row = serde_json::json!({"responses_create_params": {"input": []}, "scenario_id": id});
    std::fs::write(&rows, format!("{row}\n")).unwrap();
    let token = "agent-token-0123456789";
    let agent = AgentProcess::start_with(d, &config, &["--token", token]);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    for auth in [None, Some("Bearer wrong-token-0123456789")] {
        let mut request = client.post(format!("{}/run", agent.url)).json(&row);
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        let refused = request.send().await.unwrap();
        assert_eq!(refused.status().as_u16(), 401, "{auth:?}");
        assert_eq!(
            refused.headers()["x-content-type-options"],
            "nosniff",
            "{auth:?}"
        );
        let body: Value = refused.json().await.unwrap();
        assert!(body["detail"].as_str().unwrap().contains("token"), "{body}");
    }
    let health = client
        .get(format!("{}/health", agent.url))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status().as_u16(), 200);
    let with_token = agent
        .url
        .replacen("http://", &format!("http://nemo-gym:{token}@"), 1);
    let out = collect_at(&python, &with_token, &rows, &d.join("rollouts.jsonl"), 1);
    assert_eq!(validated(&python, &out).len(), 1);
    let (status, said) = agent.stop();
    assert!(status.success(), "{said}");
}

async fn json_of(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// The stored reward of each scenario of the job in `database`.
async fn rewards_by_scenario(database: &str) -> std::collections::BTreeMap<String, Option<f64>> {
    let pool = sqlx::SqlitePool::connect(database).await.unwrap();
    let rows: Vec<(String, Option<f64>)> =
        sqlx::query_as("SELECT scenario_id, reward FROM conversations")
            .fetch_all(&pool)
            .await
            .unwrap();
    rows.into_iter().collect()
}

/// NeMo Gym's collection of multi-turn rows (`mode = "llm"`: the job keeps
/// each row's opening and plays its later user turns with the simulated
/// user) through `sparring agent`: each `/run` request, which carries the
/// row's whole input, is matched to the job's own row, so its scenario is
/// the row's (not an `input-…` of its own), the mock policy plays that
/// row's recorded calls, and every row scores through the agent what
/// `sparring run` of the same config scores. On `calendar` and `mrcr`.
#[tokio::test(flavor = "multi_thread")]
async fn nemo_gyms_collection_of_multi_turn_rows_through_sparrings_agent_scores_each_row_as_sparring_run_does(
) {
    let test = "nemo_gyms_collection_of_multi_turn_rows_through_sparrings_agent_scores_each_row_as_sparring_run_does";
    let Some(python) = python(test) else { return };
    for server in ["calendar", "mrcr"] {
        let var = format!("SPARRING_NEMO_GYM_{}_URL", server.to_uppercase());
        let (Ok(url), Ok(servers)) = (std::env::var(&var), std::env::var("SPARRING_NEMO_GYM_DIR"))
        else {
            println!(
                "SKIPPED: {test}: {var} or SPARRING_NEMO_GYM_DIR is not set; `scripts/nemo-gym \
                 start {server}` starts the server"
            );
            return;
        };
        let data = Path::new(&servers).join(server).join("data");
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let config_for = |database: &str| {
            format!(
                r#"name = "{server}-rows"
seed = 5
database = "{database}"
concurrency = 4
max_turns = 30

[endpoints.policy]
mock = true
model = "mock-policy+perfect"

[endpoints.user]
mock = true
model = "mock-user"

[roles]
policy = "policy"
user = "user"

[user_simulator]
mode = "llm"

[environment]
kind = "nemo_gym"
base_url = "{url}"

[dataset]
format = "nemo_gym"
rows = "{rows}"
replay = "{replay}"
personas = "{personas}"
personas_per_scenario = 1
"#,
                rows = data.join("example.jsonl").display(),
                replay = data.join("example_rollouts.jsonl").display(),
                personas = repo().join("personas").display(),
            )
        };
        let run_db = format!("sqlite://{}", d.join("run.db").display());
        let run_config = d.join("run.toml");
        std::fs::write(&run_config, config_for(&run_db)).unwrap();
        let out = common::sparring(d, &["run", run_config.to_str().unwrap(), "--quiet"]);
        assert!(out.status.success(), "{server}: {}", text(&out.stderr));
        let by_run = rewards_by_scenario(&run_db).await;
        assert_eq!(by_run.len(), 5, "{server}: {by_run:?}");

        let agent_db = format!("sqlite://{}", d.join("agent.db").display());
        let agent_config = d.join("agent.toml");
        std::fs::write(&agent_config, config_for(&agent_db)).unwrap();
        let agent = AgentProcess::start(d, &agent_config);
        let out = collect(
            &python,
            &agent,
            &data.join("example.jsonl"),
            &d.join("rollouts.jsonl"),
            1,
        );
        let rollouts = validated(&python, &out);
        assert_eq!(rollouts.len(), 5, "{server}");
        held_against_the_store(&agent_db, &rollouts).await;
        let by_agent = rewards_by_scenario(&agent_db).await;
        assert_eq!(
            by_agent, by_run,
            "{server}: every row is its own scenario and scores as `sparring run` scores it"
        );
        assert!(
            by_run.values().any(|r| r.is_some_and(|r| r > 0.0)),
            "{server}: the rows' recorded calls and answers score: {by_run:?}"
        );
        let (status, said) = agent.stop();
        assert!(status.success(), "{server}: {said}");
    }
}
