//! Persona tables (docs/populations.md): a population in CSV, JSONL or
//! Parquet sampled the same way whatever it is written in, stratified
//! samples that keep the table's shares, a panel that two jobs share for
//! matched pairs, and knobs weighted by OCEAN traits as documented. Tables
//! are made by `scripts/persona-table.py` (Parquet through pyarrow, from
//! `SPARRING_EXPORT_CONSUMERS_PYTHON`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{first_scenarios, repo, sparring, text};

/// A generated table of `rows` people at `out` (its format by extension);
/// `None` (and a SKIPPED line) for Parquet without pyarrow.
fn generate(rows: usize, out: &Path) -> Option<PathBuf> {
    let parquet = out.extension().is_some_and(|e| e == "parquet");
    let python = match std::env::var("SPARRING_EXPORT_CONSUMERS_PYTHON") {
        Ok(python) => python,
        Err(_) if parquet => {
            println!(
                "SKIPPED: the Parquet table: SPARRING_EXPORT_CONSUMERS_PYTHON is not set \
                 (scripts/export-consumers prints it)"
            );
            return None;
        }
        Err(_) => "python3".into(),
    };
    let status = Command::new(python)
        .arg(repo().join("scripts/persona-table.py"))
        .args(["--rows", &rows.to_string(), "--out"])
        .arg(out)
        .status()
        .unwrap();
    assert!(status.success(), "persona-table.py --out {}", out.display());
    Some(out.to_path_buf())
}

/// A job config over the retail mock with `personas` and `[persona_table]` keys.
fn job(dir: &Path, name: &str, scenarios: &Path, personas: &Path, table: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let text = format!(
        r#"name = "{name}"
seed = 3
database = "sqlite://{db}"
concurrency = 4
[endpoints.policy]
mock = true
model = "mock-policy"
[endpoints.user]
mock = true
model = "mock-user"
[roles]
policy = "policy"
user = "user"
[environment]
name = "builtin:retail"
[dataset]
scenarios = "{scenarios}"
personas = "{personas}"
[persona_table]
id = "uuid"
{table}
[persona_table.fields]
background = "{{{{ age }}}}-year-old {{{{ occupation }}}} in {{{{ city }}}}. {{{{ persona }}}}"
"#,
        db = dir.join("sparring.db").display(),
        scenarios = scenarios.display(),
        personas = personas.display(),
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `sparring personas sample CONFIG --out OUT`, which must succeed; the panel's rows.
fn sample(dir: &Path, config: &Path, out: &Path) -> Vec<serde_json::Map<String, Value>> {
    let run = sparring(
        dir,
        &[
            "personas",
            "sample",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(
        run.status.success(),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    read_rows(out)
}

fn read_rows(path: &Path) -> Vec<serde_json::Map<String, Value>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| match serde_json::from_str(line).unwrap() {
            Value::Object(row) => row,
            other => panic!("a panel row is an object, not {other}"),
        })
        .collect()
}

fn shares(rows: &[serde_json::Map<String, Value>], column: &str) -> BTreeMap<String, f64> {
    let mut counts: BTreeMap<String, f64> = BTreeMap::new();
    for row in rows {
        *counts.entry(row[column].to_string()).or_default() += 1.0;
    }
    let total = rows.len() as f64;
    counts.values_mut().for_each(|c| *c /= total);
    counts
}

#[test]
fn a_table_in_csv_jsonl_or_parquet_gives_the_same_sample() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = first_scenarios(dir.path(), 2);
    let mut panels = Vec::new();
    for format in ["csv", "jsonl", "parquet"] {
        let Some(table) = generate(100_000, &dir.path().join(format!("people.{format}"))) else {
            continue;
        };
        let config = job(
            dir.path(),
            format,
            &scenarios,
            &table,
            "sample = 500\nstratify_by = [\"sex\", \"state\"]\nwhere = \"age >= 30 and state not in ['VT']\"",
        );
        let panel = sample(
            dir.path(),
            &config,
            &dir.path().join(format!("{format}.jsonl")),
        );
        assert_eq!(panel.len(), 500, "{format}");
        assert!(panel
            .iter()
            .all(|row| row["age"].as_i64().unwrap() >= 30 && row["state"] != "VT"));
        panels.push((format, panel));
    }
    let (first, rows) = &panels[0];
    for (format, other) in &panels[1..] {
        assert_eq!(
            other, rows,
            "{format} draws the rows {first} draws, value for value"
        );
    }
}

#[test]
fn a_stratified_sample_keeps_the_tables_shares_within_a_percentage_point() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = first_scenarios(dir.path(), 1);
    let table = generate(100_000, &dir.path().join("people.csv")).unwrap();
    let everyone = dir.path().join("everyone.jsonl");
    let all = sample(
        dir.path(),
        &job(dir.path(), "all", &scenarios, &table, ""),
        &everyone,
    );
    assert_eq!(all.len(), 100_000, "no sample: every row");
    let config = job(
        dir.path(),
        "strata",
        &scenarios,
        &table,
        "sample = 10000\nstratify_by = [\"state\", \"education_level\"]",
    );
    let drawn = sample(dir.path(), &config, &dir.path().join("strata.jsonl"));
    assert_eq!(drawn.len(), 10_000);
    for column in ["state", "education_level"] {
        let (want, got) = (shares(&all, column), shares(&drawn, column));
        for (value, share) in &want {
            let diff = (share - got.get(value).copied().unwrap_or(0.0)).abs();
            assert!(
                diff < 0.01,
                "{column} {value}: {share} in the table, {got:?}"
            );
        }
    }
    // A numeric column is a stratum by exact value; `equal` gives each the same.
    let config = job(
        dir.path(),
        "equal",
        &scenarios,
        &table,
        "sample = 730\nstratify_by = [\"age\"]\nallocation = \"equal\"",
    );
    let drawn = sample(dir.path(), &config, &dir.path().join("equal.jsonl"));
    let mut per_age: BTreeMap<i64, usize> = BTreeMap::new();
    for row in &drawn {
        *per_age.entry(row["age"].as_i64().unwrap()).or_default() += 1;
    }
    assert_eq!(per_age.len(), 73, "ages 18 to 90");
    assert!(per_age.values().all(|n| *n == 10), "{per_age:?}");
}

async fn item_keys(database: &Path, job: i64) -> Vec<String> {
    use sqlx::Connection;
    let url = format!("sqlite://{}", database.display());
    let mut db = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::query_scalar("SELECT key FROM items WHERE job_id = ? ORDER BY key")
        .bind(job)
        .fetch_all(&mut db)
        .await
        .unwrap()
}

#[tokio::test]
async fn two_jobs_over_one_panel_pair_the_same_people_with_the_same_scenarios() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = first_scenarios(dir.path(), 3);
    let population = repo().join("data/personas/population.csv");
    let drawer = job(
        dir.path(),
        "draw",
        &scenarios,
        &population,
        "sample = 2\nper = \"scenario\"\nstratify_by = [\"sex\"]",
    );
    let panel = dir.path().join("panel.jsonl");
    assert_eq!(
        sample(dir.path(), &drawer, &panel).len(),
        6,
        "2 × 3 scenarios"
    );
    // Two jobs (two policies, two user models: here two names) name the panel
    // as their table, with no sample: every row of it.
    let mut keys = Vec::new();
    for name in ["first", "second"] {
        let config = job(dir.path(), name, &scenarios, &panel, "");
        let run = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
        assert!(
            run.status.success(),
            "{}{}",
            text(&run.stdout),
            text(&run.stderr)
        );
        keys.push(item_keys(&dir.path().join("sparring.db"), keys.len() as i64 + 1).await);
    }
    assert_eq!(keys[0].len(), 18, "3 scenarios × the panel's 6 personas");
    assert_eq!(
        keys[0], keys[1],
        "matched pairs: the same scenario/persona/sample keys"
    );
    let ids: Vec<String> = read_rows(&panel)
        .iter()
        .map(|row| row["uuid"].as_str().unwrap().to_string())
        .collect();
    let personas: std::collections::BTreeSet<&str> = keys[0]
        .iter()
        .map(|k| k.split('/').nth(1).unwrap())
        .collect();
    assert_eq!(personas.len(), 6);
    assert!(
        personas.iter().all(|p| ids.iter().any(|id| id == p)),
        "{personas:?}"
    );
}

#[test]
fn low_agreeableness_personas_draw_low_patience_far_more_often() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = first_scenarios(dir.path(), 1);
    let population = repo().join("data/personas/population.csv");
    let config = job(dir.path(), "traits", &scenarios, &population, "");
    let job = sparring::config::load(&config).unwrap();
    let personas = sparring::persona::dataset::load_job_personas(&job, 1).unwrap();
    assert_eq!(personas.len(), 300);
    let share_low = |wanted: &dyn Fn(f64) -> bool| {
        let (mut low, mut draws) = (0u32, 0u32);
        for persona in &personas {
            let agreeableness = persona.attributes["agreeableness"].as_f64().unwrap();
            if !wanted(agreeableness) {
                continue;
            }
            for seed in 0..200 {
                let drawn = sparring::persona::knobs::resolve(persona, seed);
                low += u32::from(drawn.resolved_knobs["patience"] == "low");
                draws += 1;
            }
        }
        assert!(
            draws >= 2_000,
            "enough personas in the group: {draws} draws"
        );
        f64::from(low) / f64::from(draws)
    };
    let disagreeable = share_low(&|a| a < 0.25);
    let agreeable = share_low(&|a| a > 0.75);
    // Documented: at 0.2 low patience weighs 5.8 of 10, at 0.8 2.2 of 10.
    assert!(
        disagreeable > 2.0 * agreeable && disagreeable > 0.45,
        "low patience: {disagreeable} below 0.25 agreeableness, {agreeable} above 0.75"
    );
}
