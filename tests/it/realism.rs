//! `sparring compare-users SIM REAL --realism`: a mock job's simulated users
//! held against real ones, NeMo Gym's shipped rollouts with a simulated user
//! imported as the real job; a job against itself; the service's route.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{first_scenarios, job_id_from, sparring, text, write_job, JobSpec};

/// The measures every report holds, in its order.
const MEASURES: [&str; 15] = [
    "turns_per_conversation",
    "words_per_user_turn",
    "asks_question",
    "gives_id_or_number",
    "corrects_agent",
    "expresses_frustration",
    "typo_rate",
    "disclosure_order",
    "ends_confirmed",
    "ends_abandoned",
    "ends_transferred",
    "ends_cut_off",
    "unigram_jsd",
    "bigram_jsd",
    "type_token_ratio",
];

/// NeMo Gym's example rollouts whose users are simulated over several turns.
const ROLLOUTS: [&str; 3] = [
    "responses_api_agents/tau2/data/example_rollouts.jsonl",
    "resources_servers/conversational_tool_use_simulation/data/example_rollouts.jsonl",
    "resources_servers/nemo_user_sim/data/example_rollouts.jsonl",
];

fn mock_job(dir: &Path, scenarios: usize) -> (i64, String) {
    let spec = JobSpec {
        name: "mock-users".into(),
        scenarios: first_scenarios(dir, scenarios),
        personas_per_scenario: 2,
        ..JobSpec::default()
    };
    let (config, database) = write_job(dir, &spec);
    let run = sparring(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    (job_id_from(&text(&run.stdout)), database)
}

fn realism(dir: &Path, sim: i64, real: i64, database: &str) -> Value {
    let (sim, real) = (sim.to_string(), real.to_string());
    let out = sparring(
        dir,
        &[
            "compare-users",
            &sim,
            &real,
            "--realism",
            "--json",
            "--database",
            database,
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn measures(section: &Value) -> &Vec<Value> {
    section["measures"].as_array().unwrap()
}

/// Every measure is there, in its range, with the difference simulated − real
/// and an interval around it.
fn assert_in_range(section: &Value) {
    let names: Vec<&str> = measures(section)
        .iter()
        .map(|m| m["measure"].as_str().unwrap())
        .collect();
    assert_eq!(names, MEASURES);
    for m in measures(section) {
        let unit = m["unit"].as_str().unwrap();
        let (sim, real) = (m["sim"].as_f64(), m["real"].as_f64());
        let range = match unit {
            "count" => 0.0..=f64::MAX,
            "share" | "divergence" => 0.0..=1.0,
            "correlation" => -1.0..=1.0,
            other => panic!("unit {other}"),
        };
        for v in [sim, real].into_iter().flatten() {
            assert!(range.contains(&v), "{m}");
        }
        let Some(d) = m["difference"].as_f64() else {
            continue;
        };
        match unit {
            "divergence" => assert!((0.0..=1.0).contains(&d) && sim.is_none(), "{m}"),
            _ => assert!((d - (sim.unwrap() - real.unwrap())).abs() < 1e-9, "{m}"),
        }
        let gap = m["normalised_gap"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&gap), "{m}");
        let ci = m["ci95"].as_array().unwrap();
        let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
        assert!(lo <= hi, "{m}");
    }
}

/// A job against itself: matched on every scenario, no gap, every interval
/// holding 0, and still three gaps named.
fn assert_no_gap(report: &Value) {
    assert_eq!(report["summary"]["basis"], "matched", "{report}");
    assert_eq!(report["summary"]["mean_gap"], 0.0, "{report}");
    let matched = &report["matched"];
    assert_in_range(matched);
    for m in measures(matched) {
        if let Some(d) = m["difference"].as_f64() {
            assert_eq!(d, 0.0, "{m}");
            let ci = m["ci95"].as_array().unwrap();
            assert!(
                ci[0].as_f64().unwrap() <= 0.0 && 0.0 <= ci[1].as_f64().unwrap(),
                "{m}"
            );
        }
    }
    assert_eq!(
        report["summary"]["largest_gaps"].as_array().unwrap().len(),
        3
    );
}

#[tokio::test]
async fn a_mock_job_against_itself_shows_no_gap_and_a_missing_job_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let (job, database) = mock_job(dir.path(), 6);
    let report = realism(dir.path(), job, job, &database);
    assert_eq!(report["scenarios_in_both"], 6);
    assert_no_gap(&report);
    assert_eq!(report["sim"]["user_models"][0], "mock-user");

    let id = job.to_string();
    let missing = sparring(
        dir.path(),
        &[
            "compare-users",
            &id,
            "999",
            "--realism",
            "--database",
            &database,
        ],
    );
    assert_eq!(missing.status.code(), Some(3), "{}", text(&missing.stderr));
    assert!(
        text(&missing.stderr).contains("job 999 is not in"),
        "{}",
        text(&missing.stderr)
    );
}

/// The wheel's site-packages, from `SPARRING_NEMO_GYM_DIR` (its `resources_servers`).
fn site_packages() -> Option<PathBuf> {
    let dir = std::env::var("SPARRING_NEMO_GYM_DIR").ok()?;
    Some(Path::new(&dir).join(".."))
}

#[tokio::test]
async fn the_mock_user_is_measured_far_from_nemo_gym_s_recorded_simulated_users() {
    let Some(site) = site_packages() else {
        println!("SKIPPED: realism against NeMo Gym's shipped rollouts: SPARRING_NEMO_GYM_DIR is not set (scripts/nemo-gym dir)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (sim, database) = mock_job(dir, 10);
    let mut args = vec!["import".to_string()];
    args.extend(ROLLOUTS.iter().map(|f| site.join(f).display().to_string()));
    args.extend(["--name", "real", "--database", &database].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let imported = sparring(dir, &args);
    assert!(imported.status.success(), "{}", text(&imported.stderr));
    let real = job_id_from(&text(&imported.stdout));

    let report = realism(dir, sim, real, &database);
    assert_eq!(report["sim"]["id"], sim);
    assert_eq!(report["real"]["id"], real);
    assert_eq!(
        report["scenarios_in_both"], 0,
        "retail ids are not NeMo Gym's"
    );
    assert!(report["matched"].is_null());
    let distributions = &report["distributions"];
    assert_eq!(distributions["real_conversations"], 15);
    assert_in_range(distributions);
    // The real users wrote words the mock never does: the vocabularies differ.
    let jsd = measures(distributions)[12]["difference"].as_f64().unwrap();
    assert!(jsd > 0.3, "unigram JSD {jsd}");
    // The real job knows its scenarios' facts: the order is measured there.
    assert!(
        measures(distributions)[7]["real"].is_f64(),
        "{distributions}"
    );
    let named: Vec<&str> = report["summary"]["largest_gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["measure"].as_str().unwrap())
        .collect();
    assert_eq!(named.len(), 3);
    assert!(named.iter().all(|n| MEASURES.contains(n)), "{named:?}");
    assert!(
        report["summary"]["mean_gap"].as_f64().unwrap() > 0.05,
        "{report}"
    );

    let (s, r) = (sim.to_string(), real.to_string());
    let shown = sparring(
        dir,
        &[
            "compare-users",
            &s,
            &r,
            "--realism",
            "--database",
            &database,
        ],
    );
    let shown = text(&shown.stdout);
    assert!(
        shown.contains("As distributions (20 simulated, 15 real"),
        "{shown}"
    );
    assert!(shown.contains(&format!("1. {}", named[0])), "{shown}");

    assert_no_gap(&realism(dir, real, real, &database));
}

#[tokio::test]
async fn the_service_compares_users_with_realism() {
    let service = crate::common::Service::start_with(None).await;
    let toml = service.job_with(JobSpec {
        name: "realism".into(),
        scenarios: first_scenarios(service.dir.path(), 4),
        ..JobSpec::default()
    });
    let id = service.submit_toml(toml).await["id"].as_i64().unwrap();
    service.wait_until_done(id).await;
    let report = service
        .json(&format!("/v1/compare-users?a={id}&b={id}&realism=true"))
        .await;
    assert_no_gap(&report);
    let plain = service
        .json(&format!("/v1/compare-users?a={id}&b={id}"))
        .await;
    assert_eq!(plain["matched"], 4, "{plain}");
}
