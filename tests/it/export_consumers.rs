//! Every export format, read by the programs that consume it: HF `datasets`,
//! TRL's data utilities and shipped chat templates (Qwen3; Llama-3.1 for a
//! job with one tool call per step) with a tokenizer built locally, OpenAI's
//! tool-aware fine-tuning rules and LLaMA-Factory's ShareGPT schema
//! (`tests/it/export_consumers.py`, with the python of
//! `scripts/export-consumers` named by `SPARRING_EXPORT_CONSUMERS_PYTHON`;
//! skipped without it). And the metadata round trip, which needs no Python:
//! filtering an export by its metadata keeps what `--min-reward` and
//! `--min-judge` keep.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use common::{job_id_from, mock_judges, sparring, text, unique_name, write_job, JobSpec};

/// Scenarios of each job: enough for the mock policy's flaws (on some seeds)
/// to vary the rewards.
const SCENARIOS: usize = 20;

/// Run a generation job over the first [`SCENARIOS`] scenarios into
/// `database`, with `extra` top-level TOML and, for each `(table, keys)` of
/// `patch`, `keys` added to that table; its id.
fn generate(
    dir: &Path,
    database: &str,
    name: &str,
    policy: &str,
    extra: &str,
    patch: &[(&str, &str)],
) -> i64 {
    let job_dir = dir.join(name);
    std::fs::create_dir_all(&job_dir).unwrap();
    let spec = JobSpec {
        policy_model: policy.into(),
        scenarios: common::first_scenarios(&job_dir, SCENARIOS),
        database: Some(database.to_string()),
        name: unique_name(name),
        extra: extra.to_string(),
        ..JobSpec::default()
    };
    let (config, _) = write_job(&job_dir, &spec);
    let mut toml = std::fs::read_to_string(&config).unwrap();
    for (table, keys) in patch {
        let header = format!("[{table}]\n");
        assert!(toml.contains(&header), "no {header} in {toml}");
        toml = toml.replace(&header, &format!("{header}{keys}"));
    }
    std::fs::write(&config, toml).unwrap();
    let out = sparring(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    job_id_from(&text(&out.stdout))
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = sparring(dir, args);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "sparring {args:?}:\n{said}");
    said
}

fn export(dir: &Path, database: &str, job: i64, format: &str, out: &Path, more: &[&str]) -> String {
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
    run_ok(dir, &args)
}

fn rows(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Judges run by the generation jobs themselves: a pointwise score for the
/// metadata and `--min-judge`.
fn pointwise_judges() -> String {
    mock_judges("[[judges]]\nname = \"helpful\"\nendpoint = \"judge\"\nbuiltin = \"helpfulness\"\n")
}

struct Exports {
    dir: tempfile::TempDir,
    database: String,
    flawed: i64,
    single: i64,
    /// Single-step questions (`examples/qa-mcqa.toml`): no tool call at all.
    qa: i64,
}

/// Run the shipped `examples/qa-mcqa.toml` into `database`; its id.
fn qa_job(dir: &Path, database: &str) -> i64 {
    let repo = common::repo();
    let shipped = std::fs::read_to_string(repo.join("examples/qa-mcqa.toml")).unwrap();
    let config = dir.join("qa-mcqa.toml");
    let config_text = shipped
        .replace("\"../", &format!("\"{}/", repo.display()))
        .replace("sqlite://sparring.db", database)
        .replace(
            "name = \"qa-mcqa\"",
            &format!("name = \"{}\"", unique_name("qa")),
        );
    std::fs::write(&config, config_text).unwrap();
    let out = sparring(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    job_id_from(&text(&out.stdout))
}

/// Job "flawed" (the mock policy, with a flaw on some seeds), job "perfect"
/// (never flawed), both judged pointwise; a pairwise judging of flawed vs
/// perfect; job "single" asking for one tool call per step.
fn jobs() -> Exports {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("exports.db").display());
    let judges = pointwise_judges();
    let flawed = generate(dir.path(), &database, "flawed", "mock-policy", &judges, &[]);
    let perfect = generate(
        dir.path(),
        &database,
        "perfect",
        "mock-policy+perfect",
        &judges,
        &[],
    );
    let single = generate(
        dir.path(),
        &database,
        "single",
        "mock-policy",
        "",
        // Llama-3.1's template takes the first message for the user's (it
        // puts the tools there): the user opens, no greeting comes first.
        &[
            ("policy", "parallel_tool_calls = false\n"),
            ("user_simulator", "opens = \"user\"\n"),
        ],
    );
    let pairwise = dir.path().join("pairwise.toml");
    std::fs::write(
        &pairwise,
        mock_judges("[[judges]]\nname = \"pref\"\nendpoint = \"judge\"\nbuiltin = \"pairwise_preference\"\n"),
    )
    .unwrap();
    let (a, b) = (flawed.to_string(), perfect.to_string());
    run_ok(
        dir.path(),
        &[
            "judge",
            pairwise.to_str().unwrap(),
            "--pairwise",
            "--a",
            &a,
            "--b",
            &b,
            "--database",
            &database,
            "--quiet",
        ],
    );
    let qa = qa_job(dir.path(), &database);
    Exports {
        dir,
        database,
        flawed,
        single,
        qa,
    }
}

fn count(report: &Value, check: &str) -> (u64, u64) {
    let c = &report[check];
    assert!(c.is_object(), "no check {check} in {report}");
    (c["passed"].as_u64().unwrap(), c["failed"].as_u64().unwrap())
}

#[test]
fn every_format_passes_the_programs_that_read_it() {
    let Ok(python) = std::env::var("SPARRING_EXPORT_CONSUMERS_PYTHON") else {
        println!(
            "SKIPPED: SPARRING_EXPORT_CONSUMERS_PYTHON is not set (scripts/export-consumers prints it)"
        );
        return;
    };
    let e = jobs();
    let (dir, db) = (e.dir.path(), e.database.as_str());
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let file = |name: &str| -> PathBuf { out.join(name) };
    export(dir, db, e.flawed, "openai", &file("openai.jsonl"), &[]);
    export(dir, db, e.flawed, "hf", &file("hf.jsonl"), &[]);
    export(dir, db, e.flawed, "sharegpt", &file("sharegpt.jsonl"), &[]);
    let said = export(
        dir,
        db,
        e.flawed,
        "dpo",
        &file("dpo.jsonl"),
        &["--judge", "pref"],
    );
    export(
        dir,
        db,
        e.flawed,
        "dpo",
        &file("dpo_trajectory.jsonl"),
        &["--judge", "pref", "--dpo-shape", "trajectory"],
    );
    export(dir, db, e.single, "hf", &file("hf_single.jsonl"), &[]);
    export(dir, db, e.qa, "hf", &file("qa_hf.jsonl"), &[]);
    export(dir, db, e.qa, "sharegpt", &file("qa_sharegpt.jsonl"), &[]);
    let split = ["--split", "0.5"];
    export(dir, db, e.flawed, "hf", &file("hf_split.jsonl"), &split);
    let dpo_split = ["--judge", "pref", "--split", "0.5"];
    export(
        dir,
        db,
        e.flawed,
        "dpo",
        &file("dpo_split.jsonl"),
        &dpo_split,
    );
    // The job without tool calls has none in any row: the file datasets
    // alone would type `tool_calls` as null in.
    assert!(rows(&file("qa_hf.jsonl")).iter().all(|row| row["messages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["tool_calls"].is_null())));

    let n = |name: &str| rows(&file(name)).len() as u64;
    let conversations = n("openai.jsonl");
    let pairs = n("dpo.jsonl");
    assert!(
        conversations >= 8,
        "one row per conversation: {conversations}"
    );
    assert!(
        pairs >= 1,
        "the flawed and perfect policies make pairs: {said}"
    );
    assert_eq!(n("openai.metadata.jsonl"), conversations);
    assert_eq!(n("hf.jsonl"), conversations);
    assert_eq!(n("sharegpt.jsonl"), conversations);
    // The single-call job makes no parallel calls: Llama-3.1 can render it.
    let single = rows(&file("hf_single.jsonl"));
    assert!(single.iter().all(|row| {
        row["messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["tool_calls"].as_array().is_none_or(|c| c.len() == 1))
    }));
    assert!(single.iter().any(|row| row["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["tool_calls"].is_array())));

    let checker = common::repo().join("tests/it/export_consumers.py");
    let run = std::process::Command::new(&python)
        .arg(&checker)
        .arg(&out)
        .arg(common::repo().join("docs/exports.md"))
        .output()
        .unwrap();
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}{}", text(&run.stderr));
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    println!("{report}");
    for (name, rows) in [
        ("openai.jsonl", conversations),
        ("openai.metadata.jsonl", conversations),
        ("hf.jsonl", conversations),
        ("sharegpt.jsonl", conversations),
        ("dpo.jsonl", pairs),
        ("dpo_trajectory.jsonl", n("dpo_trajectory.jsonl")),
        ("hf_single.jsonl", single.len() as u64),
    ] {
        assert_eq!(
            count(&report, &format!("loads_unchanged:{name}")),
            (rows, 0),
            "datasets changed rows of {name}: {report}"
        );
    }
    for (check, rows) in [
        ("openai_rules", conversations),
        ("openai_renders_qwen3", conversations),
        ("hf_renders_qwen3", conversations),
        ("hf_single_renders_llama3_1", single.len() as u64),
        ("sharegpt_schema", conversations),
        ("dpo_is_conversational", pairs),
        ("dpo_sides_only_assistant", pairs),
        ("dpo_prompt_ids_prefix_qwen3", pairs),
        ("dpo_maybe_apply_chat_template_qwen3", pairs),
        ("dpo_trajectory_renders_qwen3", n("dpo_trajectory.jsonl")),
        ("hf_assistant_masks_qwen3", conversations),
        ("hf_assistant_weights", conversations),
    ] {
        assert_eq!(count(&report, check), (rows, 0), "{check}: {report}");
    }
    assert_eq!(report["qwen3_supports_tool_calling"], true);
    // Files of one format load together (datasets with the export's
    // features): a split's sides, two jobs', both DPO shapes.
    let together = n("hf_split.train.jsonl")
        + n("hf_split.validation.jsonl")
        + 2 * n("qa_hf.jsonl")
        + 2 * conversations
        + single.len() as u64
        + n("qa_sharegpt.jsonl")
        + conversations
        + n("dpo_split.train.jsonl")
        + n("dpo_split.validation.jsonl")
        + pairs
        + n("dpo_trajectory.jsonl");
    assert_eq!(
        count(&report, "multi_file_loads"),
        (together, 0),
        "{report}"
    );
    assert_eq!(report["features_same_per_format"], true, "{report}");
    // Without them, the issue's own call (a job without tool calls as train,
    // one with them as validation) fails as it did.
    let bare = report["multi_file_loads_without_features"]["hf jobs as splits"]
        .as_str()
        .unwrap();
    assert!(bare.contains("Couldn't cast"), "{bare}");
    // LLaMA-Factory's own converter (installed by scripts/export-consumers)
    // keeps system and tools with docs/exports.md's dataset_info.json entry, and
    // drops both without its column mapping.
    assert_ne!(report["llamafactory"], "not installed", "{report}");
    assert_eq!(
        count(&report, "sharegpt_llamafactory_converter"),
        (conversations, 0),
        "{report}"
    );
    assert_eq!(
        report["llamafactory_without_columns_drops_system_and_tools"],
        true
    );
}

/// The conversation ids of an export's rows, read from `metadata` (inline,
/// or the sidecar of an openai export).
fn ids(rows: &[Value]) -> BTreeSet<i64> {
    rows.iter()
        .map(|r| {
            r.get("metadata").unwrap_or(r)["conversation"]
                .as_i64()
                .unwrap()
        })
        .collect()
}

#[test]
fn filtering_an_export_by_its_metadata_keeps_what_min_reward_and_min_judge_keep() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("meta.db").display());
    let job = generate(
        dir.path(),
        &db,
        "meta",
        "mock-policy",
        &pointwise_judges(),
        &[],
    );
    let all = dir.path().join("all.jsonl");
    export(dir.path(), &db, job, "hf", &all, &[]);
    let everything = rows(&all);
    let rewards: BTreeSet<String> = everything
        .iter()
        .map(|r| r["metadata"]["reward"].to_string())
        .collect();
    assert!(
        rewards.len() >= 2,
        "the mock's flaws vary the reward: {rewards:?}"
    );
    let scores: BTreeSet<String> = everything
        .iter()
        .map(|r| r["metadata"]["judges"]["helpful"].to_string())
        .collect();
    assert!(
        !scores.contains("null"),
        "every conversation was judged: {scores:?}"
    );

    let keep = |min_reward: f64, min_helpful: f64| -> BTreeSet<i64> {
        let kept: Vec<Value> = everything
            .iter()
            .filter(|r| {
                r["metadata"]["reward"].as_f64().unwrap() >= min_reward
                    && r["metadata"]["judges"]["helpful"].as_f64().unwrap() >= min_helpful
            })
            .cloned()
            .collect();
        ids(&kept)
    };
    for (min_reward, min_helpful) in [(1.0, 0.0), (0.0, 7.0), (0.5, 5.0)] {
        let (r, h) = (min_reward.to_string(), format!("helpful={min_helpful}"));
        let flags = ["--min-reward", r.as_str(), "--min-judge", h.as_str()];
        let filtered = dir
            .path()
            .join(format!("f-{min_reward}-{min_helpful}.jsonl"));
        export(dir.path(), &db, job, "hf", &filtered, &flags);
        assert_eq!(
            ids(&rows(&filtered)),
            keep(min_reward, min_helpful),
            "{flags:?}"
        );
        // The openai sidecar says the same, line for line.
        let openai = dir
            .path()
            .join(format!("o-{min_reward}-{min_helpful}.jsonl"));
        export(dir.path(), &db, job, "openai", &openai, &flags);
        let sidecar =
            rows(&openai.with_file_name(format!("o-{min_reward}-{min_helpful}.metadata.jsonl")));
        assert_eq!(ids(&sidecar), keep(min_reward, min_helpful), "{flags:?}");
        assert_eq!(sidecar.len(), rows(&openai).len());
    }
}

#[test]
fn a_split_puts_each_scenario_on_one_side_the_same_way_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("split.db").display());
    let job = generate(dir.path(), &db, "split", "mock-policy", "", &[]);
    let out = dir.path().join("data.jsonl");
    let scenarios = |path: &Path| -> BTreeSet<String> {
        rows(path)
            .iter()
            .map(|r| r["metadata"]["scenario"].as_str().unwrap().to_string())
            .collect()
    };
    let said = export(
        dir.path(),
        &db,
        job,
        "hf",
        &out,
        &["--split", "0.75", "--split-seed", "3"],
    );
    assert!(
        said.contains("split by scenario: 15 to data.train.jsonl, 5 to data.validation.jsonl"),
        "{said}"
    );
    assert!(!out.exists(), "a split writes only the two sides");
    let (train, validation) = (
        dir.path().join("data.train.jsonl"),
        dir.path().join("data.validation.jsonl"),
    );
    let (t, v) = (scenarios(&train), scenarios(&validation));
    assert_eq!((t.len(), v.len()), (15, 5));
    assert!(t.is_disjoint(&v));
    let first = (
        std::fs::read(&train).unwrap(),
        std::fs::read(&validation).unwrap(),
    );
    export(
        dir.path(),
        &db,
        job,
        "hf",
        &out,
        &["--split", "0.75", "--split-seed", "3"],
    );
    assert_eq!(
        first,
        (
            std::fs::read(&train).unwrap(),
            std::fs::read(&validation).unwrap()
        )
    );
    // openai: each side has its sidecar.
    export(
        dir.path(),
        &db,
        job,
        "openai",
        &out,
        &["--split", "0.75", "--split-seed", "3"],
    );
    let sidecar = rows(&dir.path().join("data.train.metadata.jsonl"));
    assert_eq!(sidecar.len(), rows(&train).len());
    let sidecar_scenarios: BTreeSet<String> = sidecar
        .iter()
        .map(|m| m["scenario"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sidecar_scenarios, t);
}

/// The assistant messages of `messages`.
fn assistant(messages: &Value) -> Vec<&Value> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect()
}

#[test]
fn the_scripted_greeting_is_marked_not_to_train_on_and_the_policys_replies_to_train_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("weights.db").display());
    // The agent opens with the configured greeting (the default).
    let job = generate(dir.path(), &db, "weights", "mock-policy", "", &[]);
    let file = |name: &str| dir.path().join(name);
    export(dir.path(), &db, job, "openai", &file("o.jsonl"), &[]);
    export(dir.path(), &db, job, "hf", &file("h.jsonl"), &[]);
    export(dir.path(), &db, job, "sharegpt", &file("s.jsonl"), &[]);
    let (openai, hf, sharegpt) = (
        rows(&file("o.jsonl")),
        rows(&file("h.jsonl")),
        rows(&file("s.jsonl")),
    );
    assert!(openai.len() >= 8 && openai.len() == hf.len() && hf.len() == sharegpt.len());
    for (o, h) in openai.iter().zip(&hf) {
        // OpenAI's per-message weight: 0 for the greeting, 1 for the policy.
        let replies = assistant(&o["messages"]);
        assert_eq!(
            replies[0]["content"], "Hi! How can I help you today?",
            "{o}"
        );
        let weights: Vec<u64> = replies
            .iter()
            .map(|m| m["weight"].as_u64().unwrap())
            .collect();
        assert_eq!(weights[0], 0, "{o}");
        assert!(weights[1..].iter().all(|w| *w == 1), "{o}");
        assert!(
            weights.len() >= 2,
            "the row ends on a reply of the policy: {o}"
        );
        assert_eq!(
            o["messages"].as_array().unwrap().last().unwrap()["weight"],
            1
        );
        // hf: the same weights in the metadata, none in the messages.
        let h_weights: Vec<u64> = h["metadata"]["assistant_weights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_u64().unwrap())
            .collect();
        assert_eq!(h_weights, weights, "{h}");
        assert!(h["messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m.get("weight").is_none()));
    }
    // ShareGPT leaves the greeting out: one weight per gpt or function_call
    // turn, all the policy's.
    for s in &sharegpt {
        let turns = s["conversations"].as_array().unwrap().len();
        let weights = s["metadata"]["assistant_weights"].as_array().unwrap();
        assert_eq!(weights.len(), turns / 2, "{s}");
        assert!(weights.iter().all(|w| w == 1), "{s}");
    }
}
