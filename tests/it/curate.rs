//! Curation through the binary on a real SQLite file: `sparring export
//! --profile strict` over the quickstart's job in each format, its
//! `manifest.json` adding up (what enters each gate leaves it or is dropped
//! there, and leaves into the next, in all and per stratum), no dropped
//! conversation in the data, and the folder loading with `datasets` from the
//! card's `configs` with the features the export writes; DPO pairs curated
//! by a profile file; bad profiles refused with file and line, nothing
//! written.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{self, job_id_from, mock_judges, repo, sparring, text, unique_name};

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = sparring(dir, args);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "sparring {args:?}:\n{said}");
    said
}

fn rows(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The quickstart (job 1, as shipped) and the quickstart with the perfect
/// mock policy, judged pairwise against it; the database URL and the ids.
fn quickstart_jobs(dir: &Path, postgres: Option<&str>) -> (String, i64, i64) {
    let shipped = common::quickstart_anywhere();
    let database = match postgres {
        Some(url) => url.to_string(),
        None => format!("sqlite://{}", dir.join("sparring.db").display()),
    };
    // Unique names: a Postgres database is shared by the tests of a run.
    let name = unique_name("curate-quickstart");
    let absolute = shipped
        .replace("sqlite://sparring.db", &database)
        .replace("name = \"quickstart\"", &format!("name = \"{name}\""));
    let a = dir.join("quickstart.toml");
    std::fs::write(&a, &absolute).unwrap();
    let b = dir.join("perfect.toml");
    std::fs::write(
        &b,
        absolute
            .replace(
                &format!("name = \"{name}\""),
                &format!("name = \"{name}-perfect\""),
            )
            .replace("model = \"mock-policy\"", "model = \"mock-policy+perfect\""),
    )
    .unwrap();
    let a = job_id_from(&run_ok(dir, &["run", a.to_str().unwrap(), "--quiet"]));
    let b = job_id_from(&run_ok(dir, &["run", b.to_str().unwrap(), "--quiet"]));
    let judges = dir.join("pairwise.toml");
    std::fs::write(
        &judges,
        mock_judges("[[judges]]\nname = \"pref\"\nendpoint = \"judge\"\nbuiltin = \"pairwise_preference\"\n"),
    )
    .unwrap();
    run_ok(
        dir,
        &[
            "judge",
            judges.to_str().unwrap(),
            "--pairwise",
            "--a",
            &a.to_string(),
            "--b",
            &b.to_string(),
            "--database",
            &database,
            "--quiet",
        ],
    );
    (database, a, b)
}

/// Export job `job` as `format` into `folder/data.jsonl` with `more` flags.
fn export(dir: &Path, database: &str, job: i64, format: &str, folder: &Path, more: &[&str]) {
    let out = folder.join("data.jsonl");
    let job = job.to_string();
    let mut args = vec![
        "export",
        "--job",
        &job,
        "--format",
        format,
        "--out",
        out.to_str().unwrap(),
        "--database",
        database,
    ];
    args.extend_from_slice(more);
    run_ok(dir, &args);
}

/// The manifest's counts add up; the dropped conversations' ids.
fn check_funnel(manifest: &Value, conversations: u64) -> HashSet<i64> {
    let gates = manifest["gates"].as_array().unwrap();
    let names: Vec<&str> = gates.iter().map(|g| g["gate"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "selection",
            "reward",
            "judges",
            "user_flags",
            "bounds",
            "format",
            "near_duplicates",
            "stratum_cap",
            "holdout"
        ]
    );
    assert_eq!(gates[0]["entered"], conversations);
    let n = |v: &Value| v.as_u64().unwrap();
    let dropped = manifest["dropped"].as_array().unwrap();
    let mut previous: Option<&Value> = None;
    for gate in gates {
        let name = gate["gate"].as_str().unwrap();
        assert_eq!(
            n(&gate["entered"]),
            n(&gate["left"]) + n(&gate["dropped"]),
            "{name}"
        );
        let listed = dropped.iter().filter(|d| d["gate"] == name).count() as u64;
        assert_eq!(listed, n(&gate["dropped"]), "{name}: dropped listed");
        let strata = gate["strata"].as_object().unwrap();
        let sum = |key: &str| strata.values().map(|s| n(&s[key])).sum::<u64>();
        assert_eq!(sum("entered"), n(&gate["entered"]), "{name}");
        assert_eq!(sum("left"), n(&gate["left"]), "{name}");
        if let Some(prev) = previous {
            assert_eq!(n(&prev["left"]), n(&gate["entered"]), "into {name}");
            let prev_strata = prev["strata"].as_object().unwrap();
            for (stratum, before) in prev_strata {
                let entered = strata.get(stratum).map_or(0, |s| n(&s["entered"]));
                assert_eq!(n(&before["left"]), entered, "{name}, stratum {stratum}");
            }
        }
        previous = Some(gate);
    }
    assert_eq!(dropped.len() as u64, conversations - n(&gates[8]["left"]));
    dropped
        .iter()
        .map(|d| d["conversation"].as_i64().unwrap())
        .collect()
}

/// The split → rows `datasets.load_dataset(folder)` gives, and each split's
/// features as `Features.to_dict()` writes them.
fn load_with_datasets(python: &str, folder: &Path) -> Value {
    // The card's header as the Hub's own parser reads it, then the folder
    // as `datasets` loads it.
    let script = "import datasets, json, os, sys\n\
                  from huggingface_hub import DatasetCard\n\
                  card = DatasetCard.load(os.path.join(sys.argv[1], 'README.md')).data.to_dict()\n\
                  assert card['license'] == 'other' and card['task_categories'] == ['text-generation'], card\n\
                  assert card['size_categories'][0] in ('n<1K', '1K<n<10K'), card\n\
                  assert [c['config_name'] for c in card['configs']] == ['default'], card\n\
                  d = datasets.load_dataset(sys.argv[1])\n\
                  print(json.dumps({s: {'rows': d[s].num_rows, 'features': d[s].features.to_dict()} for s in d}))";
    let out = std::process::Command::new(python)
        .args(["-c", script, folder.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "datasets.load_dataset({}) failed:\n{}",
        folder.display(),
        text(&out.stderr)
    );
    let stdout = text(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The conversations a row of `format` came from.
fn conversations_of(format: &str, row: &Value, sidecar: Option<&Value>) -> Vec<i64> {
    let meta = match format {
        "openai" => sidecar.unwrap(),
        _ => &row["metadata"],
    };
    if format == "dpo" {
        vec![meta["conversation_a"].as_i64().unwrap()]
    } else {
        vec![meta["conversation"].as_i64().unwrap()]
    }
}

/// The folder's data per split, checked against the manifest's files and,
/// when `python` is given, against what `datasets` loads.
fn check_folder(
    folder: &Path,
    format: &str,
    manifest: &Value,
    dropped: &HashSet<i64>,
    python: Option<&str>,
) -> u64 {
    let files = manifest["files"].as_array().unwrap();
    let mut written = 0;
    let mut splits = BTreeMap::new();
    for file in files {
        let path = folder.join(file["file"].as_str().unwrap());
        let lines = rows(&path);
        assert_eq!(
            lines.len() as u64,
            file["rows"].as_u64().unwrap(),
            "{}",
            path.display()
        );
        let sidecar = (format == "openai").then(|| {
            rows(&PathBuf::from(
                path.to_str().unwrap().replace(".jsonl", ".metadata.jsonl"),
            ))
        });
        for (i, row) in lines.iter().enumerate() {
            for id in conversations_of(format, row, sidecar.as_ref().map(|s| &s[i])) {
                assert!(
                    !dropped.contains(&id),
                    "{format}: dropped conversation {id} is in {}",
                    path.display()
                );
            }
        }
        written += lines.len() as u64;
        splits.insert(
            file["split"].as_str().unwrap().to_string(),
            lines.len() as u64,
        );
    }
    let card = std::fs::read_to_string(folder.join("README.md")).unwrap();
    assert!(
        card.starts_with("---\n") && card.contains("configs:"),
        "{card}"
    );
    if let Some(python) = python {
        let loaded = load_with_datasets(python, folder);
        let loaded_rows: BTreeMap<String, u64> = loaded
            .as_object()
            .unwrap()
            .iter()
            .map(|(s, v)| (s.clone(), v["rows"].as_u64().unwrap()))
            .collect();
        assert_eq!(loaded_rows, splits, "{format}");
        // The features the card declares are the export's own.
        let features = folder.join("data.jsonl.features.json");
        if features.exists() {
            let expected: Value =
                serde_json::from_str(&std::fs::read_to_string(features).unwrap()).unwrap();
            for (split, v) in loaded.as_object().unwrap() {
                assert_eq!(v["features"], expected, "{format} {split}");
            }
        }
    }
    written
}

#[test]
fn a_strict_profile_over_the_quickstart_adds_up_and_loads_with_datasets() {
    let python = std::env::var("SPARRING_EXPORT_CONSUMERS_PYTHON").ok();
    if python.is_none() {
        println!("SKIPPED: the datasets checks: SPARRING_EXPORT_CONSUMERS_PYTHON is not set (scripts/export-consumers prints it)");
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    for (n, postgres) in common::databases(dir, "curate").into_iter().enumerate() {
        if n == 0 && postgres.is_none() && std::env::var("SPARRING_TEST_POSTGRES").is_err() {
            println!("SKIPPED: the Postgres run: SPARRING_TEST_POSTGRES is not set");
        }
        strict_over_the_quickstart(dir, postgres.as_deref(), python.as_deref(), n);
    }
}

/// `--profile strict` over the quickstart's job in `postgres` (SQLite
/// without), into folders numbered `n`.
fn strict_over_the_quickstart(dir: &Path, postgres: Option<&str>, python: Option<&str>, n: usize) {
    let (database, a, _b) = quickstart_jobs(dir, postgres);
    let conversations = 54;
    for format in ["openai", "hf", "sharegpt"] {
        let folder = dir.join(format!("strict-{n}-{format}"));
        export(
            dir,
            &database,
            a,
            format,
            &folder,
            &["--profile", "strict", "--stratify-by", "persona"],
        );
        let manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(folder.join("manifest.json")).unwrap())
                .unwrap();
        assert_eq!(manifest["profile"], "strict");
        assert_eq!(manifest["stratify_by"], "persona");
        let dropped = check_funnel(&manifest, conversations);
        assert!(!dropped.is_empty(), "strict dropped nothing");
        let written = check_folder(&folder, format, &manifest, &dropped, python);
        assert_eq!(
            written,
            manifest["gates"][8]["left"].as_u64().unwrap(),
            "{format}"
        );
        // The gates that bite on the quickstart's mock conversations
        // whatever order they were stored in (the cap may not: which
        // repeat is kept first depends on the order conversations finished).
        for gate in [1, 6] {
            assert!(
                manifest["gates"][gate]["dropped"].as_u64().unwrap() > 0,
                "{format}: {}",
                manifest["gates"][gate]
            );
        }
        // The card says how the data was made, from the stored rows.
        let card = std::fs::read_to_string(folder.join("README.md")).unwrap();
        for said in [
            "Policy models: mock-policy",
            "Simulated-user models: mock-user",
            "helpfulness (mock-judge)",
            "user_fidelity (mock-judge)",
            "Environments: builtin:retail",
            "| near_duplicates |",
        ] {
            assert!(card.contains(said), "{format}: no '{said}' in\n{card}");
        }
        // Listed with their digests, the card and the manifest too.
        let sums = std::fs::read_to_string(folder.join("data.jsonl.sha256")).unwrap();
        assert!(
            sums.contains("  manifest.json\n") && sums.contains("  README.md\n"),
            "{sums}"
        );
    }
    // A cap that must bite: one conversation per persona.
    let cap = dir.join(format!("cap-{n}.toml"));
    std::fs::write(&cap, "[strata]\nby = \"persona\"\nmax_per_stratum = 1\n").unwrap();
    let folder = dir.join(format!("cap-{n}"));
    export(
        dir,
        &database,
        a,
        "hf",
        &folder,
        &["--profile", cap.to_str().unwrap()],
    );
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("manifest.json")).unwrap())
            .unwrap();
    let dropped = check_funnel(&manifest, conversations);
    check_folder(&folder, "hf", &manifest, &dropped, python);
    let cap_gate = &manifest["gates"][7];
    assert!(cap_gate["dropped"].as_u64().unwrap() > 0, "{cap_gate}");
    for (persona, kept) in cap_gate["strata"].as_object().unwrap() {
        assert_eq!(kept["left"], 1, "{persona}: {cap_gate}");
    }
}

#[test]
fn dpo_pairs_curated_by_a_profile_file_load_with_datasets() {
    let python = std::env::var("SPARRING_EXPORT_CONSUMERS_PYTHON").ok();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (database, a, _b) = quickstart_jobs(dir, None);
    let profile = dir.join("pairs.toml");
    std::fs::write(
        &profile,
        "[near_duplicates]\nsimilarity = 0.95\n[strata]\nby = \"scenario\"\n[holdout]\nshare = 0.3\nseed = 1\n",
    )
    .unwrap();
    let folder = dir.join("dpo");
    export(
        dir,
        &database,
        a,
        "dpo",
        &folder,
        &["--judge", "pref", "--profile", profile.to_str().unwrap()],
    );
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["profile"], "pairs.toml",
        "a profile file is named without its folder"
    );
    let dropped = check_funnel(&manifest, 54);
    let written = check_folder(&folder, "dpo", &manifest, &dropped, python.as_deref());
    assert!(written > 0, "no DPO pair was written");
}

#[test]
fn a_bad_profile_is_refused_with_its_file_and_line_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let database = format!("sqlite://{}", dir.join("none.db").display());
    let cases = [
        (
            "unknown.toml",
            "[reward]\nmin = 1\nmaximum = 2\n",
            "unknown.toml: line 3",
            "unknown field `maximum`",
        ),
        (
            "range.toml",
            "[holdout]\nshare = 1.5\n",
            "range.toml: line 2 (holdout.share)",
            "out of range",
        ),
        (
            "broken.toml",
            "[bounds\nmin_turns = 1\n",
            "broken.toml: line 1",
            "",
        ),
        (
            "flag.toml",
            "[user_flags]\ndrop = [\"rude\"]\n",
            "flag.toml: line 2 (user_flags.drop)",
            "not a user check",
        ),
    ];
    for (name, written, at, says) in cases {
        let profile = dir.join(name);
        std::fs::write(&profile, written).unwrap();
        let out_dir = dir.join(format!("out-{name}"));
        let out = sparring(
            dir,
            &[
                "export",
                "--job",
                "1",
                "--format",
                "hf",
                "--out",
                out_dir.join("data.jsonl").to_str().unwrap(),
                "--database",
                &database,
                "--profile",
                profile.to_str().unwrap(),
            ],
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains(at), "{name}: {stderr}");
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(stderr.contains("nothing was written"), "{name}: {stderr}");
        assert!(!out_dir.exists(), "{name}: the output folder was made");
    }
    assert!(!dir.join("none.db").exists(), "a database was made");
    // A profile that is not there, and a stratum that is none.
    let out = sparring(
        dir,
        &[
            "export",
            "--job",
            "1",
            "--out",
            "x/d.jsonl",
            "--database",
            &database,
            "--profile",
            "stricter",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("stricter: cannot read the profile"),
        "{}",
        text(&out.stderr)
    );
    let out = sparring(
        dir,
        &[
            "export",
            "--job",
            "1",
            "--out",
            "x/d.jsonl",
            "--database",
            &database,
            "--profile",
            "strict",
            "--stratify-by",
            "model",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("'model' is not a stratum"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.join("x").exists());

    // A README.md no curated export wrote (a project's own) is left alone.
    let project = dir.join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("README.md"), "# my project\n").unwrap();
    let out = sparring(
        &project,
        &[
            "export",
            "--job",
            "1",
            "--out",
            "data.jsonl",
            "--database",
            &database,
            "--profile",
            "strict",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("README.md exists and was not written by a curated export"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(project.join("README.md")).unwrap(),
        "# my project\n"
    );
    assert_eq!(std::fs::read_dir(&project).unwrap().count(), 1);
}

#[test]
fn a_curated_export_again_into_its_folder_replaces_its_own_card_and_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let config = dir.join("quickstart.toml");
    std::fs::write(&config, common::quickstart_anywhere()).unwrap();
    let job = job_id_from(&run_ok(dir, &["run", config.to_str().unwrap(), "--quiet"]));
    let database = format!("sqlite://{}", dir.join("sparring.db").display());
    let folder = dir.join("dataset");
    export(dir, &database, job, "hf", &folder, &["--profile", "strict"]);
    let strict: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("manifest.json")).unwrap())
            .unwrap();
    export(
        dir,
        &database,
        job,
        "hf",
        &folder,
        &["--profile", "generous"],
    );
    let generous: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        (strict["profile"].as_str(), generous["profile"].as_str()),
        (Some("strict"), Some("generous"))
    );
    // The second export's settings, not the first's.
    assert_eq!(strict["settings"]["min_reward"], 1.0);
    assert_eq!(generous["settings"]["min_reward"], 0.5);
    assert!(strict["settings"]["max_per_stratum"].is_u64());
    assert!(generous["settings"]["max_per_stratum"].is_null());
    let card = std::fs::read_to_string(folder.join("README.md")).unwrap();
    assert!(card.contains("`generous` profile"), "{card}");
}

/// An import job (the quickstart exported as `hf`, and tau2-bench results)
/// curated as a generated one: its funnel adds up, nothing dropped is in the
/// data, and the folder loads with `datasets`.
#[test]
fn a_strict_profile_over_an_imported_job_adds_up_and_loads_with_datasets() {
    let python = std::env::var("SPARRING_EXPORT_CONSUMERS_PYTHON").ok();
    if python.is_none() {
        println!("SKIPPED: the datasets checks: SPARRING_EXPORT_CONSUMERS_PYTHON is not set (scripts/export-consumers prints it)");
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (database, a, _b) = quickstart_jobs(dir, None);
    let logs = dir.join("logs.jsonl");
    run_ok(
        dir,
        &[
            "export",
            "--job",
            &a.to_string(),
            "--format",
            "hf",
            "--out",
            logs.to_str().unwrap(),
            "--database",
            &database,
        ],
    );
    let tau2 = repo().join("tests/data/tau2/airline_real_run.json");
    let said = run_ok(
        dir,
        &[
            "import",
            logs.to_str().unwrap(),
            tau2.to_str().unwrap(),
            "--name",
            "curated-import",
            "--database",
            &database,
        ],
    );
    let job = job_id_from(&said);
    let conversations = 54 + 4;
    for format in ["hf", "sharegpt", "openai"] {
        let folder = dir.join(format!("imported-{format}"));
        export(
            dir,
            &database,
            job,
            format,
            &folder,
            &["--profile", "strict", "--stratify-by", "scenario"],
        );
        let manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(folder.join("manifest.json")).unwrap())
                .unwrap();
        let dropped = check_funnel(&manifest, conversations);
        assert!(!dropped.is_empty(), "strict dropped nothing of the import");
        let written = check_folder(&folder, format, &manifest, &dropped, python.as_deref());
        assert_eq!(written, manifest["gates"][8]["left"].as_u64().unwrap());
        let card = std::fs::read_to_string(folder.join("README.md")).unwrap();
        assert!(card.contains("configs:"), "{card}");
    }
}
