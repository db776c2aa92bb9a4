//! `sparring stats --by ATTR`: a mock job over a JSONL persona file whose
//! personas carry attributes (country, age), broken down by them through the
//! real binary, the service's API and the job's web page, all over one
//! SQLite file. Expected cells are computed here from the stored
//! conversations and the persona file, not from the report.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use crate::common::{first_scenarios, job_toml, repo, sparring, text, JobSpec, Service};

/// (id, country, age): 24 scenarios, one persona each in turn, two samples:
/// 8 conversations per persona, so 16 for the US and DE, 8 for FR and JP.
const PERSONAS: [(&str, &str, u32); 6] = [
    ("p_us_young", "US", 22),
    ("p_us_old", "US", 71),
    ("p_de_mid", "DE", 45),
    ("p_de_old", "DE", 80),
    ("p_fr", "FR", 33),
    ("p_jp", "JP", 58),
];

/// Runs the job in `dir`; its database URL.
fn run_job(dir: &Path) -> String {
    let personas = dir.join("personas.jsonl");
    let lines: Vec<String> = PERSONAS
        .iter()
        .map(|(id, country, age)| {
            json!({"id": id, "name": id, "background": "A shopper.", "speaking_style": "plain",
                   "knobs": {"mood": {"calm": 1, "cross": 1}},
                   "attributes": {"country": country, "age": age}})
            .to_string()
        })
        .collect();
    std::fs::write(&personas, lines.join("\n") + "\n").unwrap();
    let db = dir.join("strata.db");
    let spec = JobSpec {
        name: "strata".into(),
        scenarios: first_scenarios(dir, 24),
        ..JobSpec::default()
    };
    let toml = job_toml(&spec, &db).replace(
        &format!("personas = \"{}/personas\"", repo().display()),
        &format!("personas = \"{}\"", personas.display()),
    ) + "samples_per_scenario = 2\n";
    let config = dir.join("job.toml");
    std::fs::write(&config, toml).unwrap();
    let out = sparring(dir, &["run", config.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Run again: the job resumes and stores its personas again, changing nothing.
    let again = sparring(dir, &["run", config.to_str().unwrap()]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    format!("sqlite://{}", db.display())
}

/// (persona, reward) of each stored conversation, and the job's personas
/// as stored.
async fn stored(database: &str) -> (Vec<(String, Option<f64>)>, Vec<(String, String)>) {
    let pool = sqlx::SqlitePool::connect(database).await.unwrap();
    let conversations = sqlx::query_as("SELECT persona_id, reward FROM conversations")
        .fetch_all(&pool)
        .await
        .unwrap();
    let personas =
        sqlx::query_as("SELECT persona_id, attributes FROM job_personas ORDER BY persona_id")
            .fetch_all(&pool)
            .await
            .unwrap();
    pool.close().await;
    (conversations, personas)
}

fn stats(dir: &Path, database: &str, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["stats", "--job", "1", "--database", database];
    all.extend(args);
    let out = sparring(dir, &all);
    (
        out.status.code().unwrap(),
        text(&out.stdout),
        text(&out.stderr),
    )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_by_a_persona_attribute_counts_cells_with_intervals_marks_small_ones_and_orders_them()
{
    let dir = tempfile::tempdir().unwrap();
    let database = run_job(dir.path());
    let (conversations, personas) = stored(&database).await;

    // Each persona stored once for the job (not per conversation, not per run).
    assert_eq!(personas.len(), 6, "{personas:?}");
    let (id, attributes) = &personas[0];
    assert_eq!(id, "p_de_mid");
    assert_eq!(
        serde_json::from_str::<Value>(attributes).unwrap(),
        json!({"age": 45, "country": "DE"})
    );

    // The expected cells, from the stored conversations.
    let country: BTreeMap<&str, &str> = PERSONAS.iter().map(|(p, c, _)| (*p, *c)).collect();
    let mut expected: BTreeMap<&str, (u64, Vec<f64>)> = BTreeMap::new();
    for (persona, reward) in &conversations {
        let cell = expected.entry(country[persona.as_str()]).or_default();
        cell.0 += 1;
        cell.1.extend(reward);
    }
    let all: Vec<f64> = expected.values().flat_map(|(_, r)| r.clone()).collect();
    let job_mean = all.iter().sum::<f64>() / all.len() as f64;
    assert_eq!(conversations.len(), 48);

    let (code, out, err) = stats(
        dir.path(),
        &database,
        &["--by", "country", "--min-cell", "10", "--json"],
    );
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["by"], "country");
    assert_eq!(report["source"], "persona_attribute");
    assert_eq!(report["conversations"], 48);
    assert!(close(report["reward"]["mean"].as_f64().unwrap(), job_mean));
    let cells = report["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    for cell in cells {
        let value = cell["value"].as_str().unwrap();
        let (n, rewards) = &expected[value];
        assert_eq!(cell["conversations"], *n, "{value}");
        assert_eq!(cell["scored"], rewards.len(), "{value}");
        // The mock's rewards are 0 or 1 here: a Wilson interval of the passes.
        assert!(rewards.iter().all(|r| *r == 0.0 || *r == 1.0));
        let passed = rewards.iter().filter(|r| **r == 1.0).count() as u64;
        let (lo, hi) = sparring::interval::wilson(passed, rewards.len() as u64).unwrap();
        let reward = &cell["reward"];
        assert_eq!(reward["ci_method"], "wilson");
        assert!(close(reward["ci95"][0].as_f64().unwrap(), lo), "{value}");
        assert!(close(reward["ci95"][1].as_f64().unwrap(), hi), "{value}");
        let mean = passed as f64 / rewards.len() as f64;
        assert!(close(cell["difference"].as_f64().unwrap(), mean - job_mean));
        assert_eq!(cell["too_small"], *n < 10, "{value}");
        // Every conversation ended some way, and its share has an interval.
        let ended: u64 = cell["terminations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["count"].as_u64().unwrap())
            .sum();
        assert_eq!(ended, *n);
        let flags = cell["simulated_user"]["flags"].as_array().unwrap();
        assert_eq!(flags.len(), 6);
        assert_eq!(flags[0]["rate"]["ci_method"], "wilson");
        assert_eq!(cell["pass_hat_k"][1]["k"], 2);
    }
    // The two cells large enough first, the one further below the job's mean
    // before the other; FR and JP (8 conversations) after them, too small.
    let order: Vec<&str> = cells.iter().map(|c| c["value"].as_str().unwrap()).collect();
    let difference = |c: &str| {
        let (_, r) = &expected[c];
        r.iter().sum::<f64>() / r.len() as f64
    };
    let mut large = ["DE", "US"];
    large.sort_by(|a, b| difference(a).total_cmp(&difference(b)));
    assert_eq!(&order[..2], &large[..]);
    assert_eq!(&order[2..], ["FR", "JP"]);

    // The text says the same, with the small cells marked.
    let (code, out, _) = stats(dir.path(), &database, &["--by", "country"]);
    assert_eq!(code, 0);
    let fr = out.lines().find(|l| l.starts_with("FR ")).unwrap();
    assert!(fr.ends_with("too small"), "{out}");
    assert!(
        out.contains("(Wilson)") && out.contains("Terminations"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn numbers_are_binned_knobs_are_strata_and_an_unknown_attribute_lists_the_jobs_own() {
    let dir = tempfile::tempdir().unwrap();
    let database = run_job(dir.path());

    // Ages 22, 33, 45, 58, 71, 80, 8 conversations each, in 3 bins by quantile.
    let (code, out, err) = stats(
        dir.path(),
        &database,
        &["--by", "age", "--bins", "3", "--json"],
    );
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["binning"]["bins"], 3);
    let mut bins: Vec<(String, u64, Value)> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["value"].as_str().unwrap().to_string(),
                c["conversations"].as_u64().unwrap(),
                c["bounds"].clone(),
            )
        })
        .collect();
    bins.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        bins,
        [
            ("22–33".to_string(), 16, json!([22.0, 33.0])),
            ("45–58".to_string(), 16, json!([45.0, 58.0])),
            ("71–80".to_string(), 16, json!([71.0, 80.0])),
        ]
    );

    let (code, out, _) = stats(dir.path(), &database, &["--by", "knob.mood", "--json"]);
    assert_eq!(code, 0);
    let report: Value = serde_json::from_str(&out).unwrap();
    let drawn: u64 = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["conversations"].as_u64().unwrap())
        .sum();
    assert_eq!((report["source"].as_str(), drawn), (Some("knob"), 48));

    let (code, out, err) = stats(dir.path(), &database, &["--by", "income"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("no attribute `income`")
            && err.contains("age, country, persona, scenario, knob.mood"),
        "{err}"
    );
    let (code, _, err) = stats(dir.path(), &database, &["--by", "age", "--min-cell", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--min-cell"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_answers_strata_as_json_and_draws_them_on_the_job_page() {
    let dir = tempfile::tempdir().unwrap();
    let database = run_job(dir.path());
    let service = Service::over(&database, Some("t0ken"), tempfile::tempdir().unwrap()).await;

    let report = service
        .json("/v1/jobs/1/stats?by=country&min_cell=10")
        .await;
    assert_eq!(report["conversations"], 48);
    let small: Vec<&str> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["too_small"] == true)
        .map(|c| c["value"].as_str().unwrap())
        .collect();
    assert_eq!(small, ["FR", "JP"]);

    for (query, status, field) in [
        ("by=income", 422, "by"),
        ("by=age&min_cell=0", 422, "min_cell"),
        ("by=age&bins=21", 422, "bins"),
        ("bins=3", 422, "bins"),
        ("by=age&bins=many", 400, "bins"),
    ] {
        let response = service
            .get(&format!("/v1/jobs/1/stats?{query}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), status, "{query}");
        let body = response.text().await.unwrap();
        assert!(body.contains(field), "{query}: {body}");
        if field == "by" {
            assert!(
                body.contains("age, country, persona, scenario, knob.mood"),
                "{body}"
            );
        }
    }
    let missing = service
        .get("/v1/jobs/99/stats?by=age")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);

    // The page draws the first persona attribute unless asked for another.
    let page = service.text("/jobs/1").await;
    assert!(page.contains("Strata: by age"), "{page}");
    let page = service.text("/jobs/1?by=country&min_cell=10").await;
    assert!(page.contains("Strata: by country"));
    let svg = page
        .split("aria-label=\"Mean reward by country\"")
        .nth(1)
        .expect("the strata plot")
        .split("</svg>")
        .next()
        .unwrap();
    assert_eq!(svg.matches("<circle").count(), 4, "{svg}");
    assert_eq!(svg.matches("class=\"stratum small\"").count(), 2, "{svg}");
    assert!(svg.contains("class=\"job-mean\""));
    assert!(page.contains("href=\"/jobs/1?by=knob.mood#strata\""));
    let bad = service.get("/jobs/1?by=income").send().await.unwrap();
    assert_eq!(bad.status(), 422);
    let body = bad.text().await.unwrap();
    assert!(
        body.contains("age, country, persona, scenario, knob.mood"),
        "{body}"
    );
}
