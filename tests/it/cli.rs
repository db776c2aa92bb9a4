//! The `sparring` binary as a user runs it: the quickstart, show, export, and
//! validate's error reports.

use crate::common;

use std::collections::HashSet;
use std::path::Path;

use common::{repo, sparring, text, write_job, JobSpec};
use serde_json::Value;

fn quickstart() -> String {
    repo().join("quickstart.toml").display().to_string()
}

/// Check one line of OpenAI chat fine-tuning JSONL; returns how many tool calls it has.
fn check_openai_line(n: usize, line: &str) -> usize {
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {n}: {e}"));
    let messages = v["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("line {n}: no messages"));
    let tools = v["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("line {n}: no tools"));
    for t in tools {
        assert_eq!(t["type"], "function", "line {n}");
        assert!(t["function"]["name"].is_string(), "line {n}");
        assert!(t["function"]["parameters"].is_object(), "line {n}");
    }
    let mut open_calls = HashSet::new();
    let mut calls = 0;
    assert_eq!(
        messages[0]["role"], "system",
        "line {n}: starts with the system prompt"
    );
    for m in messages {
        match m["role"].as_str().unwrap() {
            "system" | "user" => assert!(m["content"].is_string(), "line {n}"),
            "assistant" => {
                if let Some(tool_calls) = m.get("tool_calls") {
                    for c in tool_calls.as_array().unwrap() {
                        assert_eq!(c["type"], "function", "line {n}");
                        assert!(c["function"]["name"].is_string(), "line {n}");
                        let args = c["function"]["arguments"]
                            .as_str()
                            .expect("arguments as a JSON string");
                        serde_json::from_str::<Value>(args)
                            .unwrap_or_else(|e| panic!("line {n}: {e}"));
                        open_calls.insert(c["id"].as_str().unwrap().to_string());
                        calls += 1;
                    }
                } else {
                    assert!(m["content"].is_string(), "line {n}");
                }
            }
            "tool" => {
                let id = m["tool_call_id"].as_str().expect("tool_call_id");
                assert!(
                    open_calls.contains(id),
                    "line {n}: tool result for unknown call {id}"
                );
                assert!(m["content"].is_string(), "line {n}");
            }
            other => panic!("line {n}: role {other}"),
        }
    }
    calls
}

fn number_after(haystack: &str, label: &str) -> u64 {
    let rest = &haystack[haystack
        .find(label)
        .unwrap_or_else(|| panic!("no '{label}' in {haystack}"))
        + label.len()..];
    rest.trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn the_quickstart_runs_offline_stores_conversations_and_exports_valid_openai_jsonl() {
    let cwd = tempfile::tempdir().unwrap();
    let run = sparring(cwd.path(), &["run", &quickstart()]);
    let out = text(&run.stdout);
    assert!(run.status.success(), "{out}\n{}", text(&run.stderr));
    assert!(
        cwd.path().join("sparring.db").exists(),
        "the default database is sparring.db"
    );
    let conversations = number_after(&out, "conversations:");
    assert!(conversations >= 40, "{out}");
    assert!(out.contains("user_stop"), "{out}");
    assert!(out.contains("tokens (policy)"), "{out}");

    let export = sparring(
        cwd.path(),
        &[
            "export",
            "--job",
            "1",
            "--format",
            "openai",
            "--out",
            "out/all.jsonl",
        ],
    );
    assert!(export.status.success(), "{}", text(&export.stderr));
    let jsonl = std::fs::read_to_string(cwd.path().join("out/all.jsonl")).unwrap();
    let lines: Vec<&str> = jsonl.lines().collect();
    assert_eq!(lines.len() as u64, conversations);
    let with_calls = lines
        .iter()
        .enumerate()
        .filter(|(n, l)| check_openai_line(*n + 1, l) > 0)
        .count();
    assert!(
        with_calls * 10 >= lines.len() * 8,
        "most conversations call tools"
    );
    // Retail's policy says one tool call at a time, and so does the job by
    // default: no step makes two, and no system prompt says both.
    for (n, line) in lines.iter().enumerate() {
        let row: Value = serde_json::from_str(line).unwrap();
        let messages = row["messages"].as_array().unwrap();
        let system = messages[0]["content"].as_str().unwrap();
        assert!(
            system.contains("Make one tool call at a time")
                && !system.contains("several tool calls in one step"),
            "line {}: {system}",
            n + 1
        );
        for m in messages {
            let calls = m["tool_calls"].as_array().map_or(0, Vec::len);
            assert!(calls <= 1, "line {}: a step with {calls} tool calls", n + 1);
        }
    }

    let best = sparring(
        cwd.path(),
        &[
            "export",
            "--job",
            "1",
            "--out",
            "out/best.jsonl",
            "--min-reward",
            "1",
        ],
    );
    assert!(best.status.success());
    let kept = std::fs::read_to_string(cwd.path().join("out/best.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert!(
        kept > 0 && kept < lines.len(),
        "rewards are both 1 and 0: kept {kept} of {}",
        lines.len()
    );

    // The quickstart's judges ran over every conversation after the run.
    for judge in ["helpfulness", "policy", "user_fidelity"] {
        assert!(
            out.contains(&format!(
                "judge {judge}: {conversations} ok, 0 unparseable, 0 failed"
            )),
            "{out}"
        );
    }
    let stats = sparring(cwd.path(), &["stats", "--job", "1"]);
    let report = text(&stats.stdout);
    assert!(stats.status.success(), "{report}{}", text(&stats.stderr));
    for part in [
        "mean reward",
        "Reward components",
        "Terminations",
        "pass^k per scenario",
        "helpfulness (pointwise)",
        "mean score",
        "user_fidelity (pass/fail",
    ] {
        assert!(report.contains(part), "stats lacks {part}:\n{report}");
    }
    let json = sparring(cwd.path(), &["stats", "--job", "1", "--json"]);
    let parsed: serde_json::Value = serde_json::from_slice(&json.stdout)
        .unwrap_or_else(|e| panic!("stats --json is JSON: {e}: {}", text(&json.stdout)));
    assert!(parsed.is_object());

    let show = sparring(cwd.path(), &["show", "1"]);
    let shown = text(&show.stdout);
    assert!(show.status.success());
    for part in [
        "[USER]",
        "[AGENT",
        "→ tool",
        "[TOOL",
        "reward breakdown:",
        "termination",
    ] {
        assert!(shown.contains(part), "show lacks {part}: {shown}");
    }

    let again = sparring(cwd.path(), &["run", &quickstart()]);
    let again_out = text(&again.stdout);
    assert!(again.status.success());
    assert!(again_out.contains("(resumed)"), "{again_out}");
    assert_eq!(
        number_after(&again_out, "conversations:"),
        conversations,
        "nothing is done twice"
    );
}

#[test]
fn validate_accepts_the_quickstart() {
    let out = sparring(&repo(), &["validate", "quickstart.toml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("valid"));
}

fn validate(dir: &Path, toml: &str) -> (i32, String) {
    let path = dir.join("job.toml");
    std::fs::write(&path, toml).unwrap();
    let out = sparring(dir, &["validate", path.to_str().unwrap()]);
    (out.status.code().unwrap(), text(&out.stderr))
}

#[test]
fn validate_reports_an_unknown_field_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let (_, db) = write_job(dir.path(), &JobSpec::default());
    let good = std::fs::read_to_string(dir.path().join("job.toml")).unwrap();
    let bad = good.replacen("max_turns = 12", "max_turns = 12\nmax_turnz = 3", 1);
    let (code, err) = validate(dir.path(), &bad);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("job.toml: line 6"), "{err}");
    assert!(err.contains("unknown field `max_turnz`"), "{err}");
    let _ = db;
}

#[test]
fn validate_reports_every_config_problem_at_once_with_field_paths() {
    let dir = tempfile::tempdir().unwrap();
    write_job(dir.path(), &JobSpec::default());
    let good = std::fs::read_to_string(dir.path().join("job.toml")).unwrap();
    let bad = good
        .replacen("user = \"user\"", "user = \"simulator\"", 1)
        .replace("scenarios = \"", "scenarios = \"missing-");
    let (code, err) = validate(dir.path(), &bad);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("roles.user: names endpoint 'simulator', which is not defined"),
        "{err}"
    );
    assert!(
        err.contains("dataset.scenarios:") && err.contains("does not exist"),
        "{err}"
    );
    assert!(err.contains("2 problems found"), "{err}");
}

#[test]
fn validate_reports_a_bad_persona_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let personas = dir.path().join("personas");
    std::fs::create_dir(&personas).unwrap();
    std::fs::copy(
        repo().join("personas/retired_teacher.toml"),
        personas.join("a.toml"),
    )
    .unwrap();
    std::fs::write(
        personas.join("b.toml"),
        "id = \"b\"\nname = \"B\"\nbackgruond = \"typo\"\nspeaking_style = \"plain\"\n",
    )
    .unwrap();
    write_job(dir.path(), &JobSpec::default());
    let good = std::fs::read_to_string(dir.path().join("job.toml")).unwrap();
    let bad = good.replace(
        &format!("{}/personas", repo().display()),
        &personas.display().to_string(),
    );
    let (code, err) = validate(dir.path(), &bad);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("b.toml: line 3"), "{err}");
    assert!(err.contains("backgruond"), "{err}");
}

#[test]
fn validate_reports_a_bad_scenario_line_and_a_broken_template() {
    let dir = tempfile::tempdir().unwrap();
    let first = std::fs::read_to_string(repo().join("data/retail/scenarios.jsonl")).unwrap();
    let first = first.lines().next().unwrap();
    let scenarios = dir.path().join("scenarios.jsonl");
    std::fs::write(&scenarios, format!("{first}\n{{\"id\": \"x\"}}\n")).unwrap();
    let template = dir.path().join("user.tera");
    std::fs::write(&template, "You are {{ persona.name }.\n{% if %}").unwrap();
    write_job(
        dir.path(),
        &JobSpec {
            scenarios: scenarios.clone(),
            ..JobSpec::default()
        },
    );
    let good = std::fs::read_to_string(dir.path().join("job.toml")).unwrap();
    let bad = good.replace(
        &format!("{}/prompts/user_simulator.tera", repo().display()),
        &template.display().to_string(),
    );
    let (code, err) = validate(dir.path(), &bad);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("scenarios.jsonl: line 2"), "{err}");
    assert!(err.contains("missing field `user`"), "{err}");
    assert!(err.contains("user.tera"), "{err}");
}

#[tokio::test]
async fn an_interrupted_run_returns_its_items_and_the_same_command_resumes_it() {
    let dir = tempfile::tempdir().unwrap();
    // A user who never stops and many turns: slow enough to interrupt mid-job.
    let spec = JobSpec {
        user_model: "mock-user+nonstop".into(),
        max_turns: 150,
        ..JobSpec::default()
    };
    let (path, db) = write_job(dir.path(), &spec);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args(["run", path.to_str().unwrap()])
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
    let stderr = text(&out.stderr);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("interrupted:") && stdout.contains("run the same command to resume"),
        "{stdout}"
    );

    let store = sparring::store::open(&db).await.unwrap();
    let counts = store.item_counts(1).await.unwrap();
    assert_eq!(counts.leased, 0, "nothing stays leased after an interrupt");
    assert!(
        counts.pending > 0,
        "the run was interrupted mid-job: {counts:?}"
    );
    assert_eq!(
        store.get_job(1).await.unwrap().unwrap().status.as_str(),
        "cancelled"
    );
    let done_before = counts.done;

    let again = sparring(dir.path(), &["run", path.to_str().unwrap(), "--quiet"]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(text(&again.stdout).contains("(resumed)"));
    let after = store.item_counts(1).await.unwrap();
    assert_eq!(after.done, counts.total(), "every item done once");
    assert_eq!(after.pending + after.leased + after.failed, 0);
    assert!(after.done >= done_before);
    let stored = store.conversations_page(1, 0, 10_000).await.unwrap();
    assert_eq!(
        stored.len() as i64,
        after.done,
        "no conversation stored twice"
    );
}

#[tokio::test]
async fn a_job_whose_calls_all_fail_stops_itself_instead_of_failing_every_item() {
    let dir = tempfile::tempdir().unwrap();
    let spec = JobSpec {
        // The mock answers an unknown model with 404, like a real server: permanent.
        policy_model: "mock-policy-that-does-not-exist".into(),
        personas_per_scenario: 2,
        extra: "[circuit_breaker]\nwindow = 10\nmax_error_rate = 0.5\n".into(),
        ..JobSpec::default()
    };
    let (path, db) = write_job(dir.path(), &spec);
    let run = sparring(dir.path(), &["run", path.to_str().unwrap(), "--quiet"]);
    let out = text(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{out}\n{}", text(&run.stderr));
    assert!(
        out.contains("stopped by the circuit breaker: ")
            && out.contains(" of 10 consecutive items (in the order they started) failed"),
        "{out}"
    );
    assert!(
        out.contains("HTTP 404") && out.contains("model_not_found"),
        "the reason names the cause: {out}"
    );

    let store = sparring::store::open(&db).await.unwrap();
    let counts = store.item_counts(1).await.unwrap();
    assert!(
        counts.failed >= 5 && counts.failed <= 10 + 4,
        "stopped soon after tripping: {counts:?}"
    );
    assert!(
        counts.pending > 30,
        "the rest was left for later: {counts:?}"
    );
    assert_eq!(counts.leased, 0);
    assert_eq!(
        store.get_job(1).await.unwrap().unwrap().status.as_str(),
        "failed"
    );
    assert_eq!(
        store.job_summary(1).await.unwrap().mean_reward,
        None,
        "failures are never zero rewards"
    );
}

#[test]
fn a_reader_that_closes_the_pipe_ends_the_command_quietly_not_with_a_panic() {
    // `sparring validate … | head -0`: the reader is gone before sparring prints.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args(["validate", "quickstart.toml"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(141), "{stderr}");
}

/// A user's own folder holding a config, its scenarios and a persona, and no
/// templates: the config names none, so the built-in ones are used.
fn own_folder_job(home: &Path) -> std::path::PathBuf {
    common::first_scenarios(home, 2);
    std::fs::create_dir(home.join("personas")).unwrap();
    std::fs::copy(
        repo().join("personas/retired_teacher.toml"),
        home.join("personas/retired_teacher.toml"),
    )
    .unwrap();
    let job = home.join("job.toml");
    std::fs::write(
        &job,
        "name = \"mine\"\n\
         [endpoints.m]\nmock = true\nmodel = \"mock-policy\"\n\
         [endpoints.u]\nmock = true\nmodel = \"mock-user\"\n\
         [roles]\npolicy = \"m\"\nuser = \"u\"\n\
         [environment]\nname = \"builtin:retail\"\n\
         [dataset]\nscenarios = \"scenarios.jsonl\"\npersonas = \"personas\"\n",
    )
    .unwrap();
    job
}

#[test]
fn a_config_in_its_own_folder_runs_with_the_built_in_templates_from_any_working_directory() {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let job = own_folder_job(home.path());
    let job = job.to_str().unwrap();

    let validate = sparring(elsewhere.path(), &["validate", job]);
    assert!(
        validate.status.success(),
        "{}{}",
        text(&validate.stdout),
        text(&validate.stderr)
    );
    let run = sparring(elsewhere.path(), &["run", job, "--quiet"]);
    let out = text(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{out}{}", text(&run.stderr));
    assert!(out.contains("2 done, 0 failed"), "{out}");
    // The policy got the built-in system prompt.
    let show = sparring(elsewhere.path(), &["show", "1"]);
    let shown = text(&show.stdout);
    assert!(
        shown.contains("[SYSTEM] You are a customer service agent"),
        "{shown}"
    );
    assert!(!home.path().join("prompts").exists() && !elsewhere.path().join("prompts").exists());
}

#[test]
fn a_job_whose_every_item_fails_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let spec = JobSpec {
        // The mock answers an unknown model with 404, like a real server.
        policy_model: "mock-policy-that-does-not-exist".into(),
        scenarios: common::first_scenarios(dir.path(), 3),
        max_retries: 0,
        ..JobSpec::default()
    };
    let (path, _) = write_job(dir.path(), &spec);
    let run = sparring(dir.path(), &["run", path.to_str().unwrap(), "--quiet"]);
    let out = text(&run.stdout);
    assert!(
        out.contains("0 done, 3 failed"),
        "{out}{}",
        text(&run.stderr)
    );
    assert!(!out.contains("circuit breaker"), "{out}");
    assert_eq!(run.status.code(), Some(1), "{out}");
    assert!(
        out.contains("3 items failed; rerun with --retry-failed"),
        "{out}"
    );
}
