//! `sparring mine` through the binary on a SQLite file: real conversations
//! imported, mined by the mock into scenarios and personas that validate and
//! run, the private values planted in them nowhere in the output, and every
//! bad input refused with nothing written.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{job_id_from, repo, sparring, text};
use sparring::store::{self, JobKind, NewJob};

/// The fixture's planted private values.
const PRIVATE: &[&str] = &[
    "dana.whitfield@example.com",
    "415-555-0134",
    "(212) 555-0199",
    "#W2378156",
    "W2378156",
    "mia_li_3668",
    "ORD-88213",
    "4242424242424242",
];

const ENDPOINTS: &str = "[endpoints.miner]\nmock = true\nmodel = \"mock-miner\"\n\n\
    [endpoints.garbled]\nmock = true\nmodel = \"mock-miner+garbled\"\n\n\
    [endpoints.broken]\nmock = true\nmodel = \"mock-miner+malformed\"\nmax_retries = 0\n\n\
    [endpoints.limited]\nmock = true\nmodel = \"mock-miner+ratelimit-once\"\n";

/// A folder with the fixture imported into `sparring.db`: (folder, job id).
fn imported() -> (tempfile::TempDir, i64) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("tests/data/mine/support.jsonl"),
        dir.path().join("support.jsonl"),
    )
    .unwrap();
    std::fs::write(dir.path().join("endpoints.toml"), ENDPOINTS).unwrap();
    let out = sparring(
        dir.path(),
        &["import", "support.jsonl", "--name", "support"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    (dir, job_id_from(&text(&out.stdout)))
}

fn mine(dir: &Path, job: i64, endpoint: &str, out: &str, extra: &[&str]) -> std::process::Output {
    let job = job.to_string();
    let mut args = vec![
        "mine",
        &job,
        "--endpoints",
        "endpoints.toml",
        "--endpoint",
        endpoint,
        "--out",
        out,
    ];
    args.extend(extra);
    sparring(dir, &args)
}

fn all_text(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        all.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    all
}

fn lines(path: PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn mined_scenarios_validate_and_run_and_no_private_value_reaches_them() {
    let (dir, job) = imported();
    let out = mine(
        dir.path(),
        job,
        "miner",
        "mined",
        &["--environment", "retail"],
    );
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let said = text(&out.stdout);
    assert!(
        said.contains("6 conversations, 5 scenarios kept, 1 rejected"),
        "{said}"
    );
    assert!(said.contains("rejected duplicate: 1"), "{said}");

    let mined = dir.path().join("mined");
    let mut files: Vec<String> = std::fs::read_dir(&mined)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "SHA256SUMS",
            "job.toml",
            "personas.jsonl",
            "scenarios.jsonl",
            "summary.json"
        ]
    );
    let everything = all_text(&mined);
    for private in PRIVATE {
        assert!(
            !everything.contains(private),
            "{private} leaked into {everything}"
        );
    }

    // The mock read each conversation: the first message as the reason, its
    // ids (faked) as known info, the agent's amounts as facts, knobs from
    // how the customer wrote.
    let scenarios = lines(mined.join("scenarios.jsonl"));
    let personas = lines(mined.join("personas.jsonl"));
    assert_eq!((scenarios.len(), personas.len()), (5, 5));
    let first = &scenarios[0];
    let reason = first["user"]["reason_for_contact"].as_str().unwrap();
    assert!(
        reason.starts_with("Hi, I was charged twice for order #"),
        "{reason}"
    );
    assert!(first["user"]["known_info"].as_str().unwrap().contains('@'));
    assert_eq!(first["evaluation"]["communicate"][0], "$54.04");
    let frustrated = &personas[1]["knobs"];
    assert_eq!(frustrated["mood"], serde_json::json!({"frustrated": 1.0}));
    assert_eq!(frustrated["patience"], serde_json::json!({"low": 1.0}));
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(mined.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["rejections"]["duplicate"], 1);
    assert!(summary["private_values_replaced"].as_u64().unwrap() >= 7);

    // The same run again gives the same fakes (seeded), in a new folder.
    let again = mine(
        dir.path(),
        job,
        "miner",
        "again",
        &["--environment", "retail"],
    );
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(
        std::fs::read(dir.path().join("again/scenarios.jsonl")).unwrap(),
        std::fs::read(mined.join("scenarios.jsonl")).unwrap()
    );

    let valid = sparring(dir.path(), &["validate", "mined/job.toml"]);
    assert!(valid.status.success(), "{}", text(&valid.stderr));
    assert!(text(&valid.stdout).contains("valid — 5 scenarios, 5 personas"));
    let run = sparring(dir.path(), &["run", "mined/job.toml", "--quiet"]);
    assert!(
        run.status.success(),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    let generated = job_id_from(&text(&run.stdout));
    let db = store::open(&format!(
        "sqlite://{}",
        dir.path().join("sparring.db").display()
    ))
    .await
    .unwrap();
    let stored = db.conversations_page(generated, 0, 100).await.unwrap();
    assert_eq!(stored.len(), 5);
    assert!(stored
        .iter()
        .all(|c| c.conversation.scenario_id.starts_with("mined-")));
    assert!(stored.iter().all(|c| c.messages.len() >= 2));
    // Each scenario is played by the persona mined from the same conversation.
    assert!(stored
        .iter()
        .all(|c| c.conversation.scenario_id == c.conversation.persona_id));
    db.close().await;

    // A generation job is not an import job.
    let not_import = mine(dir.path(), generated, "miner", "x", &[]);
    assert_eq!(not_import.status.code(), Some(2));
    assert!(text(&not_import.stderr).contains("is a generation job; mining reads an import job"));
    assert!(!dir.path().join("x").exists());
}

#[tokio::test]
async fn an_unparseable_answer_is_a_rejection_and_with_nothing_kept_nothing_is_written() {
    let (dir, job) = imported();
    let out = mine(dir.path(), job, "garbled", "mined", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("rejected unparseable: 6 (e.g. conversation"));
    assert!(text(&out.stderr).contains("no conversation gave a scenario; nothing written"));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        3,
        "only the inputs and the db"
    );
}

#[tokio::test]
async fn calls_go_through_the_endpoint_its_retries_hold_and_a_failed_call_is_a_rejection() {
    let (dir, job) = imported();
    // A 429 on the first call pauses the endpoint and is retried: all kept.
    let limited = mine(dir.path(), job, "limited", "limited", &[]);
    assert!(limited.status.success(), "{}", text(&limited.stderr));
    assert!(text(&limited.stdout).contains("6 conversations, 5 scenarios kept"));
    // Broken bodies and no retries: every conversation fails, nothing is written.
    let broken = mine(dir.path(), job, "broken", "broken", &[]);
    assert_eq!(broken.status.code(), Some(1), "{}", text(&broken.stderr));
    assert!(
        text(&broken.stdout).contains("rejected model_failed: 6"),
        "{}",
        text(&broken.stdout)
    );
    assert!(!dir.path().join("broken").exists());
}

#[tokio::test]
async fn bad_inputs_are_refused_with_what_was_wrong_and_nothing_written() {
    let (dir, job) = imported();
    let d = dir.path();
    let db = store::open(&format!("sqlite://{}", d.join("sparring.db").display()))
        .await
        .unwrap();
    let empty = db
        .create_job(&NewJob {
            name: "empty".into(),
            kind: JobKind::Import,
            config_snapshot: String::new(),
            config_hash: "empty-import".into(),
        })
        .await
        .unwrap();
    db.close().await;
    std::fs::create_dir(d.join("exists")).unwrap();
    std::fs::write(d.join("a-file"), "").unwrap();
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (vec!["9999".into()], 3, "job 9999 is not in the database"),
        (
            vec![empty.id.to_string()],
            2,
            "holds no conversations; import some first",
        ),
        (
            vec![job.to_string(), "--endpoint".into(), "nope".into()],
            2,
            "'nope' is not an endpoint of endpoints.toml; it defines: broken, garbled, limited, miner",
        ),
        (
            vec![job.to_string(), "--out".into(), "exists".into()],
            2,
            "exists already exists; mining writes a new folder",
        ),
        (
            vec![job.to_string(), "--out".into(), "a-file/out".into()],
            2,
            "a-file is not a folder one can write in",
        ),
        (
            vec![job.to_string(), "--environment".into(), "mall".into()],
            2,
            "'mall' is not a built-in environment; give one of builtin:retail",
        ),
        (
            vec![job.to_string(), "--private".into(), "gps".into()],
            2,
            "--private: 'gps' is not a kind of private value",
        ),
        (
            vec![job.to_string(), "--private-pattern".into(), "(".into()],
            2,
            "is not a regular expression",
        ),
        (
            vec![job.to_string(), "--concurrency".into(), "0".into()],
            2,
            "--concurrency: 0 is out of range; give 1 to 256",
        ),
    ];
    for (args, code, mentions) in cases {
        // The first argument is the job; later ones override the defaults.
        let mut full: Vec<&str> = vec!["mine", &args[0]];
        let mut defaults = vec![
            ("--endpoints", "endpoints.toml"),
            ("--endpoint", "miner"),
            ("--out", "out"),
        ];
        let rest: Vec<&str> = args[1..].iter().map(String::as_str).collect();
        defaults.retain(|(flag, _)| !rest.contains(flag));
        for (flag, value) in &defaults {
            full.extend([*flag, *value]);
        }
        full.extend(rest);
        let out = sparring(d, &full);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{full:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(mentions),
            "{full:?}: {}",
            text(&out.stderr)
        );
        assert!(!d.join("out").exists(), "{full:?} wrote out");
    }
    let leftovers: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Emails and `name_name_1234` ids in `text`, found without the miner's
/// own patterns.
fn planted_in(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || "._@-".contains(c))) {
        let word = word.trim_matches('.');
        let id_like = word.split('_').count() >= 3
            && word
                .rsplit('_')
                .next()
                .is_some_and(|n| n.len() >= 3 && n.chars().all(|c| c.is_ascii_digit()));
        if (word.contains('@') && word.contains('.')) || id_like {
            found.push(word.to_string());
        }
    }
    found.sort();
    found.dedup();
    found
}

#[tokio::test]
async fn recorded_tau2_and_nemo_gym_conversations_mine_without_their_emails_and_user_ids() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("endpoints.toml"), ENDPOINTS).unwrap();
    let mut files = vec![repo().join("tests/data/tau2/airline_real_run.json")];
    match std::env::var("SPARRING_NEMO_GYM_DIR") {
        Ok(gym) => files.push(
            Path::new(&gym).join("../responses_api_agents/tau2/data/example_rollouts.jsonl"),
        ),
        Err(_) => println!(
            "SKIPPED: mining NeMo Gym's shipped tau2 rollouts: SPARRING_NEMO_GYM_DIR is not set (scripts/nemo-gym dir); the tau2-bench results file is mined alone"
        ),
    }
    let sources: String = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let planted = planted_in(&sources);
    assert!(planted.len() >= 5, "{planted:?}");
    let mut args = vec!["import".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    args.extend(["--name".into(), "recorded".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let imported = sparring(d, &args);
    assert!(imported.status.success(), "{}", text(&imported.stderr));
    let job = job_id_from(&text(&imported.stdout));

    let out = mine(
        d,
        job,
        "miner",
        "mined",
        &["--environment", "builtin:retail"],
    );
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let everything = all_text(&d.join("mined"));
    for value in &planted {
        assert!(!everything.contains(value.as_str()), "{value} leaked");
    }
    let valid = sparring(d, &["validate", "mined/job.toml"]);
    assert!(valid.status.success(), "{}", text(&valid.stderr));
}
