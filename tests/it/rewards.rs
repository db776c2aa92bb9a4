//! Rule and judge rewards on single-step tasks, through the `sparring` binary
//! and the mock model over HTTP: the shipped mcqa-style and math-with-judge
//! datasets run as their examples are written and earn both rewards; a judge
//! reward whose output cannot be read fails its item, and `--retry-failed`
//! completes it.

use crate::common;

use std::path::Path;

use common::{job_id_from, sparring, text};
use sparring::config::MockConfig;
use sparring::store::{self, StoredConversation};

/// Run `args` in `dir`; stdout and stderr, after asserting success.
fn run(dir: &Path, args: &[&str]) -> String {
    let out = sparring(dir, args);
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "sparring {args:?} failed:\n{all}");
    all
}

async fn conversations(database: &str, job: i64) -> Vec<StoredConversation> {
    let store = store::open(database).await.unwrap();
    let all = store.conversations_page(job, 0, 10_000).await.unwrap();
    store.close().await;
    all
}

fn rewards(conversations: &[StoredConversation]) -> Vec<f64> {
    conversations
        .iter()
        .map(|c| c.conversation.reward.expect("every conversation is scored"))
        .collect()
}

fn assert_both_rewards(rewards: &[f64]) {
    assert!(rewards.contains(&1.0), "no reward 1 in {rewards:?}");
    assert!(rewards.contains(&0.0), "no reward 0 in {rewards:?}");
    assert!(
        rewards.iter().all(|r| *r == 0.0 || *r == 1.0),
        "{rewards:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcqa_example_sends_each_opening_verbatim_and_grades_the_picked_letter() {
    let dir = tempfile::tempdir().unwrap();
    let example = common::repo().join("examples/qa-mcqa.toml");
    let out = run(dir.path(), &["run", example.to_str().unwrap(), "--quiet"]);
    let job = job_id_from(&out);
    let database = format!("sqlite://{}", dir.path().join("sparring.db").display());
    let all = conversations(&database, job).await;
    assert_eq!(all.len(), 64, "32 questions x 2 samples");
    assert_both_rewards(&rewards(&all));

    let scenarios =
        sparring::persona::load::load_scenarios(&common::repo().join("data/qa/mcqa.jsonl"))
            .unwrap();
    for c in &all {
        let row = &c.conversation;
        assert_eq!(row.termination, "policy_answered", "{}", row.item_key);
        let roles: Vec<&str> = c.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant"], "{}", row.item_key);
        let scenario = scenarios.iter().find(|s| s.id == row.scenario_id).unwrap();
        assert_eq!(
            Some(c.messages[1].content.as_str()),
            scenario.user.opening.as_deref(),
            "the opening is sent verbatim"
        );
        let choice = &row.reward_breakdown["choice"];
        assert_eq!(
            choice["score"].as_f64(),
            row.reward,
            "{}",
            row.reward_breakdown
        );
        let detail = choice["detail"].as_str().unwrap();
        let expected = scenario.evaluation.expected_answer.as_deref().unwrap();
        assert!(
            detail.starts_with(&format!("expected {expected}, picked ")),
            "{detail}"
        );
    }
    // Every grading mode of the dataset was exercised and scored both ways.
    for grading in [
        "strict_single_letter_boxed",
        "lenient_boxed",
        "lenient_answer_colon",
    ] {
        let graded: Vec<f64> = all
            .iter()
            .filter(|c| {
                c.conversation.reward_breakdown["choice"]["detail"]
                    .as_str()
                    .unwrap()
                    .contains(grading)
            })
            .map(|c| c.conversation.reward.unwrap())
            .collect();
        assert!(!graded.is_empty(), "{grading} never used");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_math_example_is_rewarded_by_its_judge_inline_and_judging_it_later_makes_no_calls() {
    let dir = tempfile::tempdir().unwrap();
    let example = common::repo().join("examples/qa-math-judge.toml");
    let out = run(dir.path(), &["run", example.to_str().unwrap(), "--quiet"]);
    let job = job_id_from(&out);
    // `sparring run` judges the job with its [[judges]] when it is done: every
    // call is already in the cache, made when the episodes ended.
    assert!(out.contains("; 0 model calls made"), "{out}");
    let database = format!("sqlite://{}", dir.path().join("sparring.db").display());
    let all = conversations(&database, job).await;
    assert_eq!(all.len(), 36, "12 questions x 3 samples");
    assert_both_rewards(&rewards(&all));
    for c in &all {
        let row = &c.conversation;
        let judged = &row.reward_breakdown["judge:math_equal"];
        assert_eq!(
            judged["score"].as_f64(),
            row.reward,
            "{}",
            row.reward_breakdown
        );
        let detail = judged["detail"].as_str().unwrap();
        if row.reward == Some(1.0) {
            // Equal in the first order, so the swapped order was asked too.
            assert!(detail.contains("equivalent, both orders agree"), "{detail}");
        } else {
            assert!(detail.contains("not equivalent"), "{detail}");
        }
        let judge_usage = c.usage.iter().find(|u| u.role == "judge").unwrap();
        assert_eq!(
            judge_usage.calls,
            if row.reward == Some(1.0) { 2 } else { 1 }
        );
    }
    let store = store::open(&database).await.unwrap();
    let judgments = store.judgments_of_job(job).await.unwrap();
    assert_eq!(judgments.len(), 36);
    for j in &judgments {
        let c = all
            .iter()
            .find(|c| c.conversation.id == j.conversation_a)
            .unwrap();
        assert_eq!(j.status, "ok");
        assert_eq!(j.score, c.conversation.reward, "the judgment is the reward");
    }
    store.close().await;
}

/// A job over the first 3 math questions, its models on `mock` (outside
/// the CLI, so the judge's request count carries over to the retry).
fn math_job(dir: &Path, mock: &str, judge_model: &str) -> std::path::PathBuf {
    let all = std::fs::read_to_string(common::repo().join("data/qa/math.jsonl")).unwrap();
    let some: Vec<&str> = all.lines().take(3).collect();
    std::fs::write(dir.join("math.jsonl"), some.join("\n")).unwrap();
    let r = common::repo();
    let endpoint = |name: &str, model: &str| {
        format!(
            "[endpoints.{name}]\nbase_url = \"{mock}\"\nmodel = \"{model}\"\nmax_retries = 0\n\
             timeout_secs = 10\n"
        )
    };
    let config = format!(
        "name = \"{name}\"\nseed = 3\ndatabase = \"sqlite://{db}\"\nconcurrency = 1\n\n{policy}\n{user}\n{judge}\n\
         [roles]\npolicy = \"policy\"\nuser = \"user\"\n\n[user_simulator]\nmode = \"none\"\ntemplate = \"{r}/prompts/user_simulator.tera\"\n\n\
         [policy]\ntemplate = \"{r}/prompts/policies/answer.tera\"\n\n\
         [environment]\nname = \"builtin:qa\"\n\n[dataset]\nscenarios = \"math.jsonl\"\n\n\
         [[judges]]\nname = \"math_equal\"\nendpoint = \"judge\"\nbuiltin = \"equivalence\"\nswap_check = true\n",
        name = common::unique_name("garbled"),
        db = dir.join("test.db").display(),
        policy = endpoint("policy", "mock-policy+perfect"),
        user = endpoint("user", "mock-user"),
        judge = endpoint("judge", judge_model),
        r = r.display(),
    );
    let path = dir.join("job.toml");
    std::fs::write(&path, config).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbled_reward_judgment_fails_its_item_and_retry_failed_completes_it() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios =
        sparring::persona::load::load_scenarios(&common::repo().join("data/qa/math.jsonl"))
            .unwrap();
    let mock = sparring::mock_llm::MockServer::start(
        ([127, 0, 0, 1], 0).into(),
        scenarios,
        MockConfig::default(),
    )
    .await
    .unwrap();
    let config = math_job(dir.path(), &mock.base_url(), "mock-judge+garbled-once");
    let config = config.to_str().unwrap();
    let database = format!("sqlite://{}", dir.path().join("test.db").display());

    // A job left with failed items exits 1, though most of it was done.
    let out = sparring(dir.path(), &["run", config, "--quiet"]);
    let first = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{first}");
    let job = job_id_from(&first);
    assert!(first.contains("1 items failed"), "{first}");
    let store = store::open(&database).await.unwrap();
    let counts = store.item_counts(job).await.unwrap();
    assert_eq!((counts.done, counts.failed), (2, 1), "{counts:?}");
    let stored = conversations(&database, job).await;
    assert_eq!(
        stored.len(),
        2,
        "the failed item stored nothing: no reward of 0"
    );
    assert!(rewards(&stored).iter().all(|r| *r == 1.0));

    let again = run(dir.path(), &["run", config, "--retry-failed", "--quiet"]);
    assert_eq!(job_id_from(&again), job, "{again}");
    let counts = store.item_counts(job).await.unwrap();
    assert_eq!((counts.done, counts.failed), (3, 0), "{counts:?}");
    let stored = conversations(&database, job).await;
    assert_eq!(rewards(&stored), [1.0, 1.0, 1.0]);
    store.close().await;
}
