//! Token capture and rollout groups in exports and statistics (issue 28
//! §3, §4), through real interfaces: the `sparring` binary's `export` and
//! `stats` over a real SQLite file (and Postgres when `SPARRING_TEST_POSTGRES`
//! names one), the service's API, and NeMo Gym's own pydantic models from
//! its venv (when `SPARRING_NEMO_GYM_PYTHON` names its Python).
//!
//! The NeMo Gym story stores its conversations through the store, as a
//! generation job's item runner does (the policy's messages with the token
//! information its server returned, the rollout written for `/verify`
//! beside them), since the mock model server returns no token ids (yet):
//! what it tells is that what is stored comes out of the export untouched,
//! on the items NeMo Gym puts it on. The mock-job story runs a real job of
//! k samples per scenario.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Map, Value};
use sparring::env::nemo_gym::rollout::verify_request;
use sparring::export::nemo_gym::RECORD_KEY;
use sparring::llm::message::{Message, ToolCall};
use sparring::persona::nemo_gym::REQUEST_FIELD;
use sparring::store::{self, JobKind, NewConversation, NewItem, NewJob, NewMessage, Store};
use sparring::token_ids::TokenIds;

use crate::common::{databases, job_id_from, job_toml, repo, text, unique_name, JobSpec, Service};
use crate::store_story::new_conversation;
use crate::unsolved::{ok, stats};

fn lines(jsonl: &str) -> Vec<Value> {
    jsonl
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// The population mean and standard deviation of `rewards`.
fn mean_std(rewards: &[f64]) -> (f64, f64) {
    let n = rewards.len() as f64;
    let mean = rewards.iter().sum::<f64>() / n;
    let var = rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

// ------------------------------------------------------------ NeMo Gym rows

/// Scenario (a NeMo Gym row) → the rewards of its samples; `None`: not
/// scored (no verification).
const ROWS: [(&str, &[Option<f64>]); 3] = [
    ("row-mixed", &[Some(1.0), Some(0.0), Some(1.0)]),
    ("row-failing", &[Some(0.0), Some(0.0)]),
    ("row-broken", &[None]),
];

/// The row every conversation answers.
fn row(id: &str) -> Map<String, Value> {
    json!({
        "id": id,
        REQUEST_FIELD: {"input": [
            {"role": "system", "content": "You book trips."},
            {"role": "user", "content": "Book me a train."}
        ]},
        "expected": "booked",
    })
    .as_object()
    .cloned()
    .unwrap()
}

/// A generation's token information, different for each (sample, turn),
/// with log probabilities that only read back if nothing rounds them.
fn tokens(sample: usize, turn: u32) -> TokenIds {
    let base = 1000 * sample as u32 + 10 * turn;
    TokenIds {
        prompt_token_ids: (base..base + 40).chain([u32::MAX]).collect(),
        generation_token_ids: vec![base + 7, 151_643],
        generation_log_probs: vec![-0.1 - 0.2 * f64::from(turn), -1.234_567_890_123_456_7e-7],
    }
}

/// The policy's view of one conversation: the row's prelude, a tool call,
/// its result, the reply.
fn messages() -> Vec<Message> {
    vec![
        Message::system("You book trips."),
        Message::user("Book me a train."),
        Message {
            content: "Let me look.".into(),
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "book_train".into(),
                arguments: "{\"to\": \"Lyon\"}".into(),
            }],
            ..Message::assistant("")
        },
        Message::tool_result("call_1", "{\"status\": \"booked\"}"),
        Message::assistant("Booked: the 9:12 to Lyon."),
    ]
}

/// Conversation `sample` of `scenario` as the item runner stores it: with
/// `captured`, the policy's two generations carry their token information.
fn conversation(
    item: &sparring::store::ItemRow,
    reward: Option<f64>,
    captured: bool,
) -> NewConversation {
    let view = messages();
    let authors = ["system", "system", "policy", "env", "policy"];
    let turn_tokens = |i: usize| -> Option<Arc<TokenIds>> {
        let turn = match i {
            2 => 1,
            4 => 2,
            _ => return None,
        };
        captured.then(|| Arc::new(tokens(item.sample as usize, turn)))
    };
    let rows = view
        .iter()
        .zip(authors)
        .enumerate()
        .map(|(i, (m, author))| NewMessage {
            role: m.role.as_str().into(),
            content: m.content.clone(),
            tool_calls: (!m.tool_calls.is_empty()).then(|| json!(m.tool_calls)),
            tool_call_id: m.tool_call_id.clone(),
            author: author.into(),
            prompt_tokens: None,
            completion_tokens: None,
            latency_ms: None,
            tokens: turn_tokens(i),
        })
        .collect();
    let mut record = verify_request(&row(&item.scenario_id), &view, "policy-model");
    record["reward"] = json!(reward);
    let termination = if reward.is_some() {
        "policy_answered"
    } else {
        "env_error"
    };
    NewConversation {
        reward_breakdown: json!({"nemo_gym": {"score": reward}}),
        metadata: json!({"environment": "nemo_gym", RECORD_KEY: record}),
        messages: rows,
        ..new_conversation(item, termination, reward)
    }
}

/// A NeMo Gym job with [`ROWS`]' conversations; the mixed row's carry token
/// information, the others none.
async fn nemo_gym_job(store: &Arc<dyn Store>) -> i64 {
    let job = store
        .create_job(&NewJob {
            name: "gym-tokens".into(),
            kind: JobKind::Generation,
            config_snapshot:
                "[environment]\nkind = \"nemo_gym\"\nbase_url = \"http://127.0.0.1:9\"\n".into(),
            config_hash: unique_name("gym-tokens"),
        })
        .await
        .unwrap()
        .id;
    let items: Vec<NewItem> = ROWS
        .iter()
        .flat_map(|(scenario, rewards)| {
            (0..rewards.len()).map(move |sample| NewItem {
                key: format!("{scenario}/default/{sample}"),
                scenario_id: scenario.to_string(),
                persona_id: "default".into(),
                sample: sample as i64,
                seed: sample as i64,
            })
        })
        .collect();
    store.add_items(job, &items).await.unwrap();
    let leased = store.lease_items(job, "w", 16, 60_000).await.unwrap();
    assert_eq!(leased.len(), items.len());
    for item in &leased {
        let rewards = ROWS.iter().find(|(s, _)| *s == item.scenario_id).unwrap().1;
        let reward = rewards[item.sample as usize];
        let c = conversation(item, reward, item.scenario_id == "row-mixed");
        store.complete_item(item.id, "w", &c).await.unwrap();
    }
    job
}

/// The items of `line` (its input and output) that carry token information,
/// as (where, item).
fn carriers(line: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (place, items) in [
        ("input", &line[REQUEST_FIELD]["input"]),
        ("output", &line["response"]["output"]),
    ] {
        for (i, item) in items.as_array().unwrap().iter().enumerate() {
            if item.get("generation_token_ids").is_some() {
                out.push((format!("{place}[{i}]"), item.clone()));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_token_information_comes_out_of_the_nemo_gym_export_untouched_with_each_rows_group()
{
    let dir = tempfile::tempdir().unwrap();
    // On Postgres, a database of its own: other stories list every NeMo Gym
    // job of theirs, and would find this one.
    let test = "token capture and groups in nemo_gym exports";
    let sqlite = format!("sqlite://{}", dir.path().join("gym.db").display());
    let separate = crate::postgres::separate_database(test, "gym_tokens");
    for url in std::iter::once(sqlite).chain(separate) {
        nemo_gym_story(dir.path(), &url).await;
    }
}

async fn nemo_gym_story(dir: &Path, url: &str) {
    let store = store::open(url).await.unwrap();
    let job = nemo_gym_job(&store).await;
    let job_text = job.to_string();
    let export = |extra: &[&str]| -> (String, Vec<Value>) {
        let mut args = vec![
            "export",
            "--job",
            &job_text,
            "--format",
            "nemo_gym",
            "--out",
            "-",
            "--database",
            url,
        ];
        args.extend(extra);
        let out = ok(dir, &args);
        let rows = lines(&out);
        (out, rows)
    };
    let (raw, rows) = export(&[]);
    // The unscored row is left out, as ever.
    assert_eq!(rows.len(), 5, "{raw}");

    for line in &rows {
        let scenario = line["id"].as_str().unwrap();
        let carried = carriers(line);
        if scenario != "row-mixed" {
            assert!(carried.is_empty(), "{scenario}: {carried:?}");
            assert!(
                !line.to_string().contains("token_ids"),
                "nothing invented: {line}"
            );
            assert!(
                !line.to_string().contains("log_probs"),
                "nothing invented: {line}"
            );
            continue;
        }
        // One item per generation: the call (the last item its generation
        // made, after its text) and the reply; nothing else.
        let places: Vec<&str> = carried.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(places, ["output[1]", "output[3]"], "{line}");
        assert_eq!(carried[0].1["type"], "function_call");
        assert_eq!(carried[0].1["call_id"], "call_1");
        assert_eq!(carried[1].1["type"], "message");
        let sample = rows
            .iter()
            .filter(|l| l["id"] == "row-mixed")
            .position(|l| l == line)
            .unwrap();
        for ((_, item), turn) in carried.iter().zip([1, 2]) {
            let given = tokens(sample, turn);
            assert_eq!(item["prompt_token_ids"], json!(given.prompt_token_ids));
            assert_eq!(
                item["generation_token_ids"],
                json!(given.generation_token_ids)
            );
            // Compared as written: the same f64 always prints the same text.
            assert_eq!(
                item["generation_log_probs"].to_string(),
                json!(given.generation_log_probs).to_string()
            );
        }
    }
    // The stored rollout itself holds none: only the export puts them on.
    let first = store.conversations_page(job, 0, 1).await.unwrap();
    assert!(!first[0]
        .conversation
        .metadata
        .to_string()
        .contains("token_ids"));

    // Each row's group: all the job's scored conversations of its row.
    let (mean, std) = mean_std(&[1.0, 0.0, 1.0]);
    for line in &rows {
        let scenario = line["id"].as_str().unwrap();
        let reward = line["reward"].as_f64().unwrap();
        assert_eq!(line["group_id"], format!("{job}:{scenario}"));
        match scenario {
            "row-mixed" => {
                assert_eq!(line["group_size"], 3);
                assert!(close(line["group_reward_mean"].as_f64().unwrap(), mean));
                assert!(close(line["group_reward_std"].as_f64().unwrap(), std));
                assert!(
                    close(line["advantage"].as_f64().unwrap(), reward - mean),
                    "{line}"
                );
            }
            _ => {
                assert_eq!(line["group_size"], 2);
                assert_eq!(line["group_reward_std"], 0.0);
                assert_eq!(line["advantage"], 0.0, "a flat group teaches nothing");
            }
        }
    }
    // Normalized, and under a filter that drops part of a group: the group
    // is still the whole of it.
    let (_, kept) = export(&["--advantage", "normalized", "--min-reward", "1"]);
    assert_eq!(kept.len(), 2);
    for line in &kept {
        assert_eq!(
            line["group_size"], 3,
            "the filter does not shrink the group"
        );
        assert!(
            close(line["advantage"].as_f64().unwrap(), (1.0 - mean) / std),
            "{line}"
        );
    }

    // stats: two groups (the broken row has no reward), one flat, at 0.
    let report = stats(dir, job, url);
    let groups = &report["conversations"]["groups"];
    assert_eq!(groups["groups"], 2, "{groups}");
    assert_eq!(groups["flat"], 1);
    assert_eq!(groups["flat_share"], 0.5);
    assert_eq!(groups["flat_reward_mean"], 0.0);
    assert_eq!(
        (
            groups["flat_at_zero"].clone(),
            groups["flat_at_one"].clone()
        ),
        (json!(1), json!(0))
    );

    validate_with_nemo_gym(dir, &raw);
    store.close().await;
}

/// NeMo Gym's own models read every line, the items with token information
/// as its training variants, with the very numbers written.
fn validate_with_nemo_gym(dir: &Path, jsonl: &str) {
    let Ok(python) = std::env::var("SPARRING_NEMO_GYM_PYTHON") else {
        println!(
            "SKIPPED: NeMo Gym's models on the token fields: SPARRING_NEMO_GYM_PYTHON is not set"
        );
        return;
    };
    let path = dir.join("tokens.jsonl");
    std::fs::write(&path, jsonl).unwrap();
    let script = r#"
import json, sys
from nemo_gym.base_resources_server import BaseVerifyResponse
trained = 0
for line in open(sys.argv[1]):
    raw = json.loads(line)
    row = BaseVerifyResponse.model_validate(raw)
    for item, given in zip(row.response.output, raw["response"]["output"]):
        name = type(item).__name__
        if "generation_token_ids" in given:
            assert name.endswith("ForTraining"), name
            assert item.generation_token_ids == given["generation_token_ids"]
            assert item.prompt_token_ids == given["prompt_token_ids"]
            assert item.generation_log_probs == given["generation_log_probs"]
            trained += 1
        else:
            assert not name.endswith("ForTraining"), name
print(f"training items {trained}")
"#;
    let out = std::process::Command::new(python)
        .args(["-c", script, path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "NeMo Gym's models refused the export: {}",
        text(&out.stderr)
    );
    assert_eq!(text(&out.stdout).trim(), "training items 6");
}

// ---------------------------------------------------------- a job of k samples

const K: usize = 3;
const NEVER: &str = "never-passed";

/// The first three retail scenarios, and one that also asks for a reply the
/// mock policy never writes (so its group is flat at 0).
fn scenarios(dir: &Path) -> std::path::PathBuf {
    let all = std::fs::read_to_string(repo().join("data/retail/scenarios.jsonl")).unwrap();
    let mut rows: Vec<Value> = all
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut never = rows[0].clone();
    never["id"] = json!(NEVER);
    never["evaluation"]["reward_basis"]
        .as_array_mut()
        .unwrap()
        .push(json!("regex"));
    never["evaluation"]["regex"] = json!({"pattern": "NEVER-SAID-\\d{9}"});
    rows.push(never);
    let path = dir.join("scenarios.jsonl");
    let text: Vec<String> = rows.iter().map(Value::to_string).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

/// Scenario → (reward, metadata) of each row of an export's metadata.
fn by_scenario(metadata: &[Value]) -> BTreeMap<String, Vec<(f64, Value)>> {
    let mut by: BTreeMap<String, Vec<(f64, Value)>> = BTreeMap::new();
    for m in metadata {
        by.entry(m["scenario"].as_str().unwrap().to_string())
            .or_default()
            .push((m["reward"].as_f64().unwrap(), m.clone()));
    }
    by
}

/// Every row's group fields are its scenario's group's, as its rewards make
/// them, with the advantage `normalized` or centred.
fn assert_groups_match_rewards(job: i64, metadata: &[Value], normalized: bool) {
    for (scenario, rows) in by_scenario(metadata) {
        let rewards: Vec<f64> = rows.iter().map(|(r, _)| *r).collect();
        let (mean, std) = mean_std(&rewards);
        for (reward, m) in &rows {
            assert_eq!(m["group_id"], format!("{job}:{scenario}"));
            assert_eq!(m["group_size"], rows.len());
            assert!(close(m["group_reward_mean"].as_f64().unwrap(), mean), "{m}");
            assert!(close(m["group_reward_std"].as_f64().unwrap(), std), "{m}");
            let centred = reward - mean;
            let want = if normalized && std > 1e-9 {
                centred / std
            } else {
                centred
            };
            assert!(close(m["advantage"].as_f64().unwrap(), want), "{m}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_of_k_samples_exports_each_rows_group_as_its_rewards_make_it_and_stats_counts_the_flat_ones(
) {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = scenarios(dir.path());
    for database in databases(dir.path(), "rollout groups of a k-sample job") {
        let spec = JobSpec {
            scenarios: scenarios.clone(),
            database,
            name: unique_name("groups"),
            ..JobSpec::default()
        };
        let db = dir.path().join("groups.db");
        let url = spec
            .database
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}", db.display()));
        let config = dir.path().join(format!("{}.toml", spec.name));
        std::fs::write(
            &config,
            job_toml(&spec, &db) + &format!("samples_per_scenario = {K}\n"),
        )
        .unwrap();
        let job = job_id_from(&ok(
            dir.path(),
            &["run", config.to_str().unwrap(), "--quiet"],
        ));
        k_sample_story(dir.path(), job, &url).await;
    }
}

async fn k_sample_story(dir: &Path, job: i64, url: &str) {
    let job_text = job.to_string();
    // The openai export's sidecar: every scored conversation's metadata.
    let out = dir.join(format!("groups-{job}.jsonl"));
    let export = |extra: &[&str]| -> Vec<Value> {
        let mut args = vec![
            "export",
            "--job",
            &job_text,
            "--format",
            "openai",
            "--out",
            out.to_str().unwrap(),
            "--database",
            url,
            "--keep-flagged",
            "--keep-user-flagged",
        ];
        args.extend(extra);
        ok(dir, &args);
        lines(&std::fs::read_to_string(out.with_extension("metadata.jsonl")).unwrap())
    };
    let metadata = export(&[]);
    let groups = by_scenario(&metadata);
    assert_eq!(groups.len(), 4, "{groups:?}");
    assert!(groups.values().all(|rows| rows.len() == K), "{groups:?}");
    assert!(groups[NEVER].iter().all(|(r, _)| *r == 0.0));
    assert_groups_match_rewards(job, &metadata, false);
    assert_groups_match_rewards(job, &export(&["--advantage", "normalized"]), true);

    // stats counts the groups whose rewards are all equal.
    let flat: Vec<&Vec<(f64, Value)>> = groups
        .values()
        .filter(|rows| rows.iter().all(|(r, _)| *r == rows[0].0))
        .collect();
    let report = stats(dir, job, url);
    let counted = &report["conversations"]["groups"];
    assert_eq!(counted["groups"], 4, "{counted}");
    assert_eq!(counted["flat"], flat.len(), "{counted}");
    assert_eq!(counted["min_size"], K);
    assert!(counted["flat_at_zero"].as_u64().unwrap() >= 1, "{counted}");
    let said = ok(dir, &["stats", "--job", &job_text, "--database", url]);
    assert!(said.contains("Rollout groups"), "{said}");
    assert!(
        said.contains(&format!(
            "{} ({:.1}%)",
            flat.len(),
            100.0 * flat.len() as f64 / 4.0
        )),
        "{said}"
    );

    // The service: the same counts, and the export's advantage option.
    let service = Service::over(url, Some("t0ken"), tempfile::tempdir().unwrap()).await;
    let api = service.json(&format!("/v1/jobs/{job}/stats")).await;
    assert_eq!(api["conversations"]["groups"], *counted);
    let hf = service
        .text(&format!("/v1/jobs/{job}/export?format=hf&advantage=normalized&keep_flagged=true&keep_user_flagged=true"))
        .await;
    let rows: Vec<Value> = lines(&hf)
        .into_iter()
        .map(|l| l["metadata"].clone())
        .collect();
    assert_eq!(rows.len(), 4 * K);
    assert_groups_match_rewards(job, &rows, true);
    let refused = service
        .get(&format!(
            "/v1/jobs/{job}/export?format=hf&advantage=whitened"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 422);
    let body = refused.text().await.unwrap();
    assert!(
        body.contains("advantage") && body.contains("centered, normalized"),
        "{body}"
    );
    let page = service.text(&format!("/jobs/{job}")).await;
    assert!(
        page.contains(&format!("4 rollout groups, {} flat", flat.len())),
        "{page}"
    );
}
