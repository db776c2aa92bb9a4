//! NeMo Gym resources servers as environments, against the real servers from
//! the nemo-gym wheel (`scripts/nemo-gym start workplace_assistant mcqa
//! example_multi_step calendar`), their shipped data, and NeMo Gym's own
//! pydantic models. A test whose server is not given is skipped, saying so:
//! `.ci/run` starts them and exports `SPARRING_NEMO_GYM_<SERVER>_URL`,
//! `SPARRING_NEMO_GYM_DIR` (the installed resources_servers folder) and
//! `SPARRING_NEMO_GYM_PYTHON` (the interpreter that has nemo_gym).
//! The bad-input stories need no NeMo Gym.

use crate::common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use common::{repo, sparring, text};
use serde_json::Value;

/// A running resources server and its shipped data folder.
struct Server {
    url: String,
    data: PathBuf,
}

fn server(name: &str, test: &str) -> Option<Server> {
    let var = format!("SPARRING_NEMO_GYM_{}_URL", name.to_uppercase());
    let (Ok(url), Ok(dir)) = (std::env::var(&var), std::env::var("SPARRING_NEMO_GYM_DIR")) else {
        println!(
            "SKIPPED: {test}: {var} or SPARRING_NEMO_GYM_DIR is not set; start the server with \
             `scripts/nemo-gym start {name}` and export its URL and `scripts/nemo-gym dir`"
        );
        return None;
    };
    Some(Server {
        url,
        data: Path::new(&dir).join(name).join("data"),
    })
}

pub(crate) fn python(test: &str) -> Option<String> {
    match std::env::var("SPARRING_NEMO_GYM_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            println!(
                "SKIPPED: {test}: SPARRING_NEMO_GYM_PYTHON is not set (the Python of \
                 .nemo-gym/venv, which has nemo_gym)"
            );
            None
        }
    }
}

/// A job config against a resources server, every path absolute.
fn job(dir: &Path, name: &str, base_url: &str, rows: &Path, extra: &str) -> PathBuf {
    let r = repo();
    let config = format!(
        r#"name = "{name}"
seed = 11
database = "sqlite://{db}"
concurrency = 4
max_turns = 30
{extra_top}
[endpoints.policy]
mock = true
model = "{policy}"

[endpoints.user]
mock = true
model = "mock-user"

[roles]
policy = "policy"
user = "user"

[user_simulator]
template = "{r}/prompts/user_simulator.tera"
{user_mode}
[policy]
template = "{r}/prompts/policies/default.tera"

[environment]
kind = "nemo_gym"
base_url = "{base_url}"
max_retries = 1
timeout_secs = 30
{environment_extra}

[dataset]
format = "nemo_gym"
rows = "{rows}"
{dataset_extra}
"#,
        db = dir.join(format!("{name}.db")).display(),
        r = r.display(),
        rows = rows.display(),
        extra_top = "",
        policy = extra_value(extra, "policy").unwrap_or("mock-policy"),
        user_mode = extra_value(extra, "mode")
            .map_or("mode = \"none\"".to_string(), |m| format!("mode = \"{m}\"")),
        environment_extra = extra
            .lines()
            .filter_map(|l| l.strip_prefix("env:"))
            .collect::<Vec<_>>()
            .join("\n"),
        dataset_extra = extra
            .lines()
            .filter(|l| {
                !l.starts_with("policy=") && !l.starts_with("mode=") && !l.starts_with("env:")
            })
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, config).unwrap();
    path
}

/// `policy=…` and `mode=…` lines of `extra` set those, `env:KEY = VALUE`
/// lines go to [environment]; the rest goes to [dataset].
fn extra_value<'a>(extra: &'a str, key: &str) -> Option<&'a str> {
    extra
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
}

fn run_ok(dir: &Path, config: &Path) -> String {
    let out = sparring(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "sparring run failed: {stdout}\n{}",
        text(&out.stderr)
    );
    stdout
}

fn export(dir: &Path, config: &Path, job: i64, format: &str) -> Vec<Value> {
    let db = config.with_extension("db");
    let out_path = dir.join(format!("export-{job}-{format}.jsonl"));
    let out = sparring(
        dir,
        &[
            "export",
            "--job",
            &job.to_string(),
            "--format",
            format,
            "--out",
            out_path.to_str().unwrap(),
            "--database",
            &format!("sqlite://{}", db.display()),
        ],
    );
    assert!(out.status.success(), "export failed: {}", text(&out.stderr));
    std::fs::read_to_string(&out_path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// NeMo Gym's own models must accept every line of a `nemo_gym` export.
fn validate_with_nemo_gym(python: &str, rollouts: &Path) -> String {
    let script = r#"
import json, sys
from nemo_gym.base_resources_server import BaseVerifyRequest, BaseVerifyResponse
n = 0
for line in open(sys.argv[1]):
    row = json.loads(line)
    BaseVerifyRequest.model_validate(row)
    BaseVerifyResponse.model_validate(row)
    n += 1
print(f"validated {n}")
"#;
    python_script(python, script, rollouts, "the export")
}

/// Run `script` with NeMo Gym's Python on `file`; its stdout. NeMo Gym's
/// models refusing `what` fails the test.
pub(crate) fn python_script(python: &str, script: &str, file: &Path, what: &str) -> String {
    let out = std::process::Command::new(python)
        .args(["-c", script, file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "NeMo Gym's pydantic models rejected {what}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

#[test]
fn shipped_rows_run_through_sparring_are_scored_by_nemo_gym_and_exported_as_its_rollouts() {
    let test =
        "shipped_rows_run_through_sparring_are_scored_by_nemo_gym_and_exported_as_its_rollouts";
    let (Some(workplace), Some(mcqa), Some(multi_step), Some(python)) = (
        server("workplace_assistant", test),
        server("mcqa", test),
        server("example_multi_step", test),
        python(test),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let jobs = [
        // ground_truth calls replayed; two samples so that some are flawed.
        (
            "workplace",
            &workplace,
            "samples_per_scenario = 2".to_string(),
            true,
        ),
        // The answers NeMo Gym recorded for the same rows.
        (
            "mcqa",
            &mcqa,
            format!(
                "replay = \"{}\"",
                mcqa.data.join("example_rollouts.jsonl").display()
            ),
            false,
        ),
        // The calls NeMo Gym recorded for the same rows (the rows have none).
        (
            "multi_step",
            &multi_step,
            format!(
                "replay = \"{}\"",
                multi_step.data.join("example_rollouts.jsonl").display()
            ),
            true,
        ),
    ];
    let mut rewards = Vec::new();
    for (name, server, extra, has_tools) in jobs {
        let config = job(
            d,
            name,
            &server.url,
            &server.data.join("example.jsonl"),
            &extra,
        );
        let stdout = run_ok(d, &config);
        assert!(stdout.contains("0 failed"), "{name}: {stdout}");
        let job_id = common::job_id_from(&stdout);

        let chats = export(d, &config, job_id, "openai");
        let rollouts = export(d, &config, job_id, "nemo_gym");
        assert!(!rollouts.is_empty(), "{name}: nothing exported");
        assert_eq!(chats.len(), rollouts.len(), "{name}");
        if has_tools {
            // Every conversation that earned 1 made its calls (a flawed one
            // may have left its only call out).
            for (chat, rollout) in chats.iter().zip(&rollouts) {
                let calls = chat["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|m| m.get("tool_calls").is_some())
                    .count();
                if rollout["reward"] == 1.0 {
                    assert!(calls > 0, "{name}: rewarded without tool calls: {chat}");
                }
            }
            assert!(
                chats
                    .iter()
                    .any(|c| c.to_string().contains("\"tool_calls\"")),
                "{name}: no tool calls stored"
            );
        }
        for rollout in &rollouts {
            // What only NeMo Gym's verify writes is there: the reply's own fields.
            assert!(rollout.get("mask_sample").is_some(), "{name}: {rollout}");
            match name {
                "mcqa" => assert!(rollout.get("extracted_answer").is_some()),
                "multi_step" => assert!(rollout.get("parsed_synonym_values").is_some()),
                _ => assert!(rollout.get("ground_truth").is_some()),
            }
            let output = rollout["response"]["output"].as_array().unwrap();
            assert!(!output.is_empty(), "{name}: an empty response");
            rewards.push(rollout["reward"].as_f64().unwrap());
        }
        let path = d.join(format!("export-{job_id}-nemo_gym.jsonl"));
        let said = validate_with_nemo_gym(&python, &path);
        assert_eq!(
            said.trim(),
            format!("validated {}", rollouts.len()),
            "{name}"
        );

        // Our own rollouts re-verify to the same rewards.
        let out = sparring(
            d,
            &[
                "verify",
                "--environment",
                config.to_str().unwrap(),
                "--rollouts",
                path.to_str().unwrap(),
            ],
        );
        let report = text(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {report}{}",
            text(&out.stderr)
        );
        let n = rollouts.len();
        assert!(
            report.contains(&format!("{n} of {n} re-verified rewards agree")),
            "{name}: {report}"
        );
    }
    assert!(
        rewards.iter().all(|r| *r == 0.0 || *r == 1.0),
        "{rewards:?}"
    );
    assert!(
        rewards.contains(&1.0),
        "no conversation earned 1: {rewards:?}"
    );
    assert!(
        rewards.contains(&0.0),
        "no conversation earned 0: {rewards:?}"
    );
}

#[test]
fn a_policy_made_to_err_gets_zero_from_nemo_gyms_verify() {
    let test = "a_policy_made_to_err_gets_zero_from_nemo_gyms_verify";
    let Some(workplace) = server("workplace_assistant", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rows = workplace.data.join("example.jsonl");
    let perfect = job(
        dir.path(),
        "perfect",
        &workplace.url,
        &rows,
        "policy=mock-policy+perfect",
    );
    let wrong = job(
        dir.path(),
        "wrong",
        &workplace.url,
        &rows,
        "policy=mock-policy+wrong",
    );
    for (config, reward) in [
        (perfect, "mean reward: 1.000"),
        (wrong, "mean reward: 0.000"),
    ] {
        let stdout = run_ok(dir.path(), &config);
        assert!(stdout.contains(reward), "{stdout}");
    }
}

#[test]
fn shipped_rollouts_are_reverified_and_the_agreement_is_printed() {
    let test = "shipped_rollouts_are_reverified_and_the_agreement_is_printed";
    let (Some(workplace), Some(mcqa), Some(multi_step), Some(calendar)) = (
        server("workplace_assistant", test),
        server("mcqa", test),
        server("example_multi_step", test),
        server("calendar", test),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // (server, agreeing, differing, cannot re-verify) for nemo-gym 0.7.0's data.
    let expected = [
        // The rollouts lack the rows' fields and no row has their input.
        (&workplace, "workplace", 0, 0, 5),
        // Rollout 3 was recorded as 0 with no answer extracted from
        // `\boxed{C: <option text>}`; 0.7.0's strict parser reads "C" there
        // (its docstring says so) and gives 1: the verifier changed since.
        (&mcqa, "mcqa", 4, 1, 0),
        (&multi_step, "multi_step", 5, 0, 0),
        (&calendar, "calendar", 5, 0, 0),
    ];
    for (server, name, agree, differ, cannot) in expected {
        let config = job(d, name, &server.url, &server.data.join("example.jsonl"), "");
        let rollouts = server.data.join("example_rollouts.jsonl");
        let out = sparring(
            d,
            &[
                "verify",
                "--environment",
                config.to_str().unwrap(),
                "--rollouts",
                rollouts.to_str().unwrap(),
            ],
        );
        let report = text(&out.stdout);
        println!("{name}:\n{report}");
        let verified = agree + differ;
        assert!(
            report.contains(&format!(
                "{agree} of {verified} re-verified rewards agree with the recorded ones (5 rollouts: \
                 {agree} agree, {differ} differ, {cannot} cannot be re-verified, 0 failed)"
            )),
            "{name}: {report}{}",
            text(&out.stderr)
        );
        assert_eq!(
            out.status.code(),
            Some(if differ > 0 { 1 } else { 0 }),
            "{name}"
        );
        if cannot > 0 {
            assert!(
                report.contains("cannot re-verify: the rollout lacks")
                    && report.contains("ground_truth"),
                "{report}"
            );
        }
    }
}

#[test]
fn a_multi_turn_calendar_run_with_the_simulated_user_is_stored() {
    let test = "a_multi_turn_calendar_run_with_the_simulated_user_is_stored";
    let Some(calendar) = server("calendar", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let extra = format!(
        "mode=llm\npersonas = \"{}\"\npersonas_per_scenario = 1\nreplay = \"{}\"",
        repo().join("personas").display(),
        calendar.data.join("example_rollouts.jsonl").display()
    );
    let config = job(
        d,
        "calendar",
        &calendar.url,
        &calendar.data.join("example.jsonl"),
        &extra,
    );
    let stdout = run_ok(d, &config);
    assert!(stdout.contains("5 done, 0 failed"), "{stdout}");
    assert!(stdout.contains("user_stop 5"), "{stdout}");
    let job_id = common::job_id_from(&stdout);
    let chats = export(d, &config, job_id, "openai");
    let rollouts = export(d, &config, job_id, "nemo_gym");
    assert_eq!(chats.len(), 5);
    for chat in &chats {
        let users = chat["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .count();
        assert!(users > 2, "the simulated user spoke more than once: {chat}");
    }
    // The history goes into the rollout's input, the last reply is its output.
    for rollout in &rollouts {
        let input = rollout["responses_create_params"]["input"]
            .as_array()
            .unwrap();
        assert!(input.len() > 2);
        assert_eq!(input.last().unwrap()["role"], "user");
        assert!(rollout.get("exp_cal_state").is_some());
    }
}

/// `sparring verify` of `rollouts` against `config`: its report and exit code.
fn reverify_report(dir: &Path, config: &Path, rollouts: &Path) -> (String, Option<i32>) {
    let out = sparring(
        dir,
        &[
            "verify",
            "--environment",
            config.to_str().unwrap(),
            "--rollouts",
            rollouts.to_str().unwrap(),
        ],
    );
    (
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
        out.status.code(),
    )
}

/// A config with nothing but `[environment]`: what `sparring verify` needs
/// when the rollouts carry every field their verifier reads.
fn environment_only(dir: &Path, name: &str, base_url: &str) -> PathBuf {
    let path = dir.join(format!("{name}-environment.toml"));
    std::fs::write(
        &path,
        format!("[environment]\nkind = \"nemo_gym\"\nbase_url = \"{base_url}\"\nmax_retries = 1\n"),
    )
    .unwrap();
    path
}

fn all_agree(n: usize) -> String {
    format!(
        "{n} of {n} re-verified rewards agree with the recorded ones ({n} rollouts: {n} agree, \
         0 differ, 0 cannot be re-verified, 0 failed)"
    )
}

#[test]
fn shipped_rollouts_reverify_5_of_5_with_the_request_built_as_nemo_gym_builds_it() {
    let test = "shipped_rollouts_reverify_5_of_5_with_the_request_built_as_nemo_gym_builds_it";
    let (Some(equivalence), Some(spartqa), Some(gpqa), Some(counter)) = (
        server("equivalence_rule", test),
        server("spartqa", test),
        server("gpqa_diamond", test),
        server("example_session_state_mgmt", test),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // equivalence_rule and spartqa build their reply as Reply(**request, field=…):
    // the recorded reply's own fields (equivalence_score; exact, parsed,
    // extracted, predicted_label) must not be sent back. gpqa_diamond's
    // rollouts lack agent_ref, uuid, metadata, options and grading_mode,
    // which its verify request model does not require. These rollouts carry
    // every field their verifiers read, so no [dataset] is needed.
    for (server, name) in [
        (&equivalence, "equivalence_rule"),
        (&spartqa, "spartqa"),
        (&gpqa, "gpqa_diamond"),
    ] {
        let config = environment_only(d, name, &server.url);
        let rollouts = server.data.join("example_rollouts.jsonl");
        let (report, code) = reverify_report(d, &config, &rollouts);
        println!("{name}:\n{report}");
        assert!(report.contains(&all_agree(5)), "{name}: {report}");
        assert_eq!(code, Some(0), "{name}: {report}");
    }
    // example_session_state_mgmt's verify compares the session's counter,
    // which the rollout's increment_counter calls built, with expected_count;
    // its rollouts lack initial_count and expected_count, which its rows have.
    let config = job(
        d,
        "counter",
        &counter.url,
        &counter.data.join("example.jsonl"),
        "",
    );
    let rollouts = counter.data.join("example_rollouts.jsonl");
    let (report, code) = reverify_report(d, &config, &rollouts);
    println!("example_session_state_mgmt:\n{report}");
    assert!(report.contains(&all_agree(5)), "{report}");
    assert_eq!(code, Some(0));
    assert_eq!(
        report.matches("calls replayed]").count(),
        5,
        "the rollouts' function calls were replayed before /verify: {report}"
    );
}

#[test]
fn sparrings_own_nemo_gym_exports_reverify_to_the_rewards_nemo_gym_gave_them() {
    let test = "sparrings_own_nemo_gym_exports_reverify_to_the_rewards_nemo_gym_gave_them";
    let (Some(equivalence), Some(spartqa), Some(counter), Some(python)) = (
        server("equivalence_rule", test),
        server("spartqa", test),
        server("example_session_state_mgmt", test),
        python(test),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (server, name) in [
        (&equivalence, "equivalence_rule"),
        (&spartqa, "spartqa"),
        (&counter, "counter"),
    ] {
        // The answers and calls NeMo Gym recorded for the same rows.
        let extra = format!(
            "policy=mock-policy+perfect\nreplay = \"{}\"",
            server.data.join("example_rollouts.jsonl").display()
        );
        let config = job(
            d,
            name,
            &server.url,
            &server.data.join("example.jsonl"),
            &extra,
        );
        let stdout = run_ok(d, &config);
        assert!(stdout.contains("5 done, 0 failed"), "{name}: {stdout}");
        let job_id = common::job_id_from(&stdout);
        let rollouts = export(d, &config, job_id, "nemo_gym");
        assert_eq!(rollouts.len(), 5, "{name}");
        let path = d.join(format!("export-{job_id}-nemo_gym.jsonl"));
        assert_eq!(validate_with_nemo_gym(&python, &path).trim(), "validated 5");
        let (report, code) = reverify_report(d, &config, &path);
        println!("{name}:\n{report}");
        assert!(report.contains(&all_agree(5)), "{name}: {report}");
        assert_eq!(code, Some(0), "{name}: {report}");
    }
}

#[test]
fn recorded_rollouts_used_as_rows_run_without_their_verify_output_sent_back() {
    let test = "recorded_rollouts_used_as_rows_run_without_their_verify_output_sent_back";
    let Some(equivalence) = server("equivalence_rule", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Each line carries reward and equivalence_score, which the server's
    // Reply(**request, equivalence_score=…) would get twice (HTTP 500).
    let rows = equivalence.data.join("example_rollouts.jsonl");
    let config = job(
        d,
        "rollouts-as-rows",
        &equivalence.url,
        &rows,
        "policy=mock-policy+perfect",
    );
    let stdout = run_ok(d, &config);
    assert!(stdout.contains("5 done, 0 failed"), "{stdout}");
    let rollouts = export(d, &config, common::job_id_from(&stdout), "nemo_gym");
    assert_eq!(rollouts.len(), 5);
    for rollout in &rollouts {
        // The mock answers each row's expected_answer, which exact scores 1
        // (the rows were recorded at 1, 0, 0, 0, 0).
        let scores = (&rollout["reward"], &rollout["equivalence_score"]);
        assert_eq!(scores, (&1.0.into(), &1.0.into()));
    }
}

#[test]
fn xlam_fc_calls_to_tools_without_endpoints_go_back_to_the_policy_and_are_verified() {
    let test = "xlam_fc_calls_to_tools_without_endpoints_go_back_to_the_policy_and_are_verified";
    let Some(xlam) = server("xlam_fc", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rows = xlam.data.join("example.jsonl");
    // The perfect policy makes each row's expected_answers calls; xlam_fc
    // serves none of them (404), as NeMo Gym's agent has it the reply is
    // the tool's output, and its verify compares the calls.
    let config = job(d, "xlam", &xlam.url, &rows, "policy=mock-policy+perfect");
    let stdout = run_ok(d, &config);
    assert!(stdout.contains("5 done, 0 failed"), "{stdout}");
    assert!(stdout.contains("conversations: 5"), "{stdout}");
    let job_id = common::job_id_from(&stdout);
    let rollouts = export(d, &config, job_id, "nemo_gym");
    assert_eq!(rollouts.len(), 5);
    for rollout in &rollouts {
        assert_eq!(rollout["reward"], 1.0, "{rollout}");
        assert_eq!(rollout["num_correct"], rollout["num_expected"], "{rollout}");
        let outputs: Vec<&Value> = rollout["response"]["output"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["type"] == "function_call_output")
            .collect();
        assert!(!outputs.is_empty(), "{rollout}");
        for output in outputs {
            assert!(
                output["output"].as_str().unwrap().contains("Not Found"),
                "the server's 404 reply is the tool's output: {output}"
            );
        }
    }
    // A policy that leaves a call out is scored 0 by NeMo Gym, and stored.
    let wrong = job(
        d,
        "xlam-wrong",
        &xlam.url,
        &rows,
        "policy=mock-policy+wrong",
    );
    let stdout = run_ok(d, &wrong);
    assert!(stdout.contains("5 done, 0 failed"), "{stdout}");
    assert!(stdout.contains("mean reward: 0.000"), "{stdout}");
}

/// The repository's NeMo Gym scripts in a folder of their own, sharing the
/// installed virtual environment but not the running servers: what they
/// start there they stop when dropped.
struct ScriptRoot {
    root: tempfile::TempDir,
}

impl ScriptRoot {
    fn new(python: &str) -> ScriptRoot {
        let root = tempfile::tempdir().unwrap();
        let scripts = root.path().join("scripts");
        std::fs::create_dir_all(&scripts).unwrap();
        for file in ["nemo-gym", "nemo_gym_server.py"] {
            std::fs::copy(repo().join("scripts").join(file), scripts.join(file)).unwrap();
        }
        let venv = Path::new(python).parent().unwrap().parent().unwrap();
        std::fs::create_dir_all(root.path().join(".nemo-gym")).unwrap();
        std::os::unix::fs::symlink(venv, root.path().join(".nemo-gym/venv")).unwrap();
        ScriptRoot { root }
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new(self.root.path().join("scripts/nemo-gym"))
            .args(args)
            .output()
            .unwrap()
    }
}

impl Drop for ScriptRoot {
    fn drop(&mut self) {
        let _ = self.run(&["stop"]);
    }
}

#[test]
fn the_start_script_passes_overrides_and_gymnasium_servers_are_refused_by_it_and_by_validate() {
    let test =
        "the_start_script_passes_overrides_and_gymnasium_servers_are_refused_by_it_and_by_validate";
    let (Some(python), Ok(dir)) = (python(test), std::env::var("SPARRING_NEMO_GYM_DIR")) else {
        return;
    };
    let servers = Path::new(&dir);
    let scripts = ScriptRoot::new(&python);
    let work = tempfile::tempdir().unwrap();
    let d = work.path();

    let out = scripts.run(&["start", "wordle"]);
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("wordle is a Gymnasium-style server (POST /reset and /step"),
        "{said}"
    );

    // Both started at once (each takes seconds to import NeMo Gym): a
    // Gymnasium server served anyway, and equivalence_rule with an override.
    let port = crate::common::free_port().to_string();
    let gym_port = std::iter::repeat_with(crate::common::free_port)
        .map(|p| p.to_string())
        .find(|p| *p != port)
        .unwrap();
    let spec = format!("equivalence_rule:{port}");
    let gym_spec = format!("blackjack:{gym_port}");
    let out = scripts.run(&[
        "start",
        "--allow-gymnasium",
        &spec,
        "grading_rule=seq_match",
        &gym_spec,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let url = format!("http://127.0.0.1:{port}");
    let gym_url = format!("http://127.0.0.1:{gym_port}");
    assert_eq!(
        text(&out.stdout).trim(),
        format!("equivalence_rule {url}\nblackjack {gym_url}")
    );

    // FIELD=VALUE reached the server's config: seq_match scores a near miss
    // between 0 and 1, where the default (exact) gives the recorded 0.
    let out = scripts.run(&["start", &spec]);
    assert_eq!(out.status.code(), Some(1), "other overrides: not restarted");
    assert!(text(&out.stderr).contains("with other overrides (grading_rule=seq_match)"));
    let shipped = servers.join("equivalence_rule/data/example_rollouts.jsonl");
    let first = std::fs::read_to_string(shipped).unwrap();
    let mut rollout: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    let expected = rollout["expected_answer"].as_str().unwrap().to_string();
    let near_miss = format!("{expected} and a few more words");
    for item in rollout["response"]["output"].as_array_mut().unwrap() {
        if item["type"] == "message" {
            item["content"] =
                serde_json::json!([{"type": "output_text", "text": near_miss, "annotations": []}]);
        }
    }
    rollout["reward"] = serde_json::json!(0.0);
    let rollouts = d.join("near-miss.jsonl");
    std::fs::write(&rollouts, format!("{rollout}\n")).unwrap();
    let config = environment_only(d, "seq-match", &url);
    let (report, code) = reverify_report(d, &config, &rollouts);
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains("differs: recorded 0, verify now gives 0."),
        "seq_match gives a share: {report}"
    );

    // Served anyway, a Gymnasium server is refused by validate (and verify).
    let config = job(
        d,
        "blackjack",
        &gym_url,
        &servers.join("blackjack/data/example.jsonl"),
        "",
    );
    let out = sparring(d, &["validate", config.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("speaks NeMo Gym's Gymnasium protocol (POST /reset and /step"),
        "{stderr}"
    );
    assert!(!d.join("blackjack.db").exists(), "nothing was created");
    let rollouts = servers.join("blackjack/data/example_rollouts.jsonl");
    let (report, code) = reverify_report(d, &config, &rollouts);
    assert_eq!(code, Some(2), "{report}");
    assert!(report.contains("Gymnasium protocol"), "{report}");
}

// ---- bad input: clear errors or classified failures, never a reward of 0 ----

#[test]
fn a_row_without_responses_create_params_is_refused_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let rows = dir.path().join("rows.jsonl");
    std::fs::write(
        &rows,
        "{\"responses_create_params\": {\"input\": \"hi\"}}\n{\"expected_answer\": \"B\"}\n",
    )
    .unwrap();
    let config = job(dir.path(), "bad-row", "http://127.0.0.1:9", &rows, "");
    let out = sparring(dir.path(), &["validate", config.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("rows.jsonl: line 2: has no `responses_create_params`"),
        "{stderr}"
    );
}

#[test]
fn an_unknown_on_missing_tool_is_refused_naming_the_field_and_the_choices() {
    let dir = tempfile::tempdir().unwrap();
    let rows = one_row_with_tool(dir.path(), "lookup");
    let config = job(
        dir.path(),
        "bad-missing-tool",
        "http://127.0.0.1:9",
        &rows,
        "env:on_missing_tool = \"sometimes\"",
    );
    let out = sparring(dir.path(), &["validate", config.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("sometimes")
            && stderr.contains("`output`")
            && stderr.contains("`env_error`"),
        "{stderr}"
    );
}

#[test]
fn verify_without_a_nemo_gym_environment_is_refused_before_reading_rollouts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = d.join("verify.toml");
    std::fs::write(&config, "[dataset]\nformat = \"nemo_gym\"\n").unwrap();
    let (report, code) = reverify_report(d, &config, &d.join("missing.jsonl"));
    assert_eq!(code, Some(2), "{report}");
    assert!(
        report.contains("verify.toml: environment: is missing; re-verifying rollouts needs"),
        "{report}"
    );
}

/// The stored error of the (one) failed item of the job in `db`.
async fn item_error(db: &Path) -> String {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let (error,): (String,) =
        sqlx::query_as("SELECT last_error FROM items WHERE status = 'failed'")
            .fetch_one(&pool)
            .await
            .unwrap();
    error
}

/// Run a one-row job: it must fail its item as an environment error saying
/// `expected`, and store no conversation (so no reward at all).
async fn fails_as_env_error(dir: &Path, config: &Path, why: &str, expected: &str) {
    let out = sparring(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(
        stdout.contains("0 done, 1 failed"),
        "{why}: {stdout}{stderr}"
    );
    assert!(stdout.contains("conversations: 0"), "{why}: {stdout}");
    let job_id = common::job_id_from(&stdout);
    let db = config.with_extension("db");
    let error = item_error(&db).await;
    assert!(
        error.starts_with("env_error: "),
        "{why}: the failure is classified: {error}"
    );
    assert!(error.contains(expected), "{why}: {error}");
    let out = sparring(
        dir,
        &[
            "export",
            "--job",
            &job_id.to_string(),
            "--format",
            "nemo_gym",
            "--out",
            dir.join("none.jsonl").to_str().unwrap(),
            "--database",
            &format!("sqlite://{}", db.display()),
        ],
    );
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(dir.join("none.jsonl")).unwrap(), "");
}

fn one_row_with_tool(dir: &Path, tool: &str) -> PathBuf {
    let rows = dir.join("row.jsonl");
    let row = serde_json::json!({
        "id": 1,
        "responses_create_params": {
            "input": [{"role": "user", "content": "use the tool"}],
            "tools": [{"type": "function", "name": tool, "parameters": {"type": "object", "properties": {}}, "strict": false}]
        },
        "ground_truth": [{"name": tool, "arguments": "{}"}]
    });
    std::fs::write(&rows, format!("{row}\n")).unwrap();
    rows
}

#[tokio::test]
async fn with_on_missing_tool_env_error_a_tool_the_server_does_not_have_fails_the_item() {
    let test = "with_on_missing_tool_env_error_a_tool_the_server_does_not_have_fails_the_item";
    let Some(multi_step) = server("example_multi_step", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rows = one_row_with_tool(dir.path(), "no_such_tool");
    let config = job(
        dir.path(),
        "no-tool",
        &multi_step.url,
        &rows,
        "policy=mock-policy+perfect\nenv:on_missing_tool = \"env_error\"",
    );
    fails_as_env_error(
        dir.path(),
        &config,
        "a 404 for a tool the row offers",
        "has no tool 'no_such_tool' (HTTP 404 on POST /no_such_tool)",
    )
    .await;
}

/// A stand-in resources server whose /verify answers 200 with HTML; every
/// other path answers `{}`. Serves until the test ends.
fn html_verify_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Ok(n) = stream.read(&mut chunk) else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let head_end = buf.windows(4).position(|w| w == b"\r\n\r\n");
                    let Some(head_end) = head_end else { continue };
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    if buf.len() < head_end + 4 + length {
                        continue;
                    }
                    let body = if head.starts_with("post /verify") {
                        "<html>Internal proxy page</html>"
                    } else {
                        "{}"
                    };
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(reply.as_bytes());
                    buf.drain(..head_end + 4 + length);
                }
            });
        }
    });
    url
}

#[tokio::test]
async fn a_verify_that_answers_non_json_fails_the_item_as_an_environment_error() {
    let dir = tempfile::tempdir().unwrap();
    let rows = one_row_with_tool(dir.path(), "lookup");
    let url = html_verify_server();
    let config = job(
        dir.path(),
        "html-verify",
        &url,
        &rows,
        "policy=mock-policy+perfect",
    );
    fails_as_env_error(
        dir.path(),
        &config,
        "a verify reply that is not JSON",
        "POST /verify answered HTTP 200 with a body that is not JSON (the reply is logged",
    )
    .await;
    // A submitted job may name any URL: its reply is never read back.
    let error = item_error(&config.with_extension("db")).await;
    assert!(!error.contains("Internal proxy page"), "{error}");
}
