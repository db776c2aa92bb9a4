//! Judging jobs through the CLI, against the mock model server over HTTP:
//! swap checks catch a position-biased judge, pairs are matched across jobs,
//! the call cache makes a repeated judging job free, and unparseable or failed
//! judgments are kept apart (no score, no verdict) and retried.

use crate::common;

use std::collections::HashMap;
use std::path::Path;

use common::{databases, job_id_from, sparring, text, unique_name, write_job, JobSpec};
use sparring::config::MockConfig;
use sparring::store::{self, JudgmentRow};

/// Run a generation job over the first 4 scenarios; its id.
fn generate(dir: &Path, database: &str, name: &str, policy_model: &str) -> i64 {
    let job_dir = dir.join(name);
    std::fs::create_dir_all(&job_dir).unwrap();
    let scenarios = common::first_scenarios(&job_dir, 4);
    let spec = JobSpec {
        policy_model: policy_model.into(),
        scenarios,
        database: Some(database.to_string()),
        name: unique_name(name),
        ..JobSpec::default()
    };
    let (config, _) = write_job(&job_dir, &spec);
    let out = sparring(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    job_id_from(&text(&out.stdout))
}

fn judges_file(dir: &Path, name: &str, endpoints: &str, judges: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("{endpoints}\n{judges}")).unwrap();
    path.to_str().unwrap().to_string()
}

fn endpoint(name: &str, url: &str, model: &str) -> String {
    format!(
        "[endpoints.{name}]\nbase_url = \"{url}\"\nmodel = \"{model}\"\nmax_retries = 0\ntimeout_secs = 5\nmax_tokens = 512\n"
    )
}

fn judge_cli(dir: &Path, args: &[&str]) -> String {
    let out = sparring(dir, args);
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "sparring {args:?} failed:\n{all}");
    all
}

fn calls_made(output: &str) -> u64 {
    let at = output
        .find(" model calls made")
        .unwrap_or_else(|| panic!("no call count in {output}"));
    output[..at]
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no call count in {output}"))
}

fn by_judge(judgments: Vec<JudgmentRow>) -> HashMap<String, Vec<JudgmentRow>> {
    let mut out: HashMap<String, Vec<JudgmentRow>> = HashMap::new();
    for j in judgments {
        out.entry(j.judge_name.clone()).or_default().push(j);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swap_check_turns_a_position_biased_judge_into_ties_on_matched_pairs_and_a_rerun_is_free()
{
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "judging pairwise") {
        let database = database
            .unwrap_or_else(|| format!("sqlite://{}", dir.path().join("pairs.db").display()));
        let a = generate(dir.path(), &database, "flawed", "mock-policy");
        let b = generate(dir.path(), &database, "perfect", "mock-policy+perfect");
        let server = common::mock(MockConfig::default()).await;
        let file = judges_file(
            dir.path(),
            "pairwise.toml",
            &endpoint("judge", &server.base_url(), "mock-judge+biased"),
            "[[judges]]\nname = \"swapped\"\nendpoint = \"judge\"\nbuiltin = \"pairwise_preference\"\n\
             [[judges]]\nname = \"one-order\"\nendpoint = \"judge\"\nbuiltin = \"pairwise_preference\"\nswap_check = false\n",
        );
        let (a_arg, b_arg) = (a.to_string(), b.to_string());
        let args = [
            "judge",
            &file,
            "--pairwise",
            "--a",
            &a_arg,
            "--b",
            &b_arg,
            "--database",
            &database,
            "--quiet",
        ];
        let first = judge_cli(dir.path(), &args);
        // 4 matched pairs: both orders for "swapped", one for "one-order".
        assert_eq!(calls_made(&first), 4 * 2 + 4, "{first}");
        assert_eq!(server.stats().requests, 12);

        let store = store::open(&database).await.unwrap();
        let keys_a = store.conversation_keys(a).await.unwrap();
        let keys_b = store.conversation_keys(b).await.unwrap();
        let key_of = |id: i64| {
            keys_a
                .iter()
                .chain(&keys_b)
                .find(|k| k.conversation_id == id)
                .map(|k| (k.scenario_id.clone(), k.persona_id.clone(), k.sample))
                .unwrap()
        };
        let judged = by_judge(store.judgments_of_job(a).await.unwrap());
        for (name, rows) in &judged {
            assert_eq!(rows.len(), 4, "{name}: one judgment per matched pair");
            for j in rows {
                let other = j.conversation_b.expect("pairwise judgments name B");
                assert!(keys_a.iter().any(|k| k.conversation_id == j.conversation_a));
                assert!(keys_b.iter().any(|k| k.conversation_id == other));
                assert_eq!(
                    key_of(j.conversation_a),
                    key_of(other),
                    "matched on scenario/persona/sample"
                );
                assert_eq!(j.status, "ok");
            }
        }
        // The biased judge prefers whatever is shown first: in both orders that
        // is a different conversation, so the swap check finds them inconsistent
        // and records ties; judged in one order only, A always "wins".
        for j in &judged["swapped"] {
            assert_eq!(j.consistent, Some(false), "{j:?}");
            assert_eq!(
                j.verdict,
                Some(serde_json::json!({"kind": "preference", "preference": "tie"})),
                "{j:?}"
            );
        }
        for j in &judged["one-order"] {
            assert_eq!(j.consistent, None);
            assert_eq!(
                j.verdict,
                Some(serde_json::json!({"kind": "preference", "preference": "A"}))
            );
        }

        // The same judging again: the job is found and nothing is left to do.
        let again = judge_cli(dir.path(), &args);
        assert!(again.contains("resumed"), "{again}");
        assert_eq!(calls_made(&again), 0);
        // A new judging job over the same pairs: every call is in the cache.
        let mut fresh = args.to_vec();
        fresh.push("--new-job");
        let cached = judge_cli(dir.path(), &fresh);
        assert_eq!(calls_made(&cached), 0, "{cached}");
        assert_eq!(server.stats().requests, 12, "no request reached the model");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unparseable_and_failed_judgments_have_no_score_and_are_retried() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "judging failures") {
        let database = database
            .unwrap_or_else(|| format!("sqlite://{}", dir.path().join("fail.db").display()));
        let job = generate(dir.path(), &database, "judged", "mock-policy");
        let job_arg = job.to_string();
        let server = common::mock(MockConfig::default()).await;
        let store = store::open(&database).await.unwrap();

        // The first answer of this model has no label: one unparseable judgment.
        let garbled = judges_file(
            dir.path(),
            "garbled.toml",
            &endpoint("judge", &server.base_url(), "mock-judge+garbled-once"),
            "[[judges]]\nname = \"helpful\"\nendpoint = \"judge\"\nbuiltin = \"helpfulness\"\n",
        );
        let args = [
            "judge",
            &garbled,
            "--job",
            &job_arg,
            "--database",
            &database,
            "--quiet",
        ];
        // Not every judgment asked for was made: exit 1.
        let out = sparring(dir.path(), &args);
        let first = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{first}");
        assert!(
            first.contains("judge helpful: 3 ok, 1 unparseable, 0 failed"),
            "{first}"
        );
        assert!(first.contains("--retry-failed"), "{first}");
        let rows = by_judge(store.judgments_of_job(job).await.unwrap())
            .remove("helpful")
            .unwrap();
        let bad: Vec<_> = rows.iter().filter(|j| j.status != "ok").collect();
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].status, "unparseable");
        assert_eq!(
            (bad[0].score, bad[0].verdict.clone()),
            (None, None),
            "never a zero"
        );
        for j in rows.iter().filter(|j| j.status == "ok") {
            let score = j.score.expect("an ok pointwise judgment has a score");
            assert!((1.0..=10.0).contains(&score), "{score}");
        }

        let mut retry = args.to_vec();
        retry.push("--retry-failed");
        let retried = judge_cli(dir.path(), &retry);
        assert_eq!(
            calls_made(&retried),
            1,
            "only the unparseable call again: {retried}"
        );
        assert!(
            retried.contains("judge helpful: 4 ok, 0 unparseable, 0 failed"),
            "{retried}"
        );

        // A judge whose endpoint does not answer: failed, not a loss.
        let dead = judges_file(
            dir.path(),
            "dead.toml",
            &endpoint("gone", "http://127.0.0.1:9/v1", "any"),
            "[[judges]]\nname = \"unreachable\"\nendpoint = \"gone\"\nbuiltin = \"helpfulness\"\n",
        );
        let dead_run = sparring(
            dir.path(),
            &[
                "judge",
                &dead,
                "--job",
                &job_arg,
                "--database",
                &database,
                "--quiet",
            ],
        );
        let out = text(&dead_run.stdout);
        assert_eq!(
            dead_run.status.code(),
            Some(1),
            "every judgment failed: {out}"
        );
        assert!(
            out.contains("judge unreachable: 0 ok, 0 unparseable, 4 failed"),
            "{out}"
        );
        let failed = by_judge(store.judgments_of_job(job).await.unwrap())
            .remove("unreachable")
            .unwrap();
        assert!(failed
            .iter()
            .all(|j| j.status == "failed" && j.score.is_none() && j.reason.is_some()));
    }
}
