//! What a new user meets following the README: the install step before the
//! first `sparring` command, `next:` hints that work as typed, listing jobs and
//! conversations, one exit code per kind of outcome, an export that says its
//! result once, an interrupted run with nothing to export, the local model's
//! slots, and the architecture page inside the repository.

use std::path::Path;

use crate::common::{self, repo, sparring, text, write_job, JobSpec};

/// A small job over the mock (`scenarios` retail scenarios, one persona each),
/// run to the end in `dir`; its database URL.
fn finished_job(dir: &Path, scenarios: usize) -> String {
    let spec = JobSpec {
        scenarios: common::first_scenarios(dir, scenarios),
        ..JobSpec::default()
    };
    let (config, db) = write_job(dir, &spec);
    let run = sparring(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    db
}

/// The README's shell blocks, in order, each as its commands: lines joined
/// where they end in `\`, comments dropped, split on `&&` and `;`.
fn readme_commands() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut blocks = Vec::new();
    let mut block: Option<String> = None;
    for line in readme.lines() {
        match (&mut block, line.starts_with("```")) {
            (None, true) if line.starts_with("```sh") => block = Some(String::new()),
            (Some(text), true) => {
                let joined = text.replace("\\\n", " ");
                blocks.push(
                    joined
                        .lines()
                        .map(|l| l.split(" #").next().unwrap_or(""))
                        .flat_map(|l| l.split("&&").flat_map(|c| c.split(';')))
                        .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "))
                        .filter(|c| !c.is_empty() && !c.starts_with('#'))
                        .collect(),
                );
                block = None;
            }
            (Some(text), false) => {
                text.push_str(line);
                text.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

#[test]
fn the_readmes_first_two_commands_install_and_run_the_quickstart_then_run_the_tests() {
    let blocks = readme_commands();
    let first = &blocks[0];
    assert_eq!(
        first,
        &[
            "python3 -m venv .venv",
            ". .venv/bin/activate",
            "pip install .",
            "sparring init q",
            "sparring run q/quickstart.toml",
            "cargo test -- --show-output",
        ],
        "the README's first block"
    );
    // Every `sparring` command comes after the install; the next block is
    // the contributors' install with cargo.
    let all: Vec<&String> = blocks.iter().flatten().collect();
    let install = all.iter().position(|c| *c == "pip install .").unwrap();
    let first_sparring = all.iter().position(|c| c.starts_with("sparring ")).unwrap();
    assert!(install < first_sparring);
    assert!(
        blocks[1].iter().any(|c| c == "cargo install --path ."),
        "the contributors' install: {:?}",
        blocks[1]
    );
}

#[test]
fn the_readme_links_the_architecture_page_in_the_repository() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(
        !readme.contains("../shared/"),
        "nothing outside the repository"
    );
    assert!(readme.contains("(docs/ARCHITECTURE.md)"));
    let page = std::fs::read_to_string(repo().join("docs/ARCHITECTURE.md")).unwrap();
    for topic in [
        "## Modules",
        "## Data flow",
        "## Storage",
        "NeMo Gym",
        "## The service and what it trusts",
    ] {
        assert!(page.contains(topic), "docs/ARCHITECTURE.md covers {topic}");
    }
    // Every module folder of src/ is described.
    for entry in std::fs::read_dir(repo().join("src")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                page.contains(&format!("`{name}/`")),
                "docs/ARCHITECTURE.md describes src/{name}/"
            );
        }
    }
}

#[test]
fn the_next_hints_of_a_run_work_as_typed() {
    let dir = tempfile::tempdir().unwrap();
    let spec = JobSpec {
        scenarios: common::first_scenarios(dir.path(), 2),
        ..JobSpec::default()
    };
    let (config, _) = write_job(dir.path(), &spec);
    let run = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let hints: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("next: "))
        .collect();
    assert!(
        !hints.is_empty(),
        "a finished run says what to do next: {stdout}"
    );
    for hint in hints {
        let words: Vec<&str> = hint.split_whitespace().collect();
        assert_eq!(words[0], "sparring", "{hint}");
        let out = sparring(dir.path(), &words[1..]);
        assert!(
            out.status.success(),
            "`{hint}` works as typed: {}",
            text(&out.stderr)
        );
    }
    assert!(dir.path().join("out/job1.jsonl").is_file());
}

#[test]
fn sparring_jobs_lists_each_job_with_its_items_status_and_mean_reward() {
    let dir = tempfile::tempdir().unwrap();
    let db = finished_job(dir.path(), 3);
    let out = sparring(dir.path(), &["jobs", "--database", &db]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "a header and one job: {stdout}");
    for column in [
        "id",
        "name",
        "kind",
        "status",
        "created (UTC)",
        "items",
        "mean reward",
    ] {
        assert!(lines[0].contains(column), "{column}: {stdout}");
    }
    let cells: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(&cells[..4], ["1", "test", "generation", "done"], "{stdout}");
    assert!(
        cells[4].starts_with("20") && cells[5].contains(':'),
        "{stdout}"
    );
    assert_eq!(cells[6], "3/0/0", "3 done, 0 failed, 0 left: {stdout}");
    let mean: f64 = cells[7].parse().expect("a mean reward");
    assert!((0.0..=1.0).contains(&mean), "{stdout}");
}

fn conversation_lines(dir: &Path, db: &str, filters: &[&str]) -> Vec<String> {
    let mut args = vec!["conversations", "--job", "1", "--database", db];
    args.extend_from_slice(filters);
    let out = sparring(dir, &args);
    assert!(out.status.success(), "{filters:?}: {}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect()
}

#[test]
fn sparring_conversations_lists_a_jobs_conversations_with_the_exports_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = finished_job(dir.path(), 27);
    let all = conversation_lines(dir.path(), &db, &[]);
    assert_eq!(all.len(), 27, "{all:?}");
    let cells =
        |line: &String| -> Vec<String> { line.split_whitespace().map(str::to_string).collect() };

    // --min-reward keeps what the export with the same filter writes.
    let best = conversation_lines(dir.path(), &db, &["--min-reward", "1"]);
    let export = sparring(
        dir.path(),
        &[
            "export",
            "--job",
            "1",
            "--database",
            &db,
            "--min-reward",
            "1",
            "--out",
            "best.jsonl",
        ],
    );
    assert!(export.status.success(), "{}", text(&export.stderr));
    let exported = std::fs::read_to_string(dir.path().join("best.jsonl")).unwrap();
    assert_eq!(best.len(), exported.lines().count(), "{best:?}");
    assert!(best.iter().all(|l| cells(l)[5] == "1.000"), "{best:?}");
    let worse = conversation_lines(dir.path(), &db, &["--max-reward", "0.999"]);
    assert_eq!(
        best.len() + worse.len(),
        27,
        "every conversation is scored: {all:?}"
    );
    assert!(!worse.is_empty(), "the mock errs on some seeds: {all:?}");

    let first = cells(&all[0]);
    let (scenario, termination) = (first[1].clone(), first[4].clone());
    let of_scenario = conversation_lines(dir.path(), &db, &["--scenario", &scenario]);
    assert_eq!(
        of_scenario.len(),
        1,
        "one persona per scenario: {of_scenario:?}"
    );
    let ended = conversation_lines(dir.path(), &db, &["--termination", &termination]);
    assert!(!ended.is_empty() && ended.iter().all(|l| cells(l)[4] == termination));
    let none = conversation_lines(dir.path(), &db, &["--scenario", "no-such-scenario"]);
    assert!(none.is_empty());

    let out = sparring(
        dir.path(),
        &[
            "conversations",
            "--job",
            "1",
            "--database",
            &db,
            "--min-judge",
            "helpfulness=7",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "a judge without judgments keeps nothing"
    );
    assert!(text(&out.stderr).contains("no judgments by 'helpfulness'"));
}

#[test]
fn a_job_or_conversation_that_is_not_in_the_database_exits_3_from_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let db = finished_job(dir.path(), 1);
    std::fs::write(
        dir.path().join("judges.toml"),
        "[[judges]]\nname = \"helpfulness\"\nendpoint = \"policy\"\nbuiltin = \"helpfulness\"\n",
    )
    .unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["show", "9999"],
        vec!["stats", "--job", "9999"],
        vec!["export", "--job", "9999", "--out", "x.jsonl"],
        vec!["conversations", "--job", "9999"],
        vec!["run", "--resume", "9999"],
        vec!["worker", "--job", "9999"],
        vec!["judge", "judges.toml", "--job", "9999"],
    ];
    for command in commands {
        let mut args = command.clone();
        args.extend_from_slice(&["--database", &db]);
        let out = sparring(dir.path(), &args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{command:?}: {stderr}");
        assert!(
            stderr.contains("9999"),
            "{command:?} names the id: {stderr}"
        );
        assert!(!dir.path().join("x.jsonl").exists());
    }
    // Invalid input stays 2; a finished command 0.
    let bad = sparring(dir.path(), &["show", "nine", "--database", &db]);
    assert_eq!(bad.status.code(), Some(2));
    let ok = sparring(dir.path(), &["show", "1", "--database", &db]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
}

#[test]
fn export_prints_its_result_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = finished_job(dir.path(), 2);
    let out = sparring(
        dir.path(),
        &[
            "export",
            "--job",
            "1",
            "--database",
            &db,
            "--out",
            "all.jsonl",
        ],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let said = format!("{stdout}{stderr}");
    assert_eq!(said.matches("2 conversations").count(), 1, "{said}");
    assert!(stdout.contains("wrote 2 conversations"), "{stdout}");
}

#[test]
fn ctrl_c_before_the_first_conversation_prints_no_export_hint_and_no_empty_terminations() {
    let dir = tempfile::tempdir().unwrap();
    let spec = JobSpec {
        scenarios: common::first_scenarios(dir.path(), 2),
        // Every call waits 30 s: nothing finishes before the interrupt.
        extra: "[mock]\nlatency_ms = 30000\n".into(),
        ..JobSpec::default()
    };
    let (config, _) = write_job(dir.path(), &spec);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args(["run", config.to_str().unwrap(), "--quiet"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("interrupted:"), "{stdout}");
    assert!(stdout.contains("conversations: 0"), "{stdout}");
    assert!(!stdout.contains("terminations:"), "{stdout}");
    assert!(!stdout.contains("next: sparring export"), "{stdout}");
}

#[test]
fn the_local_model_example_sends_no_more_requests_at_once_than_the_server_has_slots() {
    let example: toml::Value = toml::from_str(
        &std::fs::read_to_string(repo().join("examples/local-smollm2.toml")).unwrap(),
    )
    .unwrap();
    let concurrency = example["concurrency"].as_integer().unwrap();
    let in_flight = example["endpoints"]["local"]["max_in_flight"]
        .as_integer()
        .unwrap();
    let server = std::fs::read_to_string(repo().join("scripts/local_llm_server.py")).unwrap();
    let slots: i64 = server
        .lines()
        .find_map(|l| l.strip_prefix("SLOTS = "))
        .and_then(|n| n.trim().parse().ok())
        .expect("scripts/local_llm_server.py sets SLOTS");
    assert!(server.contains("params.n_parallel = SLOTS"));
    assert!(
        concurrency.min(in_flight) <= slots,
        "the example sends up to {} requests at once to a server with {slots} slots",
        concurrency.min(in_flight)
    );
}
