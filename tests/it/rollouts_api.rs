//! `POST /v1/rollouts` over real HTTP: the service in this process on a
//! SQLite file, the policy the request names on a mock model server of its
//! own (the simulated user on the in-process mock), the NDJSON read line by
//! line as a trainer reads it.

use crate::common;

use std::collections::HashMap;
use std::time::Duration;

use common::Service;
use serde_json::{json, Value};
use sparring::config::{Boundary, EgressAllowlist, MockConfig, OperatorEndpoints};
use sparring::mock_llm::MockServer;

const TOKEN: &str = "rollouts-token-1";

/// The job config a request names: retail, the simulated user on the
/// in-process mock, no policy endpoint (the request brings it).
const CONFIG: &str = r#"name = "rollouts"
seed = 7
concurrency = 4
max_turns = 12

[endpoints.user]
mock = true
model = "mock-user"
timeout_secs = 10

[roles]
user = "user"

[user_simulator]
template = "prompts/user_simulator.tera"

[policy]
template = "prompts/policies/default.tera"

[environment]
name = "builtin:retail"

[dataset]
scenarios = "data/retail/scenarios.jsonl"
personas = "personas"
"#;

async fn service(token: Option<&str>, allow: &[&str]) -> Service {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("service.db").display());
    let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
    let service = Service::with_boundary(&database, token, dir, |root| {
        Boundary::new(root, OperatorEndpoints::default())
            .with_egress(EgressAllowlist::parse(&allow).unwrap())
    })
    .await;
    std::fs::write(service.dir.path().join("rollouts.toml"), CONFIG).unwrap();
    service
}

/// The policy's model server: the mock, knowing the retail scenarios.
async fn policy_server(latency_ms: u64) -> MockServer {
    let scenarios = sparring::persona::load::load_scenarios(
        &common::repo().join("data/retail/scenarios.jsonl"),
    )
    .unwrap();
    let config = MockConfig {
        latency_ms,
        ..MockConfig::default()
    };
    MockServer::start(([127, 0, 0, 1], 0).into(), scenarios, config)
        .await
        .unwrap()
}

fn scenario_ids(n: usize) -> Vec<String> {
    std::fs::read_to_string(common::repo().join("data/retail/scenarios.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn request(policy: &MockServer, ids: &[String], k: u32) -> Value {
    json!({
        "config": "rollouts.toml",
        "scenarios": {"ids": ids},
        "k": k,
        "policy": {"base_url": policy.base_url(), "model": "mock-policy",
                   "api_key": "trainer-key"}
    })
}

/// The NDJSON lines of a finished response.
async fn lines_of(response: reqwest::Response) -> Vec<Value> {
    let text = response.text().await.unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

async fn post(service: &Service, body: &Value) -> reqwest::Response {
    service
        .post("/v1/rollouts")
        .json(body)
        .send()
        .await
        .unwrap()
}

fn locations(body: &Value) -> Vec<String> {
    body["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors: {body}"))
        .iter()
        .map(|e| e["location"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_rollout_streams_as_it_finishes_and_each_group_closes_with_stats_of_its_stored_rewards(
) {
    let service = service(Some(TOKEN), &[]).await;
    let policy = policy_server(0).await;
    let ids = scenario_ids(3);
    let response = post(&service, &request(&policy, &ids, 3)).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/x-ndjson");
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let lines = lines_of(response).await;

    let first = &lines[0];
    assert_eq!(first["type"], "job", "{first}");
    assert_eq!(
        (first["groups"].as_u64(), first["rollouts"].as_u64()),
        (Some(3), Some(9))
    );
    let job = first["job_id"].as_i64().unwrap();
    assert_eq!(location, format!("/v1/jobs/{job}"));
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "summary", "{last}");
    assert_eq!(last["status"], "done", "{last}");
    assert_eq!(
        (last["rollouts"].as_u64(), last["failed"].as_u64()),
        (Some(9), Some(0))
    );
    assert_eq!(
        (last["groups"].as_u64(), last["open_groups"].as_u64()),
        (Some(3), Some(0))
    );

    // Each group line comes right after the last of its k rollouts, and its
    // statistics are those of the rewards stored for them.
    let mut seen: HashMap<String, Vec<(i64, f64)>> = HashMap::new();
    let mut groups = 0;
    for line in &lines[1..lines.len() - 1] {
        match line["type"].as_str().unwrap() {
            "rollout" => {
                let group = line["scenario"].as_str().unwrap().to_string();
                assert!(ids.contains(&group), "{group}");
                assert_eq!(line["group_id"], format!("{job}:{group}"));
                let id = line["conversation_id"].as_i64().unwrap();
                let stored = service.json(&format!("/v1/conversations/{id}")).await;
                let reward = stored["reward"].as_f64().unwrap();
                assert_eq!(line["reward"].as_f64(), Some(reward), "{line}");
                assert_eq!(line["termination"], stored["termination"]);
                let messages = line["messages"].as_array().unwrap();
                assert_eq!(messages.len(), stored["messages"].as_array().unwrap().len());
                for m in messages {
                    let policy_wrote = m["author"] == "policy";
                    assert_eq!(m["trainable"], policy_wrote, "{m}");
                    if m["role"] == "user" {
                        assert_eq!(m["trainable"], false, "a simulated user's turn: {m}");
                    }
                }
                assert!(messages.iter().any(|m| m["trainable"] == true));
                assert!(messages.iter().any(|m| m["author"] == "user"));
                seen.entry(group).or_default().push((id, reward));
            }
            "group" => {
                groups += 1;
                let group = line["scenario"].as_str().unwrap();
                assert_eq!(line["group_id"], format!("{job}:{group}"));
                let rewards: Vec<f64> = seen[group].iter().map(|r| r.1).collect();
                assert_eq!(
                    rewards.len(),
                    3,
                    "the group closed after its 3 rollouts: {line}"
                );
                let mean = rewards.iter().sum::<f64>() / 3.0;
                let std = (rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / 3.0).sqrt();
                assert!(
                    (line["reward_mean"].as_f64().unwrap() - mean).abs() < 1e-9,
                    "{line}"
                );
                assert!(
                    (line["reward_std"].as_f64().unwrap() - std).abs() < 1e-9,
                    "{line}"
                );
                assert_eq!(line["flat"], std < 1e-9);
                for a in line["advantages"].as_array().unwrap() {
                    let id = a["conversation_id"].as_i64().unwrap();
                    let reward = seen[group].iter().find(|r| r.0 == id).unwrap().1;
                    let advantage = a["advantage"].as_f64().unwrap();
                    assert!((advantage - (reward - mean)).abs() < 1e-9, "{a}");
                }
                assert_eq!(line["advantages"].as_array().unwrap().len(), 3);
            }
            other => panic!("unexpected line type {other}: {line}"),
        }
    }
    assert_eq!(groups, 3);

    // Stored as a job of its own, which stats and the conversation list see.
    let view = service.json(&format!("/v1/jobs/{job}")).await;
    assert_eq!(view["status"], "done", "{view}");
    let stats = service.json(&format!("/v1/jobs/{job}/stats")).await;
    assert_eq!(stats["conversations"]["total"], 9, "{stats}");
    // The key the request gave is never stored.
    let detail = service.json(&format!("/v1/jobs/{job}")).await.to_string();
    assert!(!detail.contains("trainer-key"), "{detail}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_responses_api_policy_that_returns_token_ids_streams_them_on_its_own_messages_only() {
    let service = service(None, &[]).await;
    let policy = policy_server(0).await;
    let ids = scenario_ids(1);
    let mut body = request(&policy, &ids, 2);
    body["policy"]["model"] = json!("mock-policy+tokens");
    body["policy"]["api"] = json!("responses");
    let response = post(&service, &body).await;
    assert_eq!(response.status(), 200);
    let lines = lines_of(response).await;
    let rollouts: Vec<&Value> = lines.iter().filter(|l| l["type"] == "rollout").collect();
    assert_eq!(rollouts.len(), 2, "{lines:?}");
    for r in rollouts {
        let mut carried = 0;
        for m in r["messages"].as_array().unwrap() {
            let Some(generated) = m.get("generation_token_ids") else {
                continue;
            };
            carried += 1;
            assert_eq!(m["author"], "policy", "only the policy's turns: {m}");
            assert_eq!(m["trainable"], true, "{m}");
            assert!(!m["prompt_token_ids"].as_array().unwrap().is_empty(), "{m}");
            assert_eq!(
                generated.as_array().unwrap().len(),
                m["generation_log_probs"].as_array().unwrap().len(),
                "{m}"
            );
        }
        let generations = r["usage"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["role"] == "policy")
            .unwrap()["calls"]
            .as_u64()
            .unwrap();
        assert_eq!(
            carried, generations,
            "one token record per policy generation: {r}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_that_fails_is_an_error_line_never_a_reward_and_its_group_still_closes() {
    let service = service(None, &[]).await;
    let policy = policy_server(0).await;
    let ids = scenario_ids(1);
    let mut body = request(&policy, &ids, 2);
    body["policy"]["model"] = json!("mock-policy+malformed");
    body["policy"]["max_retries"] = json!(0);
    let response = post(&service, &body).await;
    assert_eq!(response.status(), 200);
    let lines = lines_of(response).await;
    let errors: Vec<&Value> = lines.iter().filter(|l| l["type"] == "error").collect();
    assert_eq!(errors.len(), 2, "{lines:?}");
    for e in &errors {
        assert!(e.get("reward").is_none(), "{e}");
        assert!(!e["class"].as_str().unwrap().is_empty(), "{e}");
    }
    assert!(!lines.iter().any(|l| l["type"] == "rollout"), "{lines:?}");
    let group = lines.iter().find(|l| l["type"] == "group").unwrap();
    assert_eq!(
        (group["failed"].as_u64(), group["scored"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(group["reward_mean"], Value::Null);
    let summary = lines.last().unwrap();
    assert_eq!(
        (summary["type"].as_str(), summary["failed"].as_u64()),
        (Some("summary"), Some(2))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k_out_of_range_and_bad_fields_are_refused_naming_the_field_and_nothing_is_stored() {
    let service = service(Some(TOKEN), &[]).await;
    let policy = policy_server(0).await;
    let ids = scenario_ids(1);
    let cases: Vec<(Value, &str)> = vec![
        (json!(0), "k"),
        (json!(1001), "k"),
        (json!(-3), "k"),
        (json!("four"), "k"),
    ];
    for (k, field) in cases {
        let mut body = request(&policy, &ids, 1);
        body["k"] = k.clone();
        let response = post(&service, &body).await;
        assert_eq!(response.status(), 422, "k = {k}");
        let errors: Value = response.json().await.unwrap();
        assert_eq!(locations(&errors), [field], "{errors}");
    }
    let mut missing = request(&policy, &ids, 1);
    missing.as_object_mut().unwrap().remove("policy");
    missing["colour"] = json!("blue");
    let errors: Value = post(&service, &missing).await.json().await.unwrap();
    let mut found = locations(&errors);
    found.sort();
    assert_eq!(found, ["colour", "policy"], "{errors}");

    let mut unknown = request(&policy, &ids, 1);
    unknown["scenarios"]["ids"] = json!(["no-such-scenario"]);
    let response = post(&service, &unknown).await;
    assert_eq!(response.status(), 422);
    let errors: Value = response.json().await.unwrap();
    assert_eq!(locations(&errors), ["scenarios.ids[0]"], "{errors}");

    let mut outside = request(&policy, &ids, 1);
    outside["config"] = json!("../../etc/passwd");
    let errors: Value = post(&service, &outside).await.json().await.unwrap();
    assert_eq!(locations(&errors), ["config"], "{errors}");

    let mut bad_model = request(&policy, &ids, 1);
    bad_model["policy"]["model"] = json!("  ");
    let errors: Value = post(&service, &bad_model).await.json().await.unwrap();
    assert_eq!(locations(&errors), ["policy.model"], "{errors}");

    let not_json = service
        .post("/v1/rollouts")
        .header("content-type", "application/json")
        .body("{k: 1")
        .send()
        .await
        .unwrap();
    assert_eq!(not_json.status(), 400);
    let error: Value = not_json.json().await.unwrap();
    assert!(error["error"].as_str().unwrap().contains("JSON"), "{error}");

    let jobs = service.json("/v1/jobs").await;
    assert_eq!(jobs["jobs"].as_array().unwrap().len(), 0, "{jobs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_url_the_egress_allowlist_does_not_allow_is_refused_before_anything_runs() {
    let policy = policy_server(0).await;
    let service = service(Some(TOKEN), &["http://10.0.0.5:8000/v1"]).await;
    let response = post(&service, &request(&policy, &scenario_ids(1), 1)).await;
    assert_eq!(response.status(), 422);
    let errors: Value = response.json().await.unwrap();
    assert_eq!(locations(&errors), ["policy.base_url"], "{errors}");
    assert_eq!(errors["errors"][0]["file"], "request body", "{errors}");
    let jobs = service.json("/v1/jobs").await;
    assert_eq!(jobs["jobs"].as_array().unwrap().len(), 0, "{jobs}");
    assert_eq!(policy.stats().requests, 0, "the policy was never called");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_token_a_request_is_401_and_starts_nothing() {
    let service = service(Some(TOKEN), &[]).await;
    let policy = policy_server(0).await;
    let bare = service
        .client
        .post(format!("{}/v1/rollouts", service.url))
        .json(&request(&policy, &scenario_ids(1), 1))
        .send()
        .await
        .unwrap();
    assert_eq!(bare.status(), 401);
    let jobs = service.json("/v1/jobs").await;
    assert_eq!(jobs["jobs"].as_array().unwrap().len(), 0, "{jobs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_cancels_its_job_and_leaves_nothing_half_stored() {
    let service = service(None, &[]).await;
    let policy = policy_server(150).await;
    let ids = scenario_ids(2);
    let mut response = post(&service, &request(&policy, &ids, 20)).await;
    assert_eq!(response.status(), 200);
    let mut read = String::new();
    while !read.contains("\"type\":\"rollout\"") {
        let chunk = response
            .chunk()
            .await
            .unwrap()
            .expect("the stream ended early");
        read.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let first: Value = serde_json::from_str(read.lines().next().unwrap()).unwrap();
    let job = first["job_id"].as_i64().unwrap();
    drop(response);

    let view = service.wait_until(job, &["cancelled"]).await;
    let counts = &view["counts"];
    assert_eq!(counts["leased"], 0, "{view}");
    let done = counts["done"].as_i64().unwrap();
    assert!(done < 40, "the job stopped before its 40 rollouts: {view}");
    assert_eq!(done + counts["pending"].as_i64().unwrap(), 40, "{view}");
    // Every conversation stored is whole.
    let stored = service.json(&format!("/v1/jobs/{job}/conversations")).await;
    let conversations = stored["conversations"].as_array().unwrap();
    assert_eq!(conversations.len() as i64, done, "{stored}");
    for c in conversations {
        let id = c["id"].as_i64().unwrap();
        let detail = service.json(&format!("/v1/conversations/{id}")).await;
        assert!(detail["messages"].as_array().unwrap().len() > 2, "{detail}");
    }
    // And the policy is called no more.
    let calls = policy.stats().requests;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(policy.stats().requests, calls);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenarios_given_in_the_request_are_rolled_out_and_their_problems_said_by_index() {
    let service = service(None, &[]).await;
    let policy = policy_server(0).await;
    let objects: Vec<Value> =
        std::fs::read_to_string(common::repo().join("data/retail/scenarios.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .skip(4)
            .take(2)
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let mut body = request(&policy, &[], 2);
    body["scenarios"] = json!(objects);
    let response = post(&service, &body).await;
    assert_eq!(response.status(), 200);
    let lines = lines_of(response).await;
    let mut groups: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "group")
        .map(|l| l["scenario"].as_str().unwrap())
        .collect();
    groups.sort_unstable();
    let mut ids: Vec<&str> = objects.iter().map(|o| o["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(groups, ids);
    let summary = lines.last().unwrap();
    assert_eq!(
        (summary["rollouts"].as_u64(), summary["status"].as_str()),
        (Some(4), Some("done"))
    );

    let mut broken = objects.clone();
    broken[1].as_object_mut().unwrap().remove("user");
    body["scenarios"] = json!(broken);
    let response = post(&service, &body).await;
    assert_eq!(response.status(), 422);
    let errors: Value = response.json().await.unwrap();
    assert!(
        locations(&errors).iter().all(|l| l == "scenarios[1]"),
        "{errors}"
    );
    assert_eq!(errors["errors"][0]["file"], "request body", "{errors}");
}
