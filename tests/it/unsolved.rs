//! Closing the loop on synthesized scenarios (issue 18 §6), told through real
//! interfaces: `sparring synthesize` (mock-synth over HTTP) writes retail
//! scenarios, `sparring run` plays each k = 3 times with the mock policy into
//! a real SQLite file (and Postgres when `SPARRING_TEST_POSTGRES` names one),
//! and `stats`, `export`, `conversations` and the HTTP API tell the unsolved
//! ones apart.
//!
//! The mock policy replays a scenario's gold actions, so it passes nearly
//! every synthesized scenario in 3 tries. The set therefore gets one it can
//! never pass: a synthesized scenario whose reward also asks for a `regex`
//! the mock's final reply never matches (`synth-unpassable`); and a copy of
//! it without the `synthesized` tag (`hand-unpassable`), which nobody passes
//! either and which must not be marked unsolved.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sparring::store::{self, ScenarioAttempts, Store};

use crate::common::{
    databases, job_id_from, job_toml, repo, sparring, text, unique_name, JobSpec, Service,
};
use crate::store_story::{new_conversation, new_items, new_job};

const UNPASSABLE: &str = "synth-unpassable";
const HAND_WRITTEN: &str = "hand-unpassable";
const K: usize = 3;

/// `sparring synthesize` of `target` retail scenarios into `dir`, plus the
/// two unpassable ones; returns the scenarios file.
fn synthesized_scenarios(dir: &Path, target: u32) -> PathBuf {
    let config = dir.join("SYNTH.toml");
    std::fs::write(
        &config,
        format!(
            "name = \"t\"\ntarget = {target}\nmax_proposals = 200\nconcurrency = 4\n\
             examples = \"{}\"\noutput = \"synth.jsonl\"\n\
             [endpoints.generator]\nmock = true\nmodel = \"mock-synth\"\n\
             [roles]\ngenerator = \"generator\"\n[environment]\nname = \"builtin:retail\"\n",
            repo().join("data/retail/scenarios.jsonl").display()
        ),
    )
    .unwrap();
    let run = sparring(dir, &["synthesize", config.to_str().unwrap(), "--quiet"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let out = dir.join("synth.jsonl");
    let mut rows: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), target as usize);
    let model = rows[0].clone();
    rows.push(unpassable(&model, UNPASSABLE, true));
    rows.push(unpassable(&model, HAND_WRITTEN, false));
    let lines: Vec<String> = rows.iter().map(Value::to_string).collect();
    std::fs::write(&out, lines.join("\n") + "\n").unwrap();
    out
}

/// `model` under another id, whose reward also needs a final reply the mock
/// policy never gives; tagged `synthesized` or not.
fn unpassable(model: &Value, id: &str, synthesized: bool) -> Value {
    let mut row = model.clone();
    row["id"] = json!(id);
    let tags: Vec<Value> = row["tags"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| *t != "synthesized")
        .cloned()
        .chain(synthesized.then(|| json!("synthesized")))
        .collect();
    row["tags"] = json!(tags);
    let basis = row["evaluation"]["reward_basis"].as_array_mut().unwrap();
    basis.push(json!("regex"));
    row["evaluation"]["regex"] = json!({"pattern": "REFUND-CODE-\\d{6}"});
    row
}

/// A job over `scenarios` with k samples each, on `database` (a SQLite file
/// in `dir` when `None`); returns its config and database URL.
fn job_over(dir: &Path, scenarios: &Path, database: Option<String>) -> (PathBuf, String) {
    let spec = JobSpec {
        scenarios: scenarios.to_path_buf(),
        database,
        name: unique_name("unsolved"),
        ..JobSpec::default()
    };
    let db = dir.join("test.db");
    let url = spec
        .database
        .clone()
        .unwrap_or_else(|| format!("sqlite://{}", db.display()));
    // `[dataset]` is the config's last table.
    let toml = job_toml(&spec, &db) + &format!("samples_per_scenario = {K}\n");
    let path = dir.join(format!("{}.toml", spec.name));
    std::fs::write(&path, toml).unwrap();
    (path, url)
}

/// Run `sparring` in `dir`, asserting it succeeds; its stdout.
pub(crate) fn ok(dir: &Path, args: &[&str]) -> String {
    let out = sparring(dir, args);
    assert!(
        out.status.success(),
        "sparring {args:?}:\n{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// `sparring stats --json` of `job`.
pub(crate) fn stats(dir: &Path, job: i64, url: &str) -> Value {
    let job = job.to_string();
    let out = ok(dir, &["stats", "--job", &job, "--json", "--database", url]);
    serde_json::from_str(&out).unwrap()
}

fn ids(values: &Value) -> BTreeSet<String> {
    values
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// The ids of the rows of a scenarios JSONL.
fn scenario_ids(jsonl: &str) -> BTreeSet<String> {
    jsonl
        .lines()
        .map(|l| {
            let row: Value = serde_json::from_str(l).unwrap();
            row["id"].as_str().unwrap().to_string()
        })
        .collect()
}

/// Scenario id → rewards of the rows of an `hf` export (its metadata column).
fn rewards_by_scenario(jsonl: &str) -> BTreeMap<String, Vec<f64>> {
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for line in jsonl.lines().filter(|l| !l.trim().is_empty()) {
        let row: Value = serde_json::from_str(line).unwrap();
        let metadata = &row["metadata"];
        by.entry(metadata["scenario"].as_str().unwrap().to_string())
            .or_default()
            .push(metadata["reward"].as_f64().unwrap());
    }
    by
}

fn hf_export(dir: &Path, job: i64, url: &str, extra: &[&str]) -> BTreeMap<String, Vec<f64>> {
    let job = job.to_string();
    let mut args = vec![
        "export",
        "--job",
        &job,
        "--format",
        "hf",
        "--out",
        "-",
        "--database",
        url,
    ];
    args.extend(extra);
    rewards_by_scenario(&ok(dir, &args))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synthesized_scenario_no_attempt_passes_is_unsolved_listed_and_left_out_of_exports_unless_kept(
) {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = synthesized_scenarios(dir.path(), 12);
    let databases = databases(dir.path(), "unsolved synthesized scenarios");
    for database in databases {
        unsolved_story(dir.path(), &scenarios, database).await;
    }
}

async fn unsolved_story(dir: &Path, scenarios: &Path, database: Option<String>) {
    let (config, url) = job_over(dir, scenarios, database);
    let run = ok(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    let job = job_id_from(&run);

    // Every conversation, read without the filter: the ground truth.
    let all = hf_export(dir, job, &url, &["--keep-unsolved"]);
    assert_eq!(all.len(), 14, "every scenario ran: {all:?}");
    assert!(all.values().all(|r| r.len() == K), "{all:?}");
    let passed = |id: &str| all[id].iter().any(|r| *r >= 1.0);
    assert!(!passed(UNPASSABLE) && !passed(HAND_WRITTEN));
    let unsolved_by_hand: BTreeSet<String> = all
        .keys()
        .filter(|id| *id != HAND_WRITTEN && !passed(id))
        .cloned()
        .collect();

    // Stats: the unsolved are exactly the synthesized ones no attempt passed.
    let report = stats(dir, job, &url);
    let synthesized = &report["synthesized"];
    assert_eq!(ids(&synthesized["unsolved_ids"]), unsolved_by_hand);
    assert!(unsolved_by_hand.contains(UNPASSABLE));
    assert_eq!(synthesized["scenarios"], 13, "{synthesized}");
    assert_eq!(
        synthesized["hand_written"], 1,
        "the untagged one is not counted"
    );
    assert_eq!(synthesized["undecided"], 0);
    let solved = synthesized["solved"].as_u64().unwrap();
    assert!(solved >= 1, "{synthesized}");
    assert_eq!(solved + unsolved_by_hand.len() as u64, 13);
    let job_text = job.to_string();
    let text_report = ok(dir, &["stats", "--job", &job_text, "--database", &url]);
    let line = |label: &str| {
        text_report
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no '{label}' line in:\n{text_report}"))
            .split_whitespace()
            .skip(1)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(line("solved "), solved.to_string());
    assert!(line("unsolved ").contains(UNPASSABLE), "{text_report}");
    assert!(line("hand-written ").starts_with("1 "), "{text_report}");

    // Exports leave the unsolved out by default, whatever the format.
    let kept = hf_export(dir, job, &url, &[]);
    let kept_ids: BTreeSet<&String> = kept.keys().collect();
    let expected: BTreeSet<&String> = all
        .keys()
        .filter(|id| !unsolved_by_hand.contains(*id))
        .collect();
    assert_eq!(kept_ids, expected);
    assert_eq!(
        kept[HAND_WRITTEN].len(),
        K,
        "a hand-written scenario is kept"
    );
    let openai = dir.join(format!("job{job}.jsonl"));
    let said = ok(
        dir,
        &[
            "export",
            "--job",
            &job_text,
            "--format",
            "openai",
            "--out",
            openai.to_str().unwrap(),
            "--database",
            &url,
        ],
    );
    let dropped = K * unsolved_by_hand.len();
    assert!(
        said.contains(&format!("{dropped} of unsolved synthesized scenarios")),
        "{said}"
    );
    let lines = std::fs::read_to_string(&openai).unwrap().lines().count();
    assert_eq!(lines, 14 * K - dropped);

    // `sparring conversations` too.
    let listed = ok(
        dir,
        &["conversations", "--job", &job_text, "--database", &url],
    );
    assert!(
        !listed.contains(UNPASSABLE) && listed.contains(HAND_WRITTEN),
        "{listed}"
    );
    let listed = ok(
        dir,
        &[
            "conversations",
            "--job",
            &job_text,
            "--database",
            &url,
            "--keep-unsolved",
        ],
    );
    assert_eq!(listed.matches(UNPASSABLE).count(), K, "{listed}");

    // The curated dataset: the solved synthesized scenarios, which run as they are.
    let curated = dir.join(format!("curated{job}.jsonl"));
    ok(
        dir,
        &[
            "export",
            "--job",
            &job_text,
            "--format",
            "scenarios",
            "--out",
            curated.to_str().unwrap(),
            "--database",
            &url,
        ],
    );
    let curated_ids = scenario_ids(&std::fs::read_to_string(&curated).unwrap());
    let solved_ids: BTreeSet<String> = all
        .keys()
        .filter(|id| *id != HAND_WRITTEN && passed(id))
        .cloned()
        .collect();
    assert_eq!(curated_ids, solved_ids);
    let (curated_job, _) = job_over(dir, &curated, None);
    ok(dir, &["validate", curated_job.to_str().unwrap()]);

    over_http(&url, job, &unsolved_by_hand, &solved_ids).await;
}

/// The service says and does the same: stats, exports, the scenarios format.
async fn over_http(url: &str, job: i64, unsolved: &BTreeSet<String>, solved: &BTreeSet<String>) {
    let service = Service::over(url, Some("t0ken"), tempfile::tempdir().unwrap()).await;
    let report = service.json(&format!("/v1/jobs/{job}/stats")).await;
    assert_eq!(&ids(&report["synthesized"]["unsolved_ids"]), unsolved);

    let export = service
        .text(&format!("/v1/jobs/{job}/export?format=hf"))
        .await;
    let exported = rewards_by_scenario(&export);
    assert!(
        exported.keys().all(|id| !unsolved.contains(id)),
        "{exported:?}"
    );
    assert!(exported.contains_key(HAND_WRITTEN));
    let export = service
        .text(&format!(
            "/v1/jobs/{job}/export?format=hf&keep_unsolved=true"
        ))
        .await;
    assert_eq!(rewards_by_scenario(&export)[UNPASSABLE].len(), K);

    let curated = service
        .text(&format!("/v1/jobs/{job}/export?format=scenarios"))
        .await;
    assert_eq!(&scenario_ids(&curated), solved);
    let refused = service
        .get(&format!(
            "/v1/jobs/{job}/export?format=scenarios&min_reward=1"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 422);
    let body: Value = refused.json().await.unwrap();
    assert!(body.to_string().contains("min_reward"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synthesized_scenario_with_a_failed_item_is_undecided_until_its_retry_decides_it() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = synthesized_scenarios(dir.path(), 2);
    let (config, url) = job_over(dir.path(), &scenarios, None);
    let job = job_id_from(&ok(dir.path(), &["submit", config.to_str().unwrap()]));

    // A worker whose model calls for one of the unpassable scenario's items
    // failed after their retries: the item is failed, the others go back.
    let store = store::open(&url).await.unwrap();
    let leased = store
        .lease_items(job, "worker-a", 1000, 60_000)
        .await
        .unwrap();
    let victim = leased.iter().find(|i| i.scenario_id == UNPASSABLE).unwrap();
    store
        .fail_item(
            victim.id,
            "worker-a",
            "policy_error",
            "HTTP 500 after 2 retries",
        )
        .await
        .unwrap();
    store.release_items(job, "worker-a").await.unwrap();
    store.close().await;

    let job_text = job.to_string();
    // The job ends with its failed item: exit 1.
    let resumed = sparring(
        dir.path(),
        &["run", "--resume", &job_text, "--database", &url, "--quiet"],
    );
    assert_eq!(resumed.status.code(), Some(1), "{}", text(&resumed.stdout));
    assert!(text(&resumed.stdout).contains("1 items failed"));
    let synthesized = stats(dir.path(), job, &url)["synthesized"].clone();
    assert!(
        !ids(&synthesized["unsolved_ids"]).contains(UNPASSABLE),
        "2 failed attempts of 3 planned do not make it unsolved: {synthesized}"
    );
    assert_eq!(synthesized["undecided"], 1, "{synthesized}");
    assert_eq!(synthesized["undecided_failed"], 1, "{synthesized}");
    assert_eq!(
        hf_export(dir.path(), job, &url, &[])[UNPASSABLE].len(),
        K - 1,
        "an undecided scenario's conversations are exported"
    );

    ok(
        dir.path(),
        &[
            "run",
            "--resume",
            &job_text,
            "--database",
            &url,
            "--retry-failed",
            "--quiet",
        ],
    );
    let synthesized = stats(dir.path(), job, &url)["synthesized"].clone();
    assert!(
        ids(&synthesized["unsolved_ids"]).contains(UNPASSABLE),
        "{synthesized}"
    );
    assert_eq!(synthesized["undecided"], 0, "{synthesized}");
    assert!(!hf_export(dir.path(), job, &url, &[]).contains_key(UNPASSABLE));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenario_attempts_count_each_scenarios_items_by_how_far_they_got() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "scenario attempts") {
        let url = database
            .unwrap_or_else(|| format!("sqlite://{}", dir.path().join("attempts.db").display()));
        let store = store::open(&url).await.unwrap();
        attempts_story(store.as_ref()).await;
        store.close().await;
    }
}

async fn attempts_story(store: &dyn Store) {
    let name = unique_name("attempts");
    let job = store.create_job(&new_job(&name, &name)).await.unwrap().id;
    let items: Vec<_> = ["a", "b", "c"]
        .iter()
        .flat_map(|s| new_items(s, 4))
        .collect();
    store.add_items(job, &items).await.unwrap();
    let leased = store.lease_items(job, "w", 100, 60_000).await.unwrap();
    let of = |s: &str| {
        leased
            .iter()
            .filter(|i| i.scenario_id == s)
            .collect::<Vec<_>>()
    };
    // a: rewards 1, 0.9999999999 (a pass, give or take rounding), 0; one left pending.
    // b: rewards 0.5, 0; one unscored (the simulator broke it); one failed.
    // c: all four done, none passing.
    let done: Vec<(_, Option<f64>)> = vec![
        (of("a")[0], Some(1.0)),
        (of("a")[1], Some(0.999_999_999_9)),
        (of("a")[2], Some(0.0)),
        (of("b")[0], Some(0.5)),
        (of("b")[1], Some(0.0)),
        (of("b")[2], None),
        (of("c")[0], Some(0.0)),
        (of("c")[1], Some(0.25)),
        (of("c")[2], Some(0.0)),
        (of("c")[3], Some(0.99)),
    ];
    for (item, reward) in done {
        let c = new_conversation(item, "user_stop", reward);
        store.complete_item(item.id, "w", &c).await.unwrap();
    }
    store
        .fail_item(of("b")[3].id, "w", "policy_error", "HTTP 500")
        .await
        .unwrap();
    store.release_items(job, "w").await.unwrap();

    let counted = store
        .scenario_attempts(job, sparring::verify::solved::SUCCESS_REWARD)
        .await
        .unwrap();
    let row = |id: &str, waiting, failed, unscored, scored, passed| ScenarioAttempts {
        scenario_id: id.into(),
        planned: 4,
        waiting,
        failed,
        unscored,
        scored,
        passed,
    };
    assert_eq!(
        counted,
        vec![
            row("a", 1, 0, 0, 3, 2),
            row("b", 0, 1, 1, 2, 0),
            row("c", 0, 0, 0, 4, 0),
        ]
    );
    use sparring::verify::solved::{outcome, ScenarioOutcome::*};
    let outcomes: Vec<_> = counted.iter().map(outcome).collect();
    assert_eq!(outcomes, [Solved, Undecided, Unsolved]);
    assert_eq!(
        store.scenario_attempts(job + 1_000_000, 1.0).await.unwrap(),
        vec![],
        "a job without items has no scenarios"
    );
}
