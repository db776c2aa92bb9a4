//! Probes (issue 42) through the real binary: the example's 60 retail probes
//! and the 20 phone ones against a mock policy that always holds the line
//! and one that never does, each family scored both ways, and reported by
//! `sparring stats --by probe.family`; the held conversations exported, the
//! held/broken pairs of one probe as DPO rows; the service's strata, export
//! refusals and job page.

use crate::common;

use std::path::{Path, PathBuf};

use common::{repo, sparring, text, Service};
use serde_json::Value;

/// `example` copied into `dir` with its files named absolutely, its
/// policy model `model` and `extra` appended to its `[dataset]`.
fn example_with(dir: &Path, example: &str, model: &str, extra: &str) -> PathBuf {
    let text = std::fs::read_to_string(repo().join("examples").join(example)).unwrap();
    let root = repo().display().to_string();
    let text = text
        .replace("\"../", &format!("\"{root}/"))
        .replace("model = \"mock-policy\"", &format!("model = \"{model}\""))
        .replace(
            "personas_per_scenario = 1",
            &format!("personas_per_scenario = 1\n{extra}"),
        );
    let path = dir.join(example);
    std::fs::write(&path, text).unwrap();
    path
}

fn run(dir: &Path, config: &Path) {
    let out = sparring(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// `sparring stats --by probe.family --json` of job 1: family → cell.
fn by_family(dir: &Path) -> serde_json::Map<String, Value> {
    let out = sparring(
        dir,
        &["stats", "--job", "1", "--by", "probe.family", "--json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["source"], "probe");
    report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["value"].as_str().unwrap().to_string(), c.clone()))
        .collect()
}

const RETAIL_FAMILIES: [&str; 6] = [
    "confirmation",
    "consequence",
    "disclosure",
    "injection",
    "policy_pressure",
    "scope_creep",
];

#[test]
fn every_retail_family_holds_against_a_perfect_mock_and_breaks_against_a_wrong_one() {
    for (model, held) in [("mock-policy+perfect", 1.0), ("mock-policy+wrong", 0.0)] {
        let dir = tempfile::tempdir().unwrap();
        let config = example_with(dir.path(), "probes-retail.toml", model, "");
        run(dir.path(), &config);
        let cells = by_family(dir.path());
        let families: Vec<&str> = cells.keys().map(String::as_str).collect();
        assert_eq!(families, RETAIL_FAMILIES, "{model}");
        for (family, cell) in &cells {
            let probe = &cell["probe"];
            assert_eq!(probe["probes"], 10, "{model} {family}");
            assert_eq!(
                probe["decided"], 10,
                "{model} {family}: every probe decided"
            );
            assert_eq!(
                probe["hold_rate"]["mean"].as_f64(),
                Some(held),
                "{model} {family}: {probe}"
            );
            let flips: u64 = probe["turn_of_flip"]
                .as_object()
                .unwrap()
                .values()
                .map(|n| n.as_u64().unwrap())
                .sum();
            // A judged family breaks without a turn; the others say where.
            let expected = if held == 0.0 && family != "consequence" {
                10
            } else {
                0
            };
            assert_eq!(flips, expected, "{model} {family}: {probe}");
        }
        if held == 0.0 {
            let scope = &cells["scope_creep"]["probe"]["blast_radius"];
            assert_eq!(scope["conversations"], 10, "{scope}");
            // Pressure breaks at the push the seed picks: not all at once.
            let pressure = cells["policy_pressure"]["probe"]["turn_of_flip"]
                .as_object()
                .unwrap()
                .len();
            assert!(pressure > 1, "{:?}", cells["policy_pressure"]);
        }
        let text_report = sparring(
            dir.path(),
            &["stats", "--job", "1", "--by", "probe.strategy"],
        );
        let shown = text(&text_report.stdout);
        assert!(shown.contains("Probes (held the line"), "{shown}");
        assert!(
            shown.contains("escalate") && shown.contains("pretext"),
            "{shown}"
        );
    }
}

#[test]
fn phone_probes_are_scored_from_the_phone_desks_state_both_ways() {
    for (model, held) in [("mock-policy+perfect", 1.0), ("mock-policy+wrong", 0.0)] {
        let dir = tempfile::tempdir().unwrap();
        let config = example_with(dir.path(), "probes-phone.toml", model, "");
        run(dir.path(), &config);
        let cells = by_family(dir.path());
        assert_eq!(cells.len(), 4, "{cells:?}");
        for (family, cell) in &cells {
            assert_eq!(cell["probe"]["probes"], 5, "{family}");
            assert_eq!(
                cell["probe"]["hold_rate"]["mean"].as_f64(),
                Some(held),
                "{model} {family}: {cell}"
            );
        }
    }
}

/// Job 1's conversations of one export, as JSON lines.
fn exported(dir: &Path, args: &[&str]) -> (Vec<Value>, String) {
    let out_file = dir.join("out.jsonl");
    let mut all = vec!["export", "--job", "1", "--out", out_file.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = sparring(dir, &all);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = std::fs::read_to_string(&out_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (lines, format!("{}{}", text(&out.stdout), text(&out.stderr)))
}

#[tokio::test]
async fn held_probes_export_alone_held_and_broken_answers_pair_for_dpo_and_the_service_shows_them()
{
    let dir = tempfile::tempdir().unwrap();
    // The plain mock breaks on some seeds: four samples of each probe give
    // both outcomes in most scenarios.
    let config = example_with(
        dir.path(),
        "probes-retail.toml",
        "mock-policy",
        "samples_per_scenario = 4",
    );
    run(dir.path(), &config);
    let cells = by_family(dir.path());
    let held: u64 = cells
        .values()
        .map(|c| c["probe"]["held"].as_u64().unwrap())
        .sum();
    let decided: u64 = cells
        .values()
        .map(|c| c["probe"]["decided"].as_u64().unwrap())
        .sum();
    assert_eq!(decided, 240);
    assert!(
        held > 120 && held < 240,
        "the plain mock holds most lines: {held}"
    );

    let (rows, said) = exported(dir.path(), &["--format", "hf", "--probe-outcome", "held"]);
    assert_eq!(rows.len() as u64, held, "{said}");
    assert!(rows.iter().all(|r| r["metadata"]["probe"]["held"] == true));
    let (rows, _) = exported(dir.path(), &["--format", "hf", "--probe-outcome", "broken"]);
    assert_eq!(rows.len() as u64, 240 - held);

    let (pairs, said) = exported(dir.path(), &["--format", "dpo", "--probe-pairs"]);
    assert!(said.contains("DPO pairs"), "{said}");
    assert!(!pairs.is_empty(), "{said}");
    let database = format!("sqlite://{}", dir.path().join("sparring.db").display());
    let store = sparring::store::open(&database).await.unwrap();
    for pair in &pairs {
        let m = &pair["metadata"];
        assert_eq!(m["source"], "probe");
        let side = |key: &str| {
            let id = m[key].as_i64().unwrap();
            let store = store.clone();
            async move { store.get_conversation(id).await.unwrap().unwrap() }
        };
        let (chosen, rejected) = (
            side("chosen_conversation").await,
            side("rejected_conversation").await,
        );
        assert_eq!(chosen.conversation.metadata["probe"]["held"], true);
        assert_eq!(rejected.conversation.metadata["probe"]["held"], false);
        assert_eq!(
            chosen.conversation.scenario_id,
            rejected.conversation.scenario_id
        );
        // The turn shape: the prompt ends where the two agents answered the
        // same thing differently, and each side is the agent's answer.
        let prompt = pair["prompt"].as_array().unwrap();
        assert!(prompt.iter().any(|m| m["role"] == "user"));
        for side in ["chosen", "rejected"] {
            assert!(pair[side]
                .as_array()
                .unwrap()
                .iter()
                .all(|m| m["role"] == "assistant"));
        }
        assert_ne!(pair["chosen"], pair["rejected"]);
    }
    let refused = sparring(
        dir.path(),
        &[
            "export",
            "--job",
            "1",
            "--out",
            "x.jsonl",
            "--format",
            "hf",
            "--probe-pairs",
        ],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("--probe-outcome held"));

    let service = Service::over(&database, None, tempfile::tempdir().unwrap()).await;
    let stats = service.json("/v1/jobs/1/stats?by=probe.family").await;
    assert_eq!(stats["cells"].as_array().unwrap().len(), 6, "{stats}");
    let bad = service
        .get("/v1/jobs/1/export?format=hf&probe_outcome=maybe")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status().as_u16(), 422);
    let body: Value = bad.json().await.unwrap();
    assert!(body.to_string().contains("probe_outcome"), "{body}");
    let held_lines = service
        .text("/v1/jobs/1/export?format=hf&probe_outcome=held")
        .await
        .lines()
        .count() as u64;
    assert_eq!(held_lines, held);
    let page = service.text("/jobs/1").await;
    assert!(
        page.contains("Probes: did the agent hold the line?"),
        "{page}"
    );
    let link = page
        .split("href=\"/conversations/")
        .find(|rest| rest.split('"').next().unwrap().contains("#turn-"))
        .expect("a broken conversation linked to its turn");
    let target = link.split('"').next().unwrap();
    let (id, turn) = target.split_once('#').unwrap();
    let conversation = service.text(&format!("/conversations/{id}")).await;
    assert!(conversation.contains(&format!("id=\"{turn}\"")), "{target}");
}
