//! Importing the real-user files as a user of tau2-bench and tau-bench
//! expects (issue 36): `--format auto` tells both, the gold, the models and
//! the check of each simulation against its task are stored, tools inferred
//! and simulations paired with the wrong tasks are said with counts, an
//! import that stores nothing fails, and every suggestion an error makes
//! works for the file it is about.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::common::{job_id_from, sparring, text};

use super::{shared_dir, TAU2_FILE, TAU_BENCH_FILE};

/// stdout and stderr of `sparring import FILE --name NAME --database DB ARGS`.
fn import(dir: &Path, file: &Path, name: &str, db: &str, args: &[&str]) -> (bool, String, String) {
    let mut all = vec![
        "import",
        file.to_str().unwrap(),
        "--name",
        name,
        "--database",
        db,
    ];
    all.extend_from_slice(args);
    let out = sparring(dir, &all);
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[tokio::test]
async fn both_shared_files_import_with_format_auto_their_gold_models_and_task_checks_stored() {
    let shared = shared_dir();
    if !shared.is_dir() {
        println!(
            "SKIPPED: importing the shared real-user files: {} is not there",
            shared.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let db = format!("sqlite://{}", dir.join("i.db").display());
    let (ok, out, err) = import(dir, &shared.join(TAU2_FILE), "tau2", &db, &[]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("50 conversations as tau2 (detected)"), "{out}");
    assert!(
        err.contains(
            "50 of 50 conversations call tools the file does not define; 12 tools inferred"
        ),
        "{err}"
    );
    let tau2 = job_id_from(&out);
    let (ok, out, err) = import(dir, &shared.join(TAU_BENCH_FILE), "tau_bench", &db, &[]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("200 conversations as tau_bench (detected)"),
        "{out}"
    );
    assert!(
        err.contains("of 200 conversations call tools the file does not define"),
        "{err}"
    );
    let tau_bench = job_id_from(&out);

    let store = sparring::store::open(&db).await.unwrap();
    let tau2_rows = store.conversations_page(tau2, 0, 1_000).await.unwrap();
    let v1_rows = store.conversations_page(tau_bench, 0, 1_000).await.unwrap();
    store.close().await;
    assert_eq!((tau2_rows.len(), v1_rows.len()), (50, 200));
    let mut premature_known = 0;
    for c in &tau2_rows {
        let c = &c.conversation;
        assert_eq!(
            (c.policy_model.as_str(), c.user_model.as_str()),
            ("claude-sonnet-4-5", "gpt-4.1")
        );
        assert!(
            c.metadata["task_pairing"]["identifiers"].is_array(),
            "{}",
            c.metadata
        );
        let checks = sparring::user_checks::UserChecks::from_stored(c.user_checks.as_ref())
            .unwrap()
            .unwrap();
        assert_eq!(checks.version, sparring::user_checks::CHECKS_VERSION);
        if checks.outcome(sparring::user_checks::UserFlag::PrematureStop)
            != sparring::user_checks::Outcome::Unknown
        {
            premature_known += 1;
            assert!(
                c.metadata["evaluation"]["actions"].is_array(),
                "{}",
                c.metadata
            );
        }
    }
    // tau2's gold: the tasks with write actions or facts to say (32 of 50).
    assert!(
        premature_known >= 30,
        "premature_stop ran on {premature_known}"
    );
    let gold = v1_rows
        .iter()
        .filter(|c| c.conversation.metadata["evaluation"]["actions"].is_array())
        .count();
    assert!(gold >= 150, "{gold} tau-bench runs with gold actions");
    let trials: BTreeSet<i64> = v1_rows.iter().map(|c| c.conversation.sample).collect();
    assert_eq!(trials, BTreeSet::from([0, 1, 2, 3]));
}

/// `--format X` and `--skip-invalid`, as an error suggests them.
static SUGGESTED_FORMAT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"--format (\w+)").unwrap());

#[test]
fn every_suggestion_an_import_error_makes_works_for_its_file() {
    let shared = shared_dir();
    if !shared.is_dir() {
        println!(
            "SKIPPED: import errors on the shared real-user files: {} is not there",
            shared.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let db = format!("sqlite://{}", dir.join("s.db").display());
    // Every (file, format) an error suggested; each is tried once.
    let mut suggested: BTreeSet<(String, String)> = BTreeSet::new();
    let mut errors = 0;
    for (file, right) in [(TAU2_FILE, "tau2"), (TAU_BENCH_FILE, "tau_bench")] {
        let file = shared.join(file);
        for wrong in ["openai", "hf", "sharegpt", "nemo_gym", "tau2", "tau_bench"] {
            if wrong == right {
                continue;
            }
            let name = format!("{right}-as-{wrong}");
            let (ok, out, err) = import(dir, &file, &name, &db, &["--format", wrong]);
            assert!(!ok, "{name}: read as {wrong}?\n{out}");
            // An import that would store nothing fails with --skip-invalid too.
            let (ok, out, skipped) = import(
                dir,
                &file,
                &name,
                &db,
                &["--format", wrong, "--skip-invalid"],
            );
            assert!(
                !ok,
                "{name}: --skip-invalid stored nothing and succeeded:\n{out}"
            );
            assert!(skipped.contains("nothing stored"), "{skipped}");
            for said in [&err, &skipped] {
                assert!(
                    !said.contains("pass --skip-invalid"),
                    "{name}: suggests --skip-invalid, which stores nothing:\n{said}"
                );
                let formats: BTreeSet<&str> = SUGGESTED_FORMAT
                    .captures_iter(said)
                    .map(|c| c.get(1).unwrap().as_str())
                    .collect();
                assert_eq!(formats, BTreeSet::from([right]), "{name}: {said}");
                errors += 1;
                for format in formats {
                    suggested.insert((file.display().to_string(), format.to_string()));
                }
            }
        }
    }
    assert_eq!(errors, 20);
    for (file, format) in &suggested {
        let (ok, out, err) = import(
            dir,
            Path::new(file),
            &format!("{format}-then-{format}"),
            &db,
            &["--format", format],
        );
        assert!(
            ok,
            "{file}: the suggested --format {format} fails:\n{out}{err}"
        );
    }
    // Nothing was stored by the imports that failed: the only jobs are
    // those of the suggestions.
    let jobs = sparring(dir, &["jobs", "--database", &db]);
    let listed = text(&jobs.stdout);
    let names: Vec<&str> = listed
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(names.len(), suggested.len(), "{listed}");
    assert!(names.iter().all(|n| n.contains("-then-")), "{listed}");
}

#[test]
fn a_file_that_pairs_simulations_with_the_wrong_tasks_is_said_with_counts() {
    let shared = shared_dir();
    if !shared.is_dir() {
        println!(
            "SKIPPED: a badly paired tau2 file: {} is not there",
            shared.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let db = format!("sqlite://{}", dir.join("p.db").display());
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(shared.join(TAU2_FILE)).unwrap()).unwrap();
    // Each simulation paired with the next one's task.
    let ids: Vec<Value> = doc["simulations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["task_id"].clone())
        .collect();
    for (i, sim) in doc["simulations"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        sim["task_id"] = ids[(i + 1) % ids.len()].clone();
    }
    let file = dir.join("misfiled.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let (ok, out, err) = import(dir, &file, "misfiled", &db, &[]);
    assert!(ok, "{out}{err}");
    let warning = err
        .lines()
        .find(|l| l.contains("checked against their task"))
        .unwrap_or_default();
    assert!(
        warning.contains("seems to pair its simulations with the wrong tasks"),
        "{err}"
    );
    let unpaired: u64 = warning
        .split(" in ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(unpaired >= 40, "{warning}");
    // The same file as its authors wrote it is (nearly) all paired.
    let (ok, _, err) = import(dir, &shared.join(TAU2_FILE), "filed", &db, &[]);
    assert!(ok);
    assert!(!err.contains("wrong tasks"), "{err}");

    // Its simulations as a bare list (some leaderboard submissions are).
    let bare = Value::Array(doc["simulations"].as_array().unwrap().clone());
    let file = dir.join("bare.json");
    std::fs::write(&file, serde_json::to_string_pretty(&bare).unwrap()).unwrap();
    let (ok, out, err) = import(dir, &file, "bare", &db, &[]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("50 conversations as tau2 (detected)"), "{out}");
}
