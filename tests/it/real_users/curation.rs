//! Curation of an import of real users (issue 36): `--profile strict` on the
//! tau2 airline run keeps every conversation whose reward is 1 and whose
//! labels are clean, unless a gate other than the reward and the flags
//! drops it and the manifest says why; a conversation without a persona is
//! not capped per persona (and the manifest says so); the card and `stats`
//! name the file's models; a side of a split with no rows is not written,
//! and `datasets.load_dataset(folder)` loads what is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::common::{job_id_from, sparring, text};

use super::{labels, shared_dir, TAU2_FILE};

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = sparring(dir, args);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "sparring {args:?}:\n{said}");
    said
}

#[tokio::test]
async fn strict_export_of_the_tau2_import_keeps_every_clean_success_or_names_why_not() {
    let shared = shared_dir();
    if !shared.is_dir() {
        println!(
            "SKIPPED: curating the tau2 import: {} is not there",
            shared.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let db = format!("sqlite://{}", dir.join("c.db").display());
    let file = shared.join(TAU2_FILE);
    let said = run_ok(
        dir,
        &[
            "import",
            file.to_str().unwrap(),
            "--name",
            "tau2",
            "--database",
            &db,
        ],
    );
    let job = job_id_from(&said).to_string();
    let stats = run_ok(dir, &["stats", "--job", &job, "--database", &db]);
    assert!(
        stats.contains("policy model  claude-sonnet-4-5 (50)"),
        "{stats}"
    );
    assert!(stats.contains("user model    gpt-4.1 (50)"), "{stats}");

    let out = dir.join("strict");
    let data = out.join("data.jsonl");
    run_ok(
        dir,
        &[
            "export",
            "--job",
            &job,
            "--format",
            "hf",
            "--profile",
            "strict",
            "--out",
            data.to_str().unwrap(),
            "--database",
            &db,
        ],
    );
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let cap = &manifest["stratum_cap"];
    assert_eq!(cap["by"], "persona", "{cap}");
    assert!(cap["not_capped"].as_u64().unwrap() > 3, "{cap}");
    assert!(
        cap["why_not_capped"]
            .as_str()
            .unwrap()
            .contains("no persona"),
        "{cap}"
    );
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        card.contains("- Policy models: claude-sonnet-4-5"),
        "{card}"
    );
    assert!(card.contains("- Simulated-user models: gpt-4.1"), "{card}");

    // Every stored conversation: its task, its reward, and why it was dropped.
    let store = sparring::store::open(&db).await.unwrap();
    let all = store
        .conversations_page(job.parse().unwrap(), 0, 1_000)
        .await
        .unwrap();
    store.close().await;
    let dropped: BTreeMap<i64, (String, String)> = manifest["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["conversation"].as_i64().unwrap(),
                (
                    d["gate"].as_str().unwrap().to_string(),
                    d["reason"].as_str().unwrap_or_default().to_string(),
                ),
            )
        })
        .collect();
    let labels = labels();
    let clean: BTreeSet<&str> = labels
        .conversations
        .iter()
        .filter(|l| l.defects.is_empty() && l.clean.iter().any(|c| c == "all"))
        .map(|l| l.at.as_str())
        .collect();
    let mut kept = 0;
    for c in &all {
        let c = &c.conversation;
        let at = format!("tau2/{}/{}", c.scenario_id, c.sample);
        if c.reward != Some(1.0) || !clean.contains(at.as_str()) {
            continue;
        }
        match dropped.get(&c.id) {
            None => kept += 1,
            Some((gate, reason)) => {
                assert!(
                    gate != "reward" && gate != "user_flags" && !reason.is_empty(),
                    "{at} (reward 1, labelled clean) was dropped by {gate}: {reason}"
                );
            }
        }
    }
    assert!(kept >= 30, "only {kept} clean successes kept");
}

/// The shared tau2 file with only its first simulation of reward 1 and its
/// first of reward 0: one task a strict export keeps.
fn one_success(shared: &Path) -> String {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(shared.join(TAU2_FILE)).unwrap()).unwrap();
    let sims = doc["simulations"].as_array().unwrap();
    let first = |reward: f64| {
        sims.iter()
            .find(|s| s["reward_info"]["reward"].as_f64() == Some(reward))
            .unwrap()
            .clone()
    };
    let mut trimmed = doc.clone();
    trimmed["simulations"] = Value::Array(vec![first(1.0), first(0.0)]);
    trimmed.to_string()
}

#[test]
fn an_empty_split_is_not_written_and_the_folder_loads_with_datasets() {
    let shared = shared_dir();
    if !shared.is_dir() {
        println!(
            "SKIPPED: an empty split of a tau2 import: {} is not there",
            shared.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let db = format!("sqlite://{}", dir.join("c.db").display());
    let file = dir.join("one_success.json");
    std::fs::write(&file, one_success(&shared)).unwrap();
    let said = run_ok(
        dir,
        &[
            "import",
            file.to_str().unwrap(),
            "--name",
            "one",
            "--database",
            &db,
        ],
    );
    let job = job_id_from(&said).to_string();
    let out = dir.join("strict");
    let data = out.join("data.jsonl");
    let said = run_ok(
        dir,
        &[
            "export",
            "--job",
            &job,
            "--format",
            "hf",
            "--profile",
            "strict",
            "--out",
            data.to_str().unwrap(),
            "--database",
            &db,
        ],
    );
    assert!(
        said.contains("1 to data.train.jsonl, none to validation (its file is not written)"),
        "{said}"
    );
    assert!(out.join("data.train.jsonl").is_file());
    assert!(!out.join("data.validation.jsonl").exists(), "{said}");
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(!card.contains("data.validation.jsonl"), "{card}");
    let sums = std::fs::read_to_string(out.join("data.jsonl.sha256")).unwrap();
    assert!(!sums.contains("validation"), "{sums}");
    let Ok(python) = std::env::var("SPARRING_EXPORT_CONSUMERS_PYTHON") else {
        println!("SKIPPED: load_dataset(folder): SPARRING_EXPORT_CONSUMERS_PYTHON is not set (scripts/export-consumers)");
        return;
    };
    let load = std::process::Command::new(python)
        .args([
            "-c",
            "import sys, datasets\nds = datasets.load_dataset(sys.argv[1])\nprint(sorted(ds), ds['train'].num_rows)",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        load.status.success(),
        "{}{}",
        text(&load.stdout),
        text(&load.stderr)
    );
    assert_eq!(text(&load.stdout).trim(), "['train'] 1");
}
