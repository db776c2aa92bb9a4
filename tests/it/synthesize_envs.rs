//! Validation by execution over every environment kind that can run gold
//! actions, with hand-written scenario rows: the built-in phone desk (dual
//! control), tool specs played by the mock tools model (`simulated`: no
//! world state, so the checks that apply are named), the MCP memory server with `seed_calls` and `state_probes`
//! (installed by `scripts/mcp-servers`; `SPARRING_MCP_MEMORY`), NeMo Gym's
//! `example_session_state_mgmt`, whose `get_counter_value` reads a session's
//! state (`scripts/nemo-gym start example_session_state_mgmt`;
//! `SPARRING_NEMO_GYM_EXAMPLE_SESSION_STATE_MGMT_URL`), and what each
//! kind that cannot be sampled says instead. For each: an accepted row, a
//! gold action that errors, a write task that changes nothing, a read-only
//! task that writes, and an ID the seed data does not have.

use std::sync::Arc;

use serde_json::{json, Value};

use sparring::config::state_calls::StateCall;
use sparring::config::{McpConfig, MockConfig, NemoGymConfig};
use sparring::env::builtin::open_builtin;
use sparring::env::mcp::McpEnvironment;
use sparring::env::nemo_gym::NemoGymEnvironment;
use sparring::env::simulated::SimulatedEnvironment;
use sparring::env::{EnvError, Environment};
use sparring::llm::{ChatModel, Endpoint};
use sparring::persona::Scenario;
use sparring::synth::execute::validate;
use sparring::synth::{ProposalBrief, Stage};

fn row(v: Value) -> Scenario {
    serde_json::from_value(v).unwrap()
}

/// The stage a row is rejected at, or `None` when it passes (its executed
/// calls counted against its gold actions).
async fn verdict(env: &dyn Environment, s: &Scenario) -> Result<usize, (Stage, String)> {
    validate(env, s, &ProposalBrief::default())
        .await
        .map(|executed| executed.len())
        .map_err(|r| match r.rejection() {
            Some(r) => (r.stage, r.reason.clone()),
            None => panic!("the environment failed: {r:?}"),
        })
}

fn rejected_at(result: Result<usize, (Stage, String)>, stage: Stage, says: &str) {
    match result {
        Ok(n) => panic!("accepted ({n} calls), expected a rejection at {stage:?}"),
        Err((got, reason)) => {
            assert_eq!(got, stage, "{reason}");
            assert!(reason.contains(says), "{reason}");
        }
    }
}

/// One environment's rows for the checks every kind is held to.
struct Rows {
    /// A read-only task and a write task, both valid.
    read: Value,
    write: Value,
    /// How many of the write's gold actions come before its first write.
    reads_before_write: usize,
    /// The write with a gold action that fails, and what its error says.
    failing: (Value, &'static str),
    /// The read with an ID in known_info that the seed lacks, and the ID.
    unknown: (Value, &'static str),
}

/// Accepted: the read and the write, every gold action executed. Rejected:
/// a gold action that fails (execution), the write without its writes
/// (state), the write tagged read-only (state), an unknown ID (unknown_id).
async fn holds_to_every_check(env: &dyn Environment, rows: Rows) {
    let count = |v: &Value| v["evaluation"]["actions"].as_array().unwrap().len();
    assert_eq!(
        verdict(env, &row(rows.read.clone())).await,
        Ok(count(&rows.read))
    );
    assert_eq!(
        verdict(env, &row(rows.write.clone())).await,
        Ok(count(&rows.write))
    );
    let (failing, error) = rows.failing;
    rejected_at(verdict(env, &row(failing)).await, Stage::Execution, error);
    let mut no_write = rows.write.clone();
    no_write["evaluation"]["actions"]
        .as_array_mut()
        .unwrap()
        .truncate(rows.reads_before_write);
    rejected_at(
        verdict(env, &row(no_write)).await,
        Stage::State,
        "leave the state unchanged",
    );
    let mut writes = rows.write;
    writes["tags"] = json!(["read-only"]);
    rejected_at(
        verdict(env, &row(writes)).await,
        Stage::State,
        "change the state",
    );
    let (unknown, id) = rows.unknown;
    rejected_at(verdict(env, &row(unknown)).await, Stage::UnknownId, id);
}

// builtin:phone ---------------------------------------------------------

fn phone_roaming() -> Value {
    json!({
        "id": "p-roaming",
        "tags": ["dual-control"],
        "user": {
            "reason_for_contact": "Abroad, your phone's internet does not work.",
            "known_info": "Your phone number is 555-0102; your line is L1002.",
            "task_instructions": "Do on your phone what the agent asks."
        },
        "initial_state": {"device": {"line_id": "L1002", "abroad": true}},
        "evaluation": {
            "actions": [
                {"name": "find_customer_by_phone", "arguments": {"phone_number": "555-0102"}},
                {"name": "enable_roaming", "arguments": {"line_id": "L1002"}},
                {"name": "toggle_data_roaming", "arguments": {}, "caller": "user"}
            ],
            "communicate": ["Travel 20 GB"],
            "reward_basis": ["db", "communicate"]
        }
    })
}

fn phone_plan_question() -> Value {
    json!({
        "id": "p-plan",
        "tags": ["read-only"],
        "user": {
            "reason_for_contact": "You want to know your plan.",
            "known_info": "Your line is L1004.",
            "task_instructions": "Ask which plan your line is on."
        },
        "evaluation": {
            "actions": [{"name": "get_line_details", "arguments": {"line_id": "L1004"}}],
            "communicate": ["Basic 5 GB"],
            "reward_basis": ["db", "communicate"]
        }
    })
}

#[tokio::test]
async fn synthesize_over_phone_accepts_a_dual_control_write_and_a_read_and_rejects_each_flaw() {
    let env = open_builtin("builtin:phone").unwrap();
    let mut failing = phone_roaming();
    failing["evaluation"]["actions"][1] =
        json!({"name": "add_data", "arguments": {"line_id": "L1002", "gb": 50}});
    let mut unknown = phone_plan_question();
    unknown["user"]["known_info"] = json!("Your line is L9999.");
    let rows = Rows {
        read: phone_plan_question(),
        write: phone_roaming(),
        reads_before_write: 1,
        failing: (failing, "gb must be between 1 and 10"),
        unknown: (unknown, "L9999"),
    };
    holds_to_every_check(env.as_ref(), rows).await;
}

#[tokio::test]
async fn synthesize_samples_phone_customers_with_their_real_lines() {
    let env = open_builtin("builtin:phone").unwrap();
    let records = env.sample_records(1, 1).await.unwrap();
    let customers = records["customers"].as_array().unwrap();
    assert_eq!(customers.len(), 1);
    let customer = &customers[0];
    let held = customer["line_ids"].as_array().unwrap();
    let lines = records["lines"].as_array().unwrap();
    assert_eq!(lines.len(), held.len());
    assert!(lines.iter().all(|l| held.contains(&l["line_id"])));
    assert!(records["device"]["line_id"].is_string());
    assert_ne!(records, env.sample_records(2, 1).await.unwrap());
}

#[tokio::test]
async fn synthesize_refuses_environments_without_tools_saying_what_they_lack() {
    for name in ["builtin:qa", "builtin:chat"] {
        let env = open_builtin(name).unwrap();
        let err = env.sample_records(0, 3).await.unwrap_err();
        assert!(matches!(err, EnvError::NotSampleable { .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.contains(name) && message.contains("has no tools"),
            "{message}"
        );
        assert!(message.contains("builtin:retail"), "{message}");
    }
}

// MCP: the memory server ------------------------------------------------

fn call(tool: &str, arguments: Value) -> StateCall {
    StateCall {
        tool: tool.into(),
        arguments,
    }
}

/// The memory server, each session seeded with two members, its state read
/// by `read_graph`.
fn memory(program: &str, probes: bool) -> McpConfig {
    McpConfig {
        state_probes: if probes {
            vec![call("read_graph", json!({}))]
        } else {
            Vec::new()
        },
        seed_calls: vec![call(
            "create_entities",
            json!({"entities": [
                {"name": "Dana Reyes", "entityType": "member",
                 "observations": ["member id MB2041", "allergic to peanuts"]},
                {"name": "Tom Berg", "entityType": "member",
                 "observations": ["member id MB3310", "lives in Bergen"]}
            ]}),
        )],
        ..crate::mcp::memory_config(program, 4)
    }
}

fn memory_lookup() -> Value {
    json!({
        "id": "m-lookup",
        "tags": ["read-only"],
        "user": {
            "reason_for_contact": "You want to check which allergy the assistant has on file for you.",
            "known_info": "Your name is Dana Reyes; your member id is MB2041.",
            "task_instructions": "Ask what allergy is on file."
        },
        "evaluation": {
            "actions": [{"name": "search_nodes", "arguments": {"query": "Dana Reyes"}}],
            "communicate": ["allergic to peanuts"],
            "reward_basis": ["communicate"]
        }
    })
}

fn memory_move() -> Value {
    json!({
        "id": "m-move",
        "user": {
            "reason_for_contact": "You moved to Oslo and want the assistant to remember it.",
            "known_info": "Your name is Tom Berg; your member id is MB3310.",
            "task_instructions": "Ask the assistant to note that you live in Oslo now."
        },
        "evaluation": {
            "actions": [
                {"name": "search_nodes", "arguments": {"query": "Tom Berg"}},
                {"name": "add_observations", "arguments": {"observations": [
                    {"entityName": "Tom Berg", "contents": ["lives in Oslo"]}
                ]}}
            ],
            "communicate": ["lives in Bergen"],
            "probes": [{"tool": "search_nodes", "arguments": {"query": "Tom Berg"},
                        "expect_regex": "lives in Oslo"}],
            "reward_basis": ["probes"]
        }
    })
}

#[tokio::test]
async fn synthesize_over_mcp_memory_checks_gold_actions_against_what_the_state_probes_read() {
    let test = "synthesize_over_mcp_memory_checks_gold_actions_against_what_the_state_probes_read";
    let Some(program) = crate::mcp::server("SPARRING_MCP_MEMORY", test) else {
        return;
    };
    let env = McpEnvironment::start(&memory(&program, true))
        .await
        .unwrap();
    let env: &dyn Environment = &env;
    let mut failing = memory_move();
    failing["evaluation"]["actions"][1]["arguments"]["observations"][0]["entityName"] =
        json!("Nobody Here");
    let mut unknown = memory_lookup();
    unknown["user"]["known_info"] = json!("Your name is Dana Reyes; your member id is MB9999.");
    let rows = Rows {
        read: memory_lookup(),
        write: memory_move(),
        reads_before_write: 1,
        failing: (failing, "Nobody Here"),
        unknown: (unknown, "MB9999"),
    };
    holds_to_every_check(env, rows).await;

    // `db` cannot score an MCP server's state: validate's own check says so.
    let mut db = memory_move();
    db["evaluation"]["reward_basis"] = json!(["db"]);
    rejected_at(verdict(env, &row(db)).await, Stage::Checks, "probes");
}

#[tokio::test]
async fn synthesize_samples_mcp_records_from_the_probes_of_a_freshly_seeded_session() {
    let test = "synthesize_samples_mcp_records_from_the_probes_of_a_freshly_seeded_session";
    let Some(program) = crate::mcp::server("SPARRING_MCP_MEMORY", test) else {
        return;
    };
    let env = McpEnvironment::start(&memory(&program, true))
        .await
        .unwrap();
    // Each session starts from the seed calls alone: a write in one is not
    // in the records of the next.
    let one = env.sample_records(0, 1).await.unwrap();
    let entities = one["read_graph"]["entities"].as_array().unwrap();
    assert_eq!(entities.len(), 1, "{one}");
    assert_eq!(entities[0]["name"], "Dana Reyes");
    let other = env.sample_records(1, 1).await.unwrap();
    assert_eq!(other["read_graph"]["entities"][0]["name"], "Tom Berg");
    let both = env.sample_records(0, 5).await.unwrap();
    assert_eq!(
        both["read_graph"]["entities"].as_array().unwrap().len(),
        2,
        "{both}"
    );

    let blind = McpEnvironment::start(&memory(&program, false))
        .await
        .unwrap();
    let err = blind.sample_records(0, 3).await.unwrap_err().to_string();
    assert!(
        err.contains("cannot be sampled") && err.contains("environment.state_probes"),
        "{err}"
    );
}

#[tokio::test]
async fn synthesize_refuses_an_mcp_state_probe_the_server_does_not_list() {
    let test = "synthesize_refuses_an_mcp_state_probe_the_server_does_not_list";
    let Some(program) = crate::mcp::server("SPARRING_MCP_MEMORY", test) else {
        return;
    };
    let mut config = memory(&program, true);
    config.state_probes = vec![call("dump_everything", json!({}))];
    let err = McpEnvironment::start(&config).await.err().unwrap();
    let message = err.to_string();
    assert!(
        message.contains("environment.state_probes")
            && message.contains("dump_everything")
            && message.contains("read_graph"),
        "{message}"
    );
}

// simulated: tool specs played by the mock tools model over HTTP ----------

async fn simulated_orders(server: &sparring::mock_llm::MockServer) -> SimulatedEnvironment {
    let config = crate::common::endpoint_config("tools", &server.base_url(), "mock-tools");
    let model: Arc<dyn ChatModel> = Arc::new(Endpoint::new(&config, &server.base_url()).unwrap());
    SimulatedEnvironment::load(
        &crate::common::repo().join("data/simulated/tools.json"),
        Some(model),
    )
    .unwrap()
}

fn simulated_status() -> Value {
    json!({
        "id": "s-status",
        "tags": ["read-only"],
        "user": {
            "reason_for_contact": "You want to know where order W2001 is.",
            "known_info": "Your order id is W2001.",
            "task_instructions": "Ask for the status."
        },
        "environment_facts": {"orders": {"W2001": {
            "order_id": "W2001", "status": "shipped", "total": 19.5, "items": ["mug"]
        }}},
        "evaluation": {
            "actions": [{"name": "get_order", "arguments": {"order_id": "W2001"}}],
            "communicate": ["shipped"],
            "reward_basis": ["db", "communicate"]
        }
    })
}

fn simulated_cancel() -> Value {
    json!({
        "id": "s-cancel",
        "user": {
            "reason_for_contact": "You want to cancel order W2002.",
            "known_info": "Your order id is W2002.",
            "task_instructions": "Ask to cancel it; you no longer need it."
        },
        "environment_facts": {"orders": {"W2002": {
            "order_id": "W2002", "status": "pending", "total": 64.0, "items": ["rug"]
        }}},
        "evaluation": {
            "actions": [
                {"name": "get_order", "arguments": {"order_id": "W2002"}},
                {"name": "cancel_order", "arguments": {"order_id": "W2002", "reason": "no longer needed"}}
            ],
            "reward_basis": ["db"]
        }
    })
}

#[tokio::test]
async fn synthesize_over_simulated_tools_checks_schemas_writes_and_facts_not_a_world_state() {
    let server = crate::common::mock(MockConfig::default()).await;
    let env = simulated_orders(&server).await;
    let env: &dyn Environment = &env;
    // A call off the tool's parameter schema is a tool error; a write task
    // must call a tool that is not read-only and a read-only one none; the
    // IDs the user knows are in the scenario's own facts.
    let mut failing = simulated_cancel();
    failing["evaluation"]["actions"][1]["arguments"]["reason"] = json!("too pricey");
    let mut unknown = simulated_status();
    unknown["user"]["known_info"] = json!("Your order id is W2001; your other one is W9999.");
    let rows = Rows {
        read: simulated_status(),
        write: simulated_cancel(),
        reads_before_write: 1,
        failing: (failing, "invalid arguments for cancel_order"),
        unknown: (unknown, "W9999"),
    };
    holds_to_every_check(env, rows).await;

    // There are no records to sample; the generator is told to write facts.
    let records = env.sample_records(0, 3).await.unwrap();
    assert_eq!(records["records"], json!([]));
    assert!(
        records["note"].as_str().unwrap().contains("initial_state"),
        "{records}"
    );
}

// nemo_gym: example_session_state_mgmt, whose get_counter_value reads the
// session's whole state ------------------------------------------------------

fn counter_url(test: &str) -> Option<String> {
    let var = "SPARRING_NEMO_GYM_EXAMPLE_SESSION_STATE_MGMT_URL";
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            println!(
                "SKIPPED: {test}: {var} is not set; start the server with \
                 `scripts/nemo-gym start example_session_state_mgmt` and export its URL"
            );
            None
        }
    }
}

fn counter(url: &str, probes: Vec<StateCall>) -> NemoGymEnvironment {
    NemoGymEnvironment::new(&NemoGymConfig {
        name: Some("counter".into()),
        timeout_secs: 30.0,
        max_retries: 1,
        state_probes: probes,
        records_row: Some(json!({"initial_count": 7})),
        ..NemoGymConfig::at(url.trim_end_matches('/'))
    })
    .unwrap()
}

/// A scenario over the counter server, as a NeMo Gym row brings it: the row
/// (its tools, `initial_count`, `expected_count`) is the initial state.
fn counter_row(tags: Value, known: &str, actions: Value, communicate: Value) -> Value {
    let increment = json!({"name": "increment_counter", "description": "Add to the counter.",
        "parameters": {"type": "object", "properties": {"count": {"type": "integer"}},
                       "required": ["count"], "additionalProperties": false}});
    let get = json!({"name": "get_counter_value", "description": "The counter's value.",
        "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": false}});
    json!({
        "id": "c",
        "tags": tags,
        "user": {
            "reason_for_contact": "You want your counter changed or read.",
            "known_info": known,
            "task_instructions": "Say what you want done to the counter."
        },
        "initial_state": {
            "responses_create_params": {
                "input": [{"role": "user", "content": "add 2 then get the count"}],
                "tools": [
                    {"type": "function", "name": "increment_counter", "parameters": increment["parameters"]},
                    {"type": "function", "name": "get_counter_value", "parameters": get["parameters"]}
                ]
            },
            "initial_count": 3,
            "expected_count": 5
        },
        "tools": [increment, get],
        "evaluation": {"actions": actions, "communicate": communicate, "reward_basis": ["communicate"]}
    })
}

#[tokio::test]
async fn synthesize_over_a_nemo_gym_server_reads_its_state_with_the_servers_own_tool() {
    let test = "synthesize_over_a_nemo_gym_server_reads_its_state_with_the_servers_own_tool";
    let Some(url) = counter_url(test) else {
        return;
    };
    let env = counter(&url, vec![call("get_counter_value", json!({}))]);
    let env: &dyn Environment = &env;
    let add_two = json!([
        {"name": "increment_counter", "arguments": {"count": 2}},
        {"name": "get_counter_value", "arguments": {}}
    ]);
    let read = json!([{"name": "get_counter_value", "arguments": {}}]);
    let bad = json!([{"name": "increment_counter", "arguments": {"count": "two"}}]);
    let known = "Your counter starts at 3.";
    let rows = Rows {
        // The user asks for the value, so they may not know it (answer_leak).
        read: counter_row(
            json!(["read-only"]),
            "You keep a counter here.",
            read.clone(),
            json!(["3"]),
        ),
        write: counter_row(json!([]), known, add_two, json!(["5"])),
        reads_before_write: 0,
        failing: (counter_row(json!([]), known, bad, json!([])), "HTTP 422"),
        // The counter's state holds no IDs, so any the user knows is unknown.
        unknown: (
            counter_row(
                json!(["read-only"]),
                "Your counter is CTR42.",
                read,
                json!(["3"]),
            ),
            "CTR42",
        ),
    };
    holds_to_every_check(env, rows).await;
}

#[tokio::test]
async fn synthesize_samples_a_nemo_gym_servers_state_and_says_what_is_missing_without_probes() {
    let test =
        "synthesize_samples_a_nemo_gym_servers_state_and_says_what_is_missing_without_probes";
    let Some(url) = counter_url(test) else {
        return;
    };
    let env = counter(&url, vec![call("get_counter_value", json!({}))]);
    assert_eq!(
        env.sample_records(0, 3).await.unwrap(),
        json!({"get_counter_value": {"count": 7}})
    );

    let blind = counter(&url, Vec::new());
    let err = blind.sample_records(0, 3).await.unwrap_err().to_string();
    assert!(
        err.contains("cannot be sampled")
            && err.contains("no call that reads a session's state")
            && err.contains("environment.state_probes"),
        "{err}"
    );

    let wrong = counter(&url, vec![call("dump_state", json!({}))]);
    let err = wrong.sample_records(0, 3).await.unwrap_err();
    assert!(matches!(err, EnvError::Remote { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("environment.state_probes[0] (dump_state)") && message.contains("404"),
        "{message}"
    );
}

// The whole pipeline over MCP memory, through the binary -----------------

/// examples/synthesize-mcp-memory.toml with the installed server, writing
/// into `dir`.
fn synth_config(dir: &std::path::Path, program: &str, target: u32) -> std::path::PathBuf {
    let example =
        std::fs::read_to_string(crate::common::repo().join("examples/synthesize-mcp-memory.toml"))
            .unwrap();
    let text = example
        .replace(
            "\"npx\", \"-y\", \"@modelcontextprotocol/server-memory@2026.8.31\"",
            &format!("\"{program}\""),
        )
        .replace("target = 20", &format!("target = {target}"))
        .replace(
            "../out/synthesized-mcp-memory.jsonl",
            &dir.join("synthesized.jsonl").display().to_string(),
        );
    assert!(text.contains(program), "the example's command changed");
    let path = dir.join("SYNTH.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A job playing the synthesized scenarios against the same server (its
/// `[environment]` table copied from SYNTH.toml, seed calls included), two
/// samples each.
fn run_config(dir: &std::path::Path, synth: &std::path::Path) -> std::path::PathBuf {
    let synth = std::fs::read_to_string(synth).unwrap();
    let environment = &synth[synth.find("[environment]").unwrap()..];
    let spec = crate::common::JobSpec {
        name: "synthesized-mcp".into(),
        scenarios: dir.join("synthesized.jsonl"),
        ..Default::default()
    };
    let builtin = "[environment]\nname = \"builtin:retail\"\n";
    let job = crate::common::job_toml(&spec, &dir.join("run.db"));
    assert!(job.contains(builtin), "common::job_toml changed");
    let text = job.replace(builtin, &format!("{environment}\n")) + "samples_per_scenario = 2\n";
    let path = dir.join("run.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn synthesize_over_mcp_memory_writes_scenarios_that_run_plays_with_rewards_of_one_and_zero() {
    let test =
        "synthesize_over_mcp_memory_writes_scenarios_that_run_plays_with_rewards_of_one_and_zero";
    let Some(program) = crate::mcp::server("SPARRING_MCP_MEMORY", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let synth = synth_config(dir.path(), &program, 8);
    let out = crate::common::sparring(dir.path(), &["synthesize", synth.to_str().unwrap()]);
    let said = crate::common::text(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        crate::common::text(&out.stderr)
    );
    assert!(said.contains("accepted 8 of 8 scenarios"), "{said}");
    // The generic mock's deliberate flaws reach every stage validation owns.
    for stage in ["execution", "state", "unknown_id", "communicate"] {
        assert!(said.contains(&format!("  {stage} ")), "{stage}: {said}");
    }
    let written = std::fs::read_to_string(dir.path().join("synthesized.jsonl")).unwrap();
    let scenarios: Vec<Scenario> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(scenarios.len(), 8);
    let writes = scenarios
        .iter()
        .filter(|s| s.tags.iter().any(|t| t == "write"))
        .count();
    assert!(writes > 0 && writes < 8, "{writes} writes of 8");

    let job = run_config(dir.path(), &synth);
    let out = crate::common::sparring(dir.path(), &["run", job.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}{}",
        crate::common::text(&out.stdout),
        crate::common::text(&out.stderr)
    );
    let store = sparring::store::open(&format!("sqlite://{}", dir.path().join("run.db").display()))
        .await
        .unwrap();
    let job_id = store
        .find_job_by_name("synthesized-mcp")
        .await
        .unwrap()
        .unwrap()
        .id;
    let all = store.conversations_page(job_id, 0, 1000).await.unwrap();
    assert_eq!(all.len(), 16);
    let rewards: Vec<f64> = all.iter().map(|c| c.conversation.reward.unwrap()).collect();
    assert!(
        rewards.contains(&1.0) && rewards.contains(&0.0),
        "{rewards:?}"
    );
}

#[tokio::test]
async fn a_tools_model_that_fails_during_validation_fails_the_proposal_and_rejects_nothing() {
    let server = crate::common::mock(MockConfig::default()).await;
    let config =
        crate::common::endpoint_config("tools", &server.base_url(), "mock-tools+malformed");
    let model: Arc<dyn ChatModel> = Arc::new(Endpoint::new(&config, &server.base_url()).unwrap());
    let env = SimulatedEnvironment::load(
        &crate::common::repo().join("data/simulated/tools.json"),
        Some(model),
    )
    .unwrap();
    let invalid = validate(&env, &row(simulated_status()), &ProposalBrief::default())
        .await
        .unwrap_err();
    // The environment's failure, kept apart from what the generator is told.
    assert!(invalid.rejection().is_none(), "{invalid:?}");
    let sparring::synth::execute::Invalid::Environment(error) = invalid else {
        panic!("{invalid:?}");
    };
    assert!(
        error.to_string().contains("simulated tool 'get_order'"),
        "{error}"
    );
}
