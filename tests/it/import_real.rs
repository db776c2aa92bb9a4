//! Files nobody here wrote, imported through the binary: NeMo Gym's shipped
//! rollouts with a simulated user (its `tau2` agent,
//! `conversational_tool_use_simulation`, `nemo_user_sim`, from the installed
//! wheel) and tau2-bench results made with tau2-bench's own data models
//! (`tests/data/tau2/`). The simulated-user checks run on them as they are
//! stored, the mock's judges judge them, and every chat export of them is
//! read by the programs that read exports (`tests/it/export_consumers.py
//! --imported`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{job_id_from, mock_judges, repo, sparring, text};
use sparring::store;

const ROLLOUTS: [&str; 3] = [
    "responses_api_agents/tau2/data/example_rollouts.jsonl",
    "resources_servers/conversational_tool_use_simulation/data/example_rollouts.jsonl",
    "resources_servers/nemo_user_sim/data/example_rollouts.jsonl",
];

/// The wheel's site-packages, from `SPARRING_NEMO_GYM_DIR` (its
/// `resources_servers`).
fn site_packages() -> Option<PathBuf> {
    let dir = std::env::var("SPARRING_NEMO_GYM_DIR").ok()?;
    Some(Path::new(&dir).join(".."))
}

#[tokio::test]
async fn real_rollouts_and_tau2_results_import_are_checked_judged_and_exported_for_their_readers() {
    let Some(site) = site_packages() else {
        println!("SKIPPED: importing NeMo Gym's shipped rollouts: SPARRING_NEMO_GYM_DIR is not set (scripts/nemo-gym dir)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let db = format!("sqlite://{}", dir.join("real.db").display());
    let mut files: Vec<PathBuf> = ROLLOUTS.iter().map(|f| site.join(f)).collect();
    for tau2 in [
        "airline_real_run.json",
        "telecom_made_with_tau2.json",
        "mock_made_with_tau2.json",
    ] {
        files.push(repo().join("tests/data/tau2").join(tau2));
    }
    let mut args = vec!["import".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    args.extend(["--name", "real", "--database", &db].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let imported = sparring(dir, &args);
    assert!(imported.status.success(), "{}", text(&imported.stderr));
    let said = text(&imported.stdout);
    for (file, format) in [
        ("tau2/data/example_rollouts.jsonl", "nemo_gym"),
        ("nemo_user_sim/data/example_rollouts.jsonl", "nemo_gym"),
        ("airline_real_run.json", "tau2"),
    ] {
        let line = said.lines().find(|l| l.contains(file)).unwrap_or_default();
        assert!(
            line.contains(&format!("as {format} (detected)")),
            "{file}: {said}"
        );
    }
    let job = job_id_from(&said);
    let id = job.to_string();

    // The user checks ran as each was stored: every conversation whose user
    // was simulated has every check's outcome, and the tau2 ones have the
    // scenario the checks that need one read.
    let store = store::open(&db).await.unwrap();
    let conversations = store.conversations_page(job, 0, 1_000).await.unwrap();
    assert_eq!(conversations.len(), 5 + 5 + 5 + 4 + 2 + 1);
    let mut simulated = 0;
    for c in &conversations {
        let checks = c.conversation.user_checks.as_ref().expect("checks stored");
        let outcomes: Vec<&str> = checks["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["outcome"].as_str().unwrap())
            .collect();
        assert_eq!(outcomes.len(), 6, "{checks}");
        let format = c.conversation.metadata["import"]["format"]
            .as_str()
            .unwrap();
        if format == "tau2" {
            assert!(
                c.conversation.metadata["scenario"].is_object(),
                "no scenario"
            );
            assert!(
                outcomes.iter().filter(|o| **o != "unknown").count() >= 5,
                "{checks}"
            );
        }
        simulated += usize::from(outcomes.iter().any(|o| *o != "unknown"));
    }
    assert!(
        simulated >= 15,
        "{simulated} conversations with a simulated user checked"
    );
    store.close().await;

    // Judged by the mock as generated conversations are.
    std::fs::write(
        dir.join("judges.toml"),
        mock_judges(
            "[[judges]]\nname = \"helpfulness\"\nendpoint = \"judge\"\nbuiltin = \"helpfulness\"\n",
        ),
    )
    .unwrap();
    let judged = sparring(
        dir,
        &[
            "judge",
            "judges.toml",
            "--job",
            &id,
            "--database",
            &db,
            "--quiet",
        ],
    );
    assert!(judged.status.success(), "{}", text(&judged.stderr));
    assert!(
        text(&judged.stdout).contains("judge helpfulness: 22 ok"),
        "{}",
        text(&judged.stdout)
    );
    let stats = sparring(dir, &["stats", "--job", &id, "--database", &db, "--json"]);
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["conversations"]["total"], 22, "{stats}");

    // Every chat export, read by the programs that read them.
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    for format in ["openai", "hf", "sharegpt"] {
        let file = out.join(format!("{format}.jsonl"));
        let export = sparring(
            dir,
            &[
                "export",
                "--job",
                &id,
                "--format",
                format,
                "--out",
                file.to_str().unwrap(),
                "--database",
                &db,
            ],
        );
        assert!(
            export.status.success(),
            "{format}: {}",
            text(&export.stderr)
        );
        assert!(
            text(&export.stdout).contains("wrote 22 conversations"),
            "{format}: {}",
            text(&export.stdout)
        );
    }
    let Ok(python) = std::env::var("SPARRING_EXPORT_CONSUMERS_PYTHON") else {
        println!(
            "SKIPPED: the readers of the exports: SPARRING_EXPORT_CONSUMERS_PYTHON is not set"
        );
        return;
    };
    let run = std::process::Command::new(python)
        .arg(repo().join("tests/it/export_consumers.py"))
        .arg(&out)
        .arg(repo().join("docs/exports.md"))
        .arg("--imported")
        .output()
        .unwrap();
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}{}", text(&run.stderr));
    let report: Value = serde_json::from_str(&stdout).unwrap();
    for check in [
        "loads_unchanged:openai.jsonl",
        "loads_unchanged:openai.metadata.jsonl",
        "loads_unchanged:hf.jsonl",
        "loads_unchanged:sharegpt.jsonl",
        "openai_rules",
        "openai_renders_qwen3",
        "hf_renders_qwen3",
        "sharegpt_schema",
        "sharegpt_llamafactory_converter",
    ] {
        assert_eq!(
            (
                report[check]["passed"].as_u64(),
                report[check]["failed"].as_u64()
            ),
            (Some(22), Some(0)),
            "{check}: {}",
            report[check]
        );
    }
}
