//! Judging through the Batch API, against the mock's Batch API over HTTP:
//! a judging job killed (SIGKILL) while its batches are in flight resumes,
//! polls the batches it made, and stores every judgment once without sending
//! any request twice; an expired batch's and failed requests go into the
//! next batch; a request that keeps failing fails its item, never a score;
//! and the calls are priced at the endpoint's batch prices.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{databases, job_id_from, job_toml, sparring, text, unique_name, JobSpec};
use sparring::config::MockConfig;
use sparring::store::{self, JobKind, Store};

/// A generation job of `scenarios` × `personas` × `samples` short
/// conversations; its id.
fn generate(dir: &Path, database: &str, scenarios: usize, personas: u32, samples: u32) -> i64 {
    let spec = JobSpec {
        scenarios: common::first_scenarios(dir, scenarios),
        personas_per_scenario: personas,
        max_turns: 2,
        database: Some(database.to_string()),
        name: unique_name("batched"),
        ..JobSpec::default()
    };
    let toml = job_toml(&spec, &dir.join("unused.db"))
        .replace("concurrency = 4", "concurrency = 32")
        + &format!("samples_per_scenario = {samples}\n");
    let config = dir.join("job.toml");
    std::fs::write(&config, toml).unwrap();
    let out = sparring(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    job_id_from(&text(&out.stdout))
}

/// A judges file: one pointwise judge on a `batch = true` endpoint.
fn judges(dir: &Path, url: &str, batch_keys: &str) -> String {
    let path = dir.join("judges.toml");
    std::fs::write(
        &path,
        format!(
            "[endpoints.judge]\nbase_url = \"{url}\"\nmodel = \"mock-judge\"\nmax_retries = 0\n\
             input_price_per_million = 2.0\noutput_price_per_million = 8.0\n\
             batch = true\nbatch_poll_secs = 0.1\n\
             batch_input_price_per_million = 1.0\nbatch_output_price_per_million = 4.0\n\
             {batch_keys}\n\n\
             [[judges]]\nname = \"helpful\"\nendpoint = \"judge\"\nbuiltin = \"helpfulness\"\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

fn judge_args<'a>(judges: &'a str, job: &'a str, database: &'a str) -> Vec<&'a str> {
    vec![
        "judge",
        judges,
        "--job",
        job,
        "--database",
        database,
        "--quiet",
    ]
}

/// `sparring judge ARGS` started in the background, to be killed.
fn spawn_judge(dir: &Path, args: &[&str]) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

async fn mock(batch: MockConfig) -> sparring::mock_llm::MockServer {
    common::mock(batch).await
}

fn sqlite(dir: &Path, name: &str) -> String {
    format!("sqlite://{}", dir.join(name).display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_judgments_survive_a_sigkill_mid_batch_and_no_request_is_sent_twice() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "batch judging sigkill") {
        let database = database.unwrap_or_else(|| sqlite(dir.path(), "kill.db"));
        let job = generate(dir.path(), &database, 25, 10, 4);
        let job_arg = job.to_string();
        let server = mock(MockConfig {
            batch_completion_delay_ms: 3_000,
            ..MockConfig::default()
        })
        .await;
        let judges = judges(dir.path(), &server.base_url(), "batch_max_requests = 250");
        let args = judge_args(&judges, &job_arg, &database);

        // Killed once batches are created and before any is answered.
        let mut child = spawn_judge(dir.path(), &args);
        let started = Instant::now();
        while server.stats().batches_created < 2 {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no batches were created"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let store = store::open(&database).await.unwrap();
        let in_flight = judging_batches(store.as_ref(), job).await;
        assert!(
            in_flight
                .iter()
                .any(|b| b.batch_id.is_some() && b.status != "ingested"),
            "killed while a created batch waited for its answers: {in_flight:?}"
        );
        assert_eq!(
            store.judgments_of_job(job).await.unwrap().len(),
            0,
            "nothing was answered before the kill"
        );

        let out = sparring(dir.path(), &args);
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{said}");
        assert!(
            said.contains("judge helpful: 1000 ok, 0 unparseable, 0 failed"),
            "{said}"
        );

        let stats = server.stats();
        assert_eq!(
            stats.batches_created, 4,
            "the resumed run polled the batches it had made instead of making them again"
        );
        assert_eq!(stats.batch_requests_repeated, 0, "a custom_id sent twice");
        assert_eq!(
            stats.batch_requests_submitted, 1000,
            "each call sent exactly once"
        );
        assert_eq!(
            stats.by_model.get("mock-judge").copied(),
            Some(1000),
            "every call answered once, through a batch, none one by one"
        );

        let judgments = store.judgments_of_job(job).await.unwrap();
        assert_eq!(judgments.len(), 1000);
        assert!(judgments
            .iter()
            .all(|j| j.status == "ok" && j.score.is_some()));
        let mut conversations: Vec<i64> = judgments.iter().map(|j| j.conversation_a).collect();
        conversations.sort_unstable();
        conversations.dedup();
        assert_eq!(conversations.len(), 1000, "one judgment per conversation");
        let calls = store.judge_calls_of_job(job).await.unwrap();
        assert_eq!(calls.len(), 1000);
        assert!(calls.iter().all(|c| c.call.batch));

        // The cost at the batch prices ($1 and $4 per million), not the
        // endpoint's list prices ($2 and $8).
        let prompt: i64 = calls.iter().map(|c| c.call.prompt_tokens).sum();
        let completion: i64 = calls.iter().map(|c| c.call.completion_tokens).sum();
        let want = (prompt as f64 * 1.0 + completion as f64 * 4.0) / 1e6;
        let out = sparring(
            dir.path(),
            &[
                "stats",
                "--job",
                &job_arg,
                "--database",
                &database,
                "--json",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let judge = report["usage"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["judge"] == "helpful")
            .unwrap_or_else(|| panic!("no judge usage in {report}"))
            .clone();
        let usd = judge["cost"]["usd"]
            .as_f64()
            .unwrap_or_else(|| panic!("{judge}"));
        assert!((usd - want).abs() < 1e-9, "{usd} != {want}");

        let batches = judging_batches(store.as_ref(), job).await;
        assert_eq!(batches.len(), 4, "1000 requests, 250 a batch");
        assert!(batches
            .iter()
            .all(|b| b.status == "ingested" && b.batch_id.is_some() && b.input_file_id.is_some()));
    }
}

/// The batches of the judging job of generation job `judged` (none before
/// it exists).
async fn judging_batches(store: &dyn Store, judged: i64) -> Vec<sparring::store::BatchRow> {
    let job = store.all_jobs().await.unwrap().into_iter().find(|j| {
        j.kind == JobKind::Judging
            && serde_json::from_str::<serde_json::Value>(&j.config_snapshot).unwrap()["target"]
                ["job_id"]
                == judged
    });
    match job {
        Some(job) => store.job_batches(job.id).await.unwrap(),
        None => Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_batch_and_failed_requests_go_into_the_next_batch() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "batch judging expiry") {
        let database = database.unwrap_or_else(|| sqlite(dir.path(), "expiry.db"));
        let job = generate(dir.path(), &database, 4, 10, 1);
        let server = mock(MockConfig {
            batch_fail_share: 0.25,
            batch_expire: vec![1],
            batch_cancel: vec![3],
            ..MockConfig::default()
        })
        .await;
        let judges = judges(
            dir.path(),
            &server.base_url(),
            "batch_max_requests = 20\nbatch_max_attempts = 10",
        );
        let job_arg = job.to_string();
        let out = sparring(dir.path(), &judge_args(&judges, &job_arg, &database));
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{said}");
        assert!(
            said.contains("judge helpful: 40 ok, 0 unparseable, 0 failed"),
            "{said}"
        );
        let stats = server.stats();
        assert_eq!(stats.batch_requests_repeated, 0);
        assert!(
            stats.batch_requests_submitted > 40,
            "the unanswered and failed were sent again: {}",
            stats.batch_requests_submitted
        );
        let store = store::open(&database).await.unwrap();
        let batches = judging_batches(store.as_ref(), job).await;
        assert!(batches.len() >= 3, "{batches:?}");
        let judgments = store.judgments_of_job(job).await.unwrap();
        assert_eq!(judgments.len(), 40);
        assert!(judgments.iter().all(|j| j.status == "ok"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_keeps_failing_fails_its_item_not_a_score() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "batch judging failures") {
        let database = database.unwrap_or_else(|| sqlite(dir.path(), "fail.db"));
        let job = generate(dir.path(), &database, 4, 1, 1);
        let server = mock(MockConfig {
            batch_fail_share: 1.0,
            ..MockConfig::default()
        })
        .await;
        let judges = judges(dir.path(), &server.base_url(), "batch_max_attempts = 2");
        let job_arg = job.to_string();
        let out = sparring(dir.path(), &judge_args(&judges, &job_arg, &database));
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(
            said.contains("judge helpful: 0 ok, 0 unparseable, 4 failed"),
            "{said}"
        );
        assert!(
            said.contains("0 model calls made, 8 requests sent through the Batch API"),
            "{said}"
        );
        let stats = server.stats();
        assert_eq!(stats.batch_requests_submitted, 8, "two attempts each");
        assert_eq!(stats.batch_requests_repeated, 0);
        assert_eq!(
            stats.by_model.get("mock-judge").copied().unwrap_or(0),
            0,
            "no call was answered, and none made one by one"
        );
        let store = store::open(&database).await.unwrap();
        for j in store.judgments_of_job(job).await.unwrap() {
            assert_eq!(j.status, "failed");
            assert_eq!((j.score, j.verdict.clone()), (None, None), "never a zero");
            assert!(
                j.reason.as_deref().unwrap_or("").contains("attempt 2 of 2"),
                "{:?}",
                j.reason
            );
        }
        // A rerun sends nothing more: the attempts are used up.
        let again = sparring(dir.path(), &judge_args(&judges, &job_arg, &database));
        assert_eq!(again.status.code(), Some(1));
        assert_eq!(server.stats().batch_requests_submitted, 8);
        // --retry-failed sends each again, for as many attempts, under new ids.
        let mut retry = judge_args(&judges, &job_arg, &database);
        retry.push("--retry-failed");
        let retried = sparring(dir.path(), &retry);
        assert_eq!(retried.status.code(), Some(1));
        let stats = server.stats();
        assert_eq!(stats.batch_requests_submitted, 16);
        assert_eq!(stats.batch_requests_repeated, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_created_but_not_recorded_is_found_by_its_file_not_created_again() {
    use sqlx::{Connection, Executor};
    let dir = tempfile::tempdir().unwrap();
    let database = sqlite(dir.path(), "lost-id.db");
    let job = generate(dir.path(), &database, 4, 1, 1);
    let server = mock(MockConfig {
        batch_completion_delay_ms: 2_000,
        ..MockConfig::default()
    })
    .await;
    let judges = judges(dir.path(), &server.base_url(), "");
    let job_arg = job.to_string();
    let args = judge_args(&judges, &job_arg, &database);
    let mut child = spawn_judge(dir.path(), &args);
    let store = store::open(&database).await.unwrap();
    let started = Instant::now();
    loop {
        let batches = judging_batches(store.as_ref(), job).await;
        if batches.iter().any(|b| b.batch_id.is_some()) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no batch");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // As if the kill had come after the batch was created and before its id
    // was stored.
    let mut raw = sqlx::SqliteConnection::connect(&database).await.unwrap();
    raw.execute("UPDATE batches SET batch_id = NULL, status = 'uploaded'")
        .await
        .unwrap();
    drop(raw);

    let out = sparring(dir.path(), &args);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert!(said.contains("judge helpful: 4 ok"), "{said}");
    let stats = server.stats();
    assert_eq!(stats.batches_created, 1, "found by its input file");
    assert_eq!(stats.batch_requests_submitted, 4);
    assert_eq!(stats.batch_requests_repeated, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_batch_client_uploads_a_file_of_megabytes_and_reads_back_every_answer() {
    use sparring::llm::batch::{parse_line, request_line, BatchClient, LineOutcome};
    let server = mock(MockConfig::default()).await;
    let config = common::endpoint_config("judge", &server.base_url(), "mock-judge");
    let client = BatchClient::new(&config, &server.base_url()).unwrap();
    // 600 requests of 5 kB each: 3 MB, past the 2 MB a web framework takes by default.
    let prompt = "Rate this conversation. ".repeat(220);
    let mut file = String::new();
    for i in 0..600 {
        let body = serde_json::json!({"model": "mock-judge", "messages": [{"role": "user", "content": prompt}]});
        file.push_str(&request_line(&format!("r-{i}"), &body).unwrap());
        file.push('\n');
    }
    assert!(file.len() > 3_000_000, "{}", file.len());
    let file_id = client.upload("big.jsonl", file.into_bytes()).await.unwrap();
    let created = client.create(&file_id).await.unwrap();
    assert_eq!(
        client
            .find_by_input_file(&file_id)
            .await
            .unwrap()
            .map(|b| b.id),
        Some(created.id.clone())
    );
    let done = client.get(&created.id).await.unwrap();
    assert_eq!(done.status, "completed", "{done:?}");
    let output = client
        .content(done.output_file_id.as_deref().unwrap())
        .await
        .unwrap();
    let answered = output
        .lines()
        .filter(|l| matches!(parse_line(l).unwrap().outcome, LineOutcome::Answered { .. }))
        .count();
    assert_eq!(answered, 600);
    assert_eq!(server.stats().batch_requests_submitted, 600);
}
