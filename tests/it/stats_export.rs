//! `sparring stats` and the judge-aware exports, over a store filled by hand
//! through the `Store` trait (SQLite always; Postgres when
//! `SPARRING_TEST_POSTGRES` names a server), checked against numbers worked
//! out by hand below.
//!
//! The fixture: job A ("policy one") and job B ("policy two") with the same
//! seven items. Job A's rewards by scenario: s1 → 1, 1, 0; s2 → 1, 1;
//! s3 → 0.5 and one unscored conversation (the simulator broke it).
//! Judges of job A's conversations:
//! - `pref`, pairwise A (job A) vs B (job B):
//!   a1 A (consistent), a2 B (consistent), a3 tie (inconsistent: the judge
//!   preferred whichever came first), a4 tie (consistent), a5 A (no swap
//!   check), a6 unparseable, a7 failed.
//! - `helpful`, pointwise: a1 8, a2 6 (an older config said 10), a3 9, a4 4,
//!   a5 7, a6 unparseable.
//! - `fidelity`, pass/fail: a1 1, a3 0, a5 1; and b5 (job B) 0.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use sparring::judge::aggregate::win_rate;
use sparring::judge::Preference;
use sparring::report::{BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED};
use sparring::store::{
    self, ItemRow, NewConversation, NewItem, NewJob, NewJudgeCall, NewJudgment, NewMessage, Store,
};

use common::{databases, sparring, text, unique_name};

struct Fixture {
    url: String,
    job_a: i64,
    /// A job whose stored config names a NeMo Gym environment.
    gym_job: i64,
    /// Conversation ids of jobs A and B, item 1 first.
    a: Vec<i64>,
    b: Vec<i64>,
}

const ITEMS: [(&str, i64); 7] = [
    ("s1", 0),
    ("s1", 1),
    ("s1", 2),
    ("s2", 0),
    ("s2", 1),
    ("s3", 0),
    ("s3", 1),
];
const REWARDS_A: [Option<f64>; 7] = [
    Some(1.0),
    Some(1.0),
    Some(0.0),
    Some(1.0),
    Some(1.0),
    Some(0.5),
    None,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_and_judge_aware_exports_match_hand_computed_values() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "stats_export on Postgres") {
        let url = database
            .unwrap_or_else(|| format!("sqlite://{}", dir.path().join("stats.db").display()));
        println!("database: {url}");
        let fixture = fill(&url).await;
        stats_report_matches_hand_computed_values(dir.path(), &fixture);
        stats_text_report_says_n_a_where_nothing_counts(dir.path(), &fixture);
        min_judge_keeps_only_conversations_the_judge_scored_high_enough(dir.path(), &fixture);
        dpo_rows_come_only_from_consistent_non_tie_verdicts_with_the_winner_chosen(
            dir.path(),
            &fixture,
        );
        dpo_pairs_with_a_flagged_conversation_on_either_side_are_left_out(dir.path(), &fixture);
        malformed_flags_and_unknown_judges_say_what_is_expected(dir.path(), &fixture);
        the_service_refuses_what_the_cli_refuses_with_the_same_words(&fixture).await;
        a_kill_between_the_renames_never_leaves_files_that_pass_their_checksums_mixed(
            dir.path(),
            &fixture,
        );
    }
}

// ----------------------------------------------------------------- chapters

fn stats_report_matches_hand_computed_values(dir: &Path, f: &Fixture) {
    let report = run_json(
        dir,
        &[
            "stats",
            "--job",
            &f.job_a.to_string(),
            "--json",
            "--k",
            "1,2,4",
        ],
        &f.url,
    );
    let c = &report["conversations"];
    assert_eq!(c["total"], 7);
    assert_eq!(c["scored"], 6);
    // (1 + 1 + 0 + 1 + 1 + 0.5) / 6 = 4.5 / 6 = 0.75
    assert_close(&c["reward"]["mean"], 0.75);
    assert_eq!(c["reward"]["n"], 6);

    // Judge usage, per judge: every stored call took 10 + 2 tokens and 5 ms;
    // the fixture's judges have no priced endpoint, so the cost is unknown.
    let usage = report["usage"].as_array().unwrap();
    let pref = usage
        .iter()
        .find(|r| r["role"] == "judge" && r["judge"] == "pref")
        .unwrap_or_else(|| panic!("no judge pref in {usage:?}"));
    let calls = pref["calls"].as_i64().unwrap();
    assert!(calls > 0);
    assert_eq!(pref["prompt_tokens"], 10 * calls);
    assert_eq!(pref["completion_tokens"], 2 * calls);
    assert_eq!(pref["latency"], json!({"p50": 5, "p95": 5, "p99": 5}));
    assert_eq!(pref["cost"], "unknown");

    // pass^k over scored conversations; success = reward 1:
    //   s1: n 3, c 2;  s2: n 2, c 2;  s3: n 1, c 0 (0.5 is not full reward).
    // k = 1: (2/3 + 2/2 + 0/1) / 3 = 5/9.
    // k = 2: s3 has 1 trial and is left out:
    //        (C(2,2)/C(3,2) + C(2,2)/C(2,2)) / 2 = (1/3 + 1) / 2 = 2/3.
    // k = 4: no scenario has 4 trials: undefined (null), over 0 scenarios.
    let values = report["pass_hat_k"]["values"].as_array().unwrap();
    assert_eq!(values[0]["k"], 1);
    assert_close(&values[0]["value"], 5.0 / 9.0);
    assert_eq!(values[0]["scenarios"], 3);
    assert_eq!(values[1]["k"], 2);
    assert_close(&values[1]["value"], 2.0 / 3.0);
    assert_eq!(values[1]["scenarios"], 2);
    assert_eq!(values[2]["k"], 4);
    assert_eq!(values[2]["value"], Value::Null);
    assert_eq!(values[2]["scenarios"], 0);

    let judges = report["judges"].as_array().unwrap();
    let judge = |name: &str| {
        judges
            .iter()
            .find(|j| j["judge"] == name)
            .unwrap_or_else(|| panic!("no judge {name} in {report:#}"))
    };

    let pref = judge("pref");
    assert_eq!(
        (&pref["ok"], &pref["unparseable"], &pref["failed"]),
        (&json!(5), &json!(1), &json!(1))
    );
    let p = &pref["pairwise"];
    // ok verdicts: A, B, tie, tie, A → 2 wins, 2 ties, 1 loss;
    // win rate (2 + 2 · 0.5) / 5 = 0.6; tie rate 2/5.
    assert_eq!(
        p["win_rate"]["counts"],
        json!({"wins": 2, "ties": 2, "losses": 1})
    );
    assert_close(&p["win_rate"]["rate"], 0.6);
    assert_close(&p["tie_rate"], 0.4);
    // The interval is the library's bootstrap of the same five verdicts.
    use Preference::{Tie, A, B};
    let expected = win_rate(&[A, B, Tie, Tie, A], BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED).unwrap();
    let ci = p["win_rate"]["ci95"].as_array().unwrap();
    assert_close(&ci[0], expected.ci95.0);
    assert_close(&ci[1], expected.ci95.1);
    assert!(expected.ci95.0 < 0.6 && 0.6 < expected.ci95.1);
    // Swap-checked: a1, a2, a3, a4 (a5 was not); a3's orders disagreed → 3/4.
    assert_eq!(
        (&p["consistent"], &p["swap_checked"]),
        (&json!(3), &json!(4))
    );
    assert_close(&p["position_consistency"], 0.75);
    // Calls of ok judgments (own order: "A" = shown first), ties left out:
    //   a1 ab A (first), ba B (second); a2 ab B (second), ba A (first);
    //   a3 ab A (first), ba A (first); a4 ties; a5 ab A (first).
    // 5 of 7 decided calls chose the first answer. The ok call behind the
    // unparseable judgment a6 does not count.
    assert_eq!(
        (&p["first_position_wins"], &p["decided_calls"]),
        (&json!(5), &json!(7))
    );
    assert_close(&p["first_position_rate"], 5.0 / 7.0);

    let helpful = judge("helpful");
    // The newest judgment of a2 (6) replaces the older config's 10:
    // (8 + 6 + 9 + 4 + 7) / 5 = 6.8.
    assert_eq!(
        (&helpful["ok"], &helpful["unparseable"]),
        (&json!(5), &json!(1))
    );
    assert_close(&helpful["pointwise"]["score"]["mean"], 6.8);
    assert_eq!(helpful["pointwise"]["pass_rate"], Value::Null);
    assert_eq!(helpful["pairwise"], Value::Null);

    let fidelity = judge("fidelity");
    // 1, 0, 1 → 2 of 3 passed (b5's judgment is of job B).
    // Its interval is Wilson's: inside [0, 1] (2 of 3: [0.208, 0.939]).
    let pass = &fidelity["pointwise"]["pass_rate"];
    assert_eq!((&pass["passed"], &pass["judged"]), (&json!(2), &json!(3)));
    assert_close(&pass["rate"], 2.0 / 3.0);
    let (lo, hi) = sparring::report::interval::wilson(2, 3).unwrap();
    assert_close(&pass["ci95"][0], lo);
    assert_close(&pass["ci95"][1], hi);
    assert!((lo - 0.2077).abs() < 1e-3 && (hi - 0.9385).abs() < 1e-3);
    // Rewards 1, 1, 0, 1, 1, 0.5 are not all 0 or 1: a normal interval
    // clamped to [0, 1], which the report names.
    assert_eq!(c["reward"]["ci_method"], "normal_clamped");
    let hi = c["reward"]["ci95"][1].as_f64().unwrap();
    assert!(hi <= 1.0, "{hi}");
}

fn stats_text_report_says_n_a_where_nothing_counts(dir: &Path, f: &Fixture) {
    let out = cli(dir, &["stats", "--job", &f.job_a.to_string()], &f.url);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    for expected in [
        "Conversations",
        "mean reward",
        "Reward components",
        "Terminations",
        "pass^k per scenario",
        "win rate of A",
        "position consistency",
        "first-position rate",
        "pass rate",
    ] {
        assert!(report.contains(expected), "no '{expected}' in\n{report}");
    }
    let k4: Vec<&str> = report
        .lines()
        .find(|l| l.trim_start().starts_with("4 "))
        .unwrap_or_else(|| panic!("no k = 4 row in\n{report}"))
        .split_whitespace()
        .collect();
    assert_eq!(k4, vec!["4", "n/a", "0"], "{report}");
    let pref = report
        .lines()
        .find(|l| l.trim_start().starts_with("pref "))
        .unwrap();
    assert_eq!(
        pref.split_whitespace().collect::<Vec<_>>(),
        vec!["pref", "5", "1", "1"]
    );
}

fn min_judge_keeps_only_conversations_the_judge_scored_high_enough(dir: &Path, f: &Fixture) {
    // helpful ≥ 7: a1 (8), a3 (9), a5 (7). Left out: a2 (6, though an older
    // config said 10), a4 (4), a6 (unparseable: no ok judgment), a7 (not scored).
    let rows = export(dir, f, "best.jsonl", &["--min-judge", "helpful=7"]);
    assert_eq!(ids_in_openai_rows(&rows), vec![1, 3, 5]);
    // And not failed by the fidelity judge: a3 is flagged.
    let rows = export(
        dir,
        f,
        "best_faithful.jsonl",
        &["--min-judge", "helpful=7", "--drop-flagged", "fidelity"],
    );
    assert_eq!(ids_in_openai_rows(&rows), vec![1, 5]);
    // Two judges must both hold.
    let rows = export(
        dir,
        f,
        "both.jsonl",
        &["--min-judge", "helpful=7", "--min-judge", "fidelity=1"],
    );
    assert_eq!(ids_in_openai_rows(&rows), vec![1, 5]);
}

fn dpo_rows_come_only_from_consistent_non_tie_verdicts_with_the_winner_chosen(
    dir: &Path,
    f: &Fixture,
) {
    let out_path = dir.join("pairs.jsonl");
    let out = cli(
        dir,
        &[
            "export",
            "--job",
            &f.job_a.to_string(),
            "--format",
            "dpo",
            "--judge",
            "pref",
            "--dpo-shape",
            "trajectory",
            "--out",
            out_path.to_str().unwrap(),
        ],
        &f.url,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("wrote 3 DPO pairs (trajectory shape)")
            && said.contains("from 7 judgments")
            && said.contains("skipped 4")
            && said.contains("1 inconsistent")
            && said.contains("1 ties")
            && said.contains("2 unparseable or failed"),
        "{said}"
    );
    let rows = read_rows(&out_path);
    // a1: A won; a2: B won; a5: A won (not swap-checked). a3 (inconsistent)
    // and a4 (tie) give no row, nor do a6 and a7 (no verdict).
    let winners: Vec<(i64, i64)> = rows
        .iter()
        .map(|r| {
            (
                r["metadata"]["chosen_conversation"].as_i64().unwrap(),
                r["metadata"]["rejected_conversation"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        winners,
        vec![(f.a[0], f.b[0]), (f.b[1], f.a[1]), (f.a[4], f.b[4])]
    );
    // Messages in the hf shape, as the turn shape's: every key on every
    // message, arguments as objects.
    let hf = |role: &str, content: Value, calls: Value, call_id: Value| json!({"role": role, "content": content, "tool_calls": calls, "tool_call_id": call_id});
    for (row, n) in rows.iter().zip([1, 2, 5]) {
        // The prompt is what both begin with: the system prompt and the
        // first user message.
        assert_eq!(
            row["prompt"],
            json!([
                hf(
                    "system",
                    json!("You are a retail agent."),
                    Value::Null,
                    Value::Null
                ),
                hf(
                    "user",
                    json!(format!("Hello, I need a refund for order #{n}.")),
                    Value::Null,
                    Value::Null
                ),
            ])
        );
        assert_eq!(row["metadata"]["judge"], "pref");
        assert_eq!(row["metadata"]["sample"], ITEMS[n - 1].1);
        assert_eq!(row["metadata"]["scenario"], ITEMS[n - 1].0);
    }
    // Job A's policy looks the order up with a tool, then refunds; job B's
    // declines. The winner's rest is chosen, tool call and tool result included.
    let policy_one = |n: usize| {
        let call = json!([{
            "id": format!("call_{n}"), "type": "function",
            "function": {"name": "get_order", "arguments": {"order_id": format!("#{n}")}}
        }]);
        json!([
            hf("assistant", Value::Null, call, Value::Null),
            hf(
                "tool",
                json!("{\"status\":\"delivered\"}"),
                Value::Null,
                json!(format!("call_{n}"))
            ),
            hf(
                "assistant",
                json!(format!("Order #{n} is refunded.")),
                Value::Null,
                Value::Null
            ),
        ])
    };
    let policy_two = |n: usize| {
        json!([hf(
            "assistant",
            json!(format!("Sorry, I cannot refund order #{n}.")),
            Value::Null,
            Value::Null
        )])
    };
    assert_eq!(rows[0]["chosen"], policy_one(1));
    assert_eq!(rows[0]["rejected"], policy_two(1));
    assert_eq!(rows[1]["chosen"], policy_two(2));
    assert_eq!(rows[1]["rejected"], policy_one(2));
    assert_eq!(rows[2]["chosen"], policy_one(5));
    assert_eq!(rows[0]["tools"][0]["function"]["name"], "get_order");

    // The turn shape (the default): the same pairs, each side only the first
    // assistant turn where they differ, in the hf shape (object arguments,
    // uniform keys).
    let turn_path = dir.join("turns.jsonl");
    let out = cli(
        dir,
        &[
            "export",
            "--job",
            &f.job_a.to_string(),
            "--format",
            "dpo",
            "--judge",
            "pref",
            "--out",
            turn_path.to_str().unwrap(),
        ],
        &f.url,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("wrote 3 DPO pairs (turn shape)"));
    let turns = read_rows(&turn_path);
    let m = |role: &str, content: Value, calls: Value| json!({"role": role, "content": content, "tool_calls": calls, "tool_call_id": null});
    let lookup = |n: usize| {
        json!([m(
            "assistant",
            Value::Null,
            json!([{
                "id": format!("call_{n}"), "type": "function",
                "function": {"name": "get_order", "arguments": {"order_id": format!("#{n}")}}
            }])
        )])
    };
    let decline = |n: usize| {
        json!([m(
            "assistant",
            json!(format!("Sorry, I cannot refund order #{n}.")),
            Value::Null
        )])
    };
    assert_eq!(
        turns[0]["prompt"][1],
        m(
            "user",
            json!("Hello, I need a refund for order #1."),
            Value::Null
        )
    );
    assert_eq!(turns[0]["prompt"].as_array().unwrap().len(), 2);
    assert_eq!(
        (&turns[0]["chosen"], &turns[0]["rejected"]),
        (&lookup(1), &decline(1))
    );
    assert_eq!(
        (&turns[1]["chosen"], &turns[1]["rejected"]),
        (&decline(2), &lookup(2))
    );
    assert_eq!(turns[2]["metadata"]["shape"], "turn");
}

fn dpo_pairs_with_a_flagged_conversation_on_either_side_are_left_out(dir: &Path, f: &Fixture) {
    // b5, job B's side of the a5 pair, is flagged by the fidelity judge.
    let rows = export(
        dir,
        f,
        "pairs_faithful.jsonl",
        &[
            "--format",
            "dpo",
            "--judge",
            "pref",
            "--drop-flagged",
            "fidelity",
        ],
    );
    let chosen: Vec<i64> = rows
        .iter()
        .map(|r| r["metadata"]["chosen_conversation"].as_i64().unwrap())
        .collect();
    assert_eq!(chosen, vec![f.a[0], f.b[1]]);
}

fn malformed_flags_and_unknown_judges_say_what_is_expected(dir: &Path, f: &Fixture) {
    let job = f.job_a.to_string();
    let out_path = dir.join("never.jsonl");
    let out_file = out_path.to_str().unwrap();
    for bad in ["helpful", "helpful=high", "=7"] {
        let out = cli(
            dir,
            &[
                "export",
                "--job",
                &job,
                "--out",
                out_file,
                "--min-judge",
                bad,
            ],
            &f.url,
        );
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(err.contains("expected NAME=SCORE"), "{bad}: {err}");
    }
    let out = cli(
        dir,
        &[
            "export", "--job", &job, "--out", out_file, "--format", "dpo",
        ],
        &f.url,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--format dpo needs --judge"));
    let out = cli(
        dir,
        &[
            "export", "--job", &job, "--out", out_file, "--format", "dpo", "--judge", "nobody",
        ],
        &f.url,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("no judgments by judge 'nobody'") && err.contains("fidelity, helpful, pref"),
        "{err}"
    );
    let out = cli(
        dir,
        &[
            "export",
            "--job",
            &job,
            "--out",
            out_file,
            "--min-judge",
            "helpfull=7",
        ],
        &f.url,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("no judgments by 'helpfull'") && err.contains("fidelity, helpful, pref"),
        "{err}"
    );
    for (args, says) in refused_exports(f) {
        let mut all = vec!["export", "--job", &job, "--out", out_file];
        all.extend(args.iter().map(String::as_str));
        let out = cli(dir, &all, &f.url);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        for said in says {
            assert!(err.contains(said.as_str()), "{args:?}: {said} not in {err}");
        }
    }
    assert!(!out_path.exists() && !dir.join("never.jsonl.partial").exists());
    let out = cli(dir, &["stats", "--job", "999999999"], &f.url);
    assert_eq!(out.status.code(), Some(3), "not found");
    let out = cli(dir, &["stats", "--job", &job, "--k", "0"], &f.url);
    assert_eq!(out.status.code(), Some(2));
}

/// Exports of job A that are invalid input: (flags, what the refusal says).
/// `--format nemo_gym` of a job that is not a NeMo Gym job; a DPO export of
/// a pointwise judge.
fn refused_exports(f: &Fixture) -> Vec<(Vec<String>, Vec<String>)> {
    let strings = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        (
            strings(&["--format", "nemo_gym"]),
            vec![
                format!("job {} is not a NeMo Gym job", f.job_a),
                format!("NeMo Gym jobs in this database: {}", f.gym_job),
            ],
        ),
        (
            strings(&["--format", "dpo", "--judge", "helpful"]),
            strings(&[
                "judge 'helpful' is not pairwise",
                "pointwise",
                "pairwise judges with judgments there: pref",
            ]),
        ),
    ]
}

async fn the_service_refuses_what_the_cli_refuses_with_the_same_words(f: &Fixture) {
    let service = common::Service::over(&f.url, None, tempfile::tempdir().unwrap()).await;
    for (args, says) in refused_exports(f) {
        let query: Vec<String> = args
            .chunks(2)
            .map(|kv| format!("{}={}", kv[0].trim_start_matches("--"), kv[1]))
            .collect();
        let path = format!("/v1/jobs/{}/export?{}", f.job_a, query.join("&"));
        let response = service.get(&path).send().await.unwrap();
        let status = response.status().as_u16();
        let body = response.text().await.unwrap();
        assert_eq!(status, 422, "{path}: {body}");
        for said in says {
            assert!(body.contains(&said), "{path}: {said} not in {body}");
        }
    }
    let gym = format!("/v1/jobs/{}/export?format=nemo_gym", f.gym_job);
    assert_eq!(service.get(&gym).send().await.unwrap().status(), 200);
}

/// The files of an openai export split in two (each side with its metadata
/// sidecar), and its manifest, renamed last.
const SPLIT_FILES: [&str; 5] = [
    "data.train.jsonl",
    "data.train.metadata.jsonl",
    "data.validation.jsonl",
    "data.validation.metadata.jsonl",
    "data.jsonl.sha256",
];

/// An openai export of job A split by scenario into `folder`, the new
/// (every scored conversation) or the old one (`--min-reward 1`); with
/// `abort_after`, the process aborts (no clean-up, as a SIGKILL) after that
/// many renames. Whether it exited 0.
fn split_export(f: &Fixture, folder: &Path, old: bool, abort_after: Option<usize>) -> bool {
    let out = folder.join("data.jsonl");
    let job = f.job_a.to_string();
    let mut args = vec![
        "export",
        "--job",
        &job,
        "--format",
        "openai",
        "--split",
        "0.5",
        "--out",
        out.to_str().unwrap(),
        "--database",
        &f.url,
    ];
    if old {
        args.extend(["--min-reward", "1"]);
    }
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_sparring"));
    command.args(&args).current_dir(folder);
    if let Some(n) = abort_after {
        command.env("SPARRING_TEST_ABORT_AFTER_RENAMES", n.to_string());
    }
    command.output().unwrap().status.success()
}

/// The files of [`SPLIT_FILES`] in `folder` (`None` where missing).
fn split_files(folder: &Path) -> Vec<Option<Vec<u8>>> {
    SPLIT_FILES
        .iter()
        .map(|name| std::fs::read(folder.join(name)).ok())
        .collect()
}

/// What a user runs: `sha256sum -c` over the manifest, in its folder.
fn checksums_pass(folder: &Path) -> bool {
    std::process::Command::new("sha256sum")
        .args(["-c", "--quiet", "data.jsonl.sha256"])
        .current_dir(folder)
        .output()
        .unwrap()
        .status
        .success()
}

fn a_kill_between_the_renames_never_leaves_files_that_pass_their_checksums_mixed(
    dir: &Path,
    f: &Fixture,
) {
    let root = tempfile::tempdir_in(dir).unwrap();
    let folder = |name: &str| {
        let path = root.path().join(name);
        std::fs::create_dir_all(&path).unwrap();
        path
    };
    let (old_dir, new_dir) = (folder("old"), folder("new"));
    assert!(split_export(f, &old_dir, true, None) && split_export(f, &new_dir, false, None));
    assert!(checksums_pass(&old_dir) && checksums_pass(&new_dir));
    let (old, new) = (split_files(&old_dir), split_files(&new_dir));
    assert_ne!(old[0], new[0], "the two exports differ");
    let mut mixed_states = 0;
    for renames in 1..=SPLIT_FILES.len() {
        // Over an old export, and where there was none.
        for over_old in [true, false] {
            let here = folder(&format!("kill-{renames}-{over_old}"));
            if over_old {
                assert!(split_export(f, &here, true, None));
            }
            assert!(!split_export(f, &here, false, Some(renames)), "aborted");
            let left = split_files(&here);
            let data = |files: &[Option<Vec<u8>>]| files[..4].to_vec();
            let whole = data(&left) == data(&new) || (over_old && data(&left) == data(&old));
            mixed_states += usize::from(!whole);
            // Mixed files never pass; whole ones pass once their manifest is
            // in place (the last rename).
            let pass = checksums_pass(&here);
            assert!(
                !pass || whole,
                "after {renames} renames (over an old export: {over_old}): mixed files pass"
            );
            if renames == SPLIT_FILES.len() {
                assert!(pass && left == new, "a finished export passes");
            }
        }
    }
    assert!(
        mixed_states >= 4,
        "the kills left mixed files: {mixed_states}"
    );
}

// ----------------------------------------------------------------- fixture

async fn fill(url: &str) -> Fixture {
    let store = store::open(url).await.unwrap();
    let (job_a, a) = job(&store, "policy one", REWARDS_A, policy_one).await;
    let (_, b) = job(&store, "policy two", [Some(1.0); 7], policy_two).await;

    use Preference::{Tie, A, B};
    let pref =
        |n: usize, verdict: Option<Preference>, consistent, status: &str, calls| NewJudgment {
            job_id: job_a,
            judge_name: "pref".into(),
            judge_hash: "pref-hash".into(),
            conversation_a: a[n - 1],
            conversation_b: Some(b[n - 1]),
            status: status.into(),
            verdict: verdict.map(|p| json!({"kind": "preference", "preference": p.as_str()})),
            score: None,
            consistent,
            reason: None,
            calls,
        };
    let judgments = [
        pref(
            1,
            Some(A),
            Some(true),
            "ok",
            vec![call("ab", Some(A)), call("ba", Some(B))],
        ),
        pref(
            2,
            Some(B),
            Some(true),
            "ok",
            vec![call("ab", Some(B)), call("ba", Some(A))],
        ),
        pref(
            3,
            Some(Tie),
            Some(false),
            "ok",
            vec![call("ab", Some(A)), call("ba", Some(A))],
        ),
        pref(
            4,
            Some(Tie),
            Some(true),
            "ok",
            vec![call("ab", Some(Tie)), call("ba", Some(Tie))],
        ),
        pref(5, Some(A), None, "ok", vec![call("ab", Some(A))]),
        pref(
            6,
            None,
            None,
            "unparseable",
            vec![call("ab", Some(A)), call("ba", None)],
        ),
        pref(7, None, None, "failed", vec![]),
    ];
    for j in &judgments {
        store.save_judgment(j).await.unwrap();
    }
    let scored =
        |judge: &str, hash: &str, job: i64, conversation: i64, score: Option<f64>| NewJudgment {
            job_id: job,
            judge_name: judge.into(),
            judge_hash: hash.into(),
            conversation_a: conversation,
            conversation_b: None,
            status: if score.is_some() { "ok" } else { "unparseable" }.into(),
            verdict: score.map(|s| json!({"kind": "score", "score": s})),
            score,
            consistent: None,
            reason: None,
            calls: vec![],
        };
    // The older config of `helpful` first: the newer judgment of a2 replaces it.
    store
        .save_judgment(&scored("helpful", "helpful-old", job_a, a[1], Some(10.0)))
        .await
        .unwrap();
    for (n, score) in [
        (1, Some(8.0)),
        (2, Some(6.0)),
        (3, Some(9.0)),
        (4, Some(4.0)),
        (5, Some(7.0)),
        (6, None),
    ] {
        store
            .save_judgment(&scored("helpful", "helpful-new", job_a, a[n - 1], score))
            .await
            .unwrap();
    }
    for (n, score) in [(1, 1.0), (3, 0.0), (5, 1.0)] {
        store
            .save_judgment(&scored(
                "fidelity",
                "fidelity-hash",
                job_a,
                a[n - 1],
                Some(score),
            ))
            .await
            .unwrap();
    }
    store
        .save_judgment(&scored("fidelity", "fidelity-hash", job_a, b[4], Some(0.0)))
        .await
        .unwrap();
    let gym_job = store
        .create_job(&NewJob {
            name: "gym".into(),
            kind: sparring::store::JobKind::Generation,
            config_snapshot:
                "[environment]\nkind = \"nemo_gym\"\nbase_url = \"http://127.0.0.1:9\"\n".into(),
            config_hash: unique_name("gym"),
        })
        .await
        .unwrap()
        .id;
    Fixture {
        url: url.to_string(),
        job_a,
        gym_job,
        a,
        b,
    }
}

/// A job with the seven items, each completed with a conversation whose
/// policy replies come from `replies`; returns the job id and the
/// conversation ids in item order.
async fn job(
    store: &Arc<dyn Store>,
    name: &str,
    rewards: [Option<f64>; 7],
    replies: fn(usize) -> Vec<NewMessage>,
) -> (i64, Vec<i64>) {
    let job = store
        .create_job(&NewJob {
            name: name.into(),
            kind: sparring::store::JobKind::Generation,
            config_snapshot: String::new(),
            config_hash: unique_name(name),
        })
        .await
        .unwrap();
    let items: Vec<NewItem> = ITEMS
        .iter()
        .map(|(scenario, sample)| NewItem {
            key: format!("{scenario}/alex/{sample}"),
            scenario_id: scenario.to_string(),
            persona_id: "alex".into(),
            sample: *sample,
            seed: *sample,
        })
        .collect();
    store.add_items(job.id, &items).await.unwrap();
    let leased = store.lease_items(job.id, "test", 7, 60_000).await.unwrap();
    let mut ids = Vec::new();
    for (n, (scenario, sample)) in ITEMS.iter().enumerate() {
        let item = leased
            .iter()
            .find(|i| i.scenario_id == *scenario && i.sample == *sample)
            .unwrap();
        let conversation = conversation(item, n + 1, rewards[n], replies);
        ids.push(
            store
                .complete_item(item.id, "test", &conversation)
                .await
                .unwrap(),
        );
    }
    (job.id, ids)
}

fn conversation(
    item: &ItemRow,
    n: usize,
    reward: Option<f64>,
    replies: fn(usize) -> Vec<NewMessage>,
) -> NewConversation {
    let mut messages = vec![
        message("system", "You are a retail agent.", "system"),
        message(
            "user",
            &format!("Hello, I need a refund for order #{n}."),
            "user",
        ),
    ];
    messages.extend(replies(n));
    // Unanswered: a DPO pair's sides end at the policy's last reply.
    messages.push(message("user", "Thanks, bye.", "user"));
    NewConversation {
        job_id: item.job_id,
        item_id: item.id,
        item_key: item.key.clone(),
        scenario_id: item.scenario_id.clone(),
        persona_id: item.persona_id.clone(),
        sample: item.sample,
        seed: item.seed,
        policy_model: "policy".into(),
        user_model: "user".into(),
        termination: if reward.is_some() { "user_stop" } else { "user_error" }.into(),
        reward,
        reward_breakdown: reward.map_or(Value::Null, |r| {
            json!({"db": {"score": r, "detail": ""}, "communicate": {"score": 1.0, "detail": ""}})
        }),
        metadata: json!({}),
        tools: Arc::new(json!([{
            "name": "get_order",
            "description": "Look an order up.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}
        }])),
        usage: vec![],
        started_at: 0,
        finished_at: 0,
        user_checks: None,
        messages,
    }
}

fn policy_one(n: usize) -> Vec<NewMessage> {
    let mut lookup = message("assistant", "", "policy");
    lookup.tool_calls = Some(json!([{
        "id": format!("call_{n}"),
        "name": "get_order",
        "arguments": format!("{{\"order_id\":\"#{n}\"}}"),
    }]));
    let mut result = message("tool", "{\"status\":\"delivered\"}", "env");
    result.tool_call_id = Some(format!("call_{n}"));
    vec![
        lookup,
        result,
        message("assistant", &format!("Order #{n} is refunded."), "policy"),
    ]
}

fn policy_two(n: usize) -> Vec<NewMessage> {
    vec![message(
        "assistant",
        &format!("Sorry, I cannot refund order #{n}."),
        "policy",
    )]
}

fn message(role: &str, content: &str, author: &str) -> NewMessage {
    NewMessage {
        role: role.into(),
        content: content.into(),
        tool_calls: None,
        tool_call_id: None,
        author: author.into(),
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: None,
        tokens: None,
    }
}

fn call(order: &str, parsed: Option<Preference>) -> NewJudgeCall {
    NewJudgeCall {
        order: order.into(),
        sample: 0,
        prompt_hash: format!("prompt-{order}"),
        model: "judge".into(),
        raw_output: parsed.map_or("no label".into(), |p| format!("[[{}]]", p.as_str())),
        parsed: parsed.map(|p| json!({"kind": "preference", "preference": p.as_str()})),
        status: if parsed.is_some() {
            "ok"
        } else {
            "unparseable"
        }
        .into(),
        error: None,
        prompt_tokens: 10,
        completion_tokens: 2,
        latency_ms: 5,
        batch: false,
    }
}

// ------------------------------------------------------------------ helpers

fn cli(dir: &Path, args: &[&str], url: &str) -> std::process::Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--database", url]);
    sparring(dir, &all)
}

fn run_json(dir: &Path, args: &[&str], url: &str) -> Value {
    let out = cli(dir, args, url);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Export job A to `file` in `dir` with `extra` flags; the rows written.
fn export(dir: &Path, f: &Fixture, file: &str, extra: &[&str]) -> Vec<Value> {
    let path = dir.join(file);
    let job = f.job_a.to_string();
    let mut args = vec!["export", "--job", &job, "--out", path.to_str().unwrap()];
    args.extend(extra);
    let out = cli(dir, &args, &f.url);
    assert!(out.status.success(), "{}", text(&out.stderr));
    read_rows(&path)
}

fn read_rows(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The order numbers (#N in the first user message) of openai rows.
fn ids_in_openai_rows(rows: &[Value]) -> Vec<usize> {
    rows.iter()
        .map(|r| {
            let user = r["messages"][1]["content"].as_str().unwrap();
            let n = user.rsplit('#').next().unwrap().trim_end_matches('.');
            n.parse().unwrap()
        })
        .collect()
}

fn assert_close(value: &Value, expected: f64) {
    let got = value
        .as_f64()
        .unwrap_or_else(|| panic!("{value} is not a number (expected {expected})"));
    assert!((got - expected).abs() < 1e-9, "{got} != {expected}");
}
