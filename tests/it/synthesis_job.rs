//! Synthesis as a stored job, told through real interfaces: `mock-synth`
//! over HTTP, a real SQLite file (and Postgres when `SPARRING_TEST_POSTGRES`
//! names a server), the `sparring` binary killed with SIGKILL mid-job. The
//! accepted scenarios are a function of the stored proposals, decided in
//! proposal order: the same config gives the same file however the work was
//! split, interrupted or resumed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sparring::config::synth::load_synth;
use sparring::jobs::synthesis::{prepare, submit_synthesis, synthesize, SynthesisReport};
use sparring::jobs::{Context, RunOptions, WorkEnd};
use sparring::mock_llm::InProcessMock;
use sparring::store::{self, JobKind, ProposalStatus};
use sparring::synth::accept::Decision;
use sparring::synth::tally::tally;
use sparring::synth::Stage;

use crate::common::{databases, repo, sparring, text, unique_name, Service};

/// A SYNTH.toml in `dir` named `name`, storing in `database`, proposing with
/// `model`; `extra` goes at the end of its head (before the tables).
fn synth_config(dir: &Path, name: &str, database: &str, model: &str, extra: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\ndatabase = \"{database}\"\nexamples = \"{}\"\noutput = \"{name}.jsonl\"\n{extra}\n\
             [endpoints.generator]\nmock = true\nmodel = \"{model}\"\nmax_retries = 0\n\
             [roles]\ngenerator = \"generator\"\n[environment]\nname = \"builtin:retail\"\n",
            repo().join("data/retail/scenarios.jsonl").display()
        ),
    )
    .unwrap();
    path
}

fn sqlite(dir: &Path, file: &str) -> String {
    format!("sqlite://{}", dir.join(file).display())
}

async fn synthesis(path: &Path, concurrency: usize) -> SynthesisReport {
    let config = load_synth(path).unwrap();
    let ctx = Context::new(
        store::open(&config.head.database).await.unwrap(),
        Some(Arc::new(InProcessMock)),
    );
    let options = RunOptions {
        concurrency: Some(concurrency),
        ..Default::default()
    };
    let inputs = prepare(&config).await.unwrap();
    let report = synthesize(&ctx, &config, inputs, &options).await.unwrap();
    ctx.store.close().await;
    report
}

fn ids(report: &SynthesisReport) -> Vec<String> {
    report.accepted.iter().map(|s| s.id.clone()).collect()
}

#[tokio::test]
async fn a_synthesis_job_stores_every_proposal_and_accepts_the_same_scenarios_at_any_concurrency() {
    let dir = tempfile::tempdir().unwrap();
    let one = synth_config(
        dir.path(),
        "one",
        &sqlite(dir.path(), "one.db"),
        "mock-synth",
        "target = 25",
    );
    let many = synth_config(
        dir.path(),
        "many",
        &sqlite(dir.path(), "many.db"),
        "mock-synth",
        "target = 25",
    );
    let (a, b) = (synthesis(&one, 1).await, synthesis(&many, 16).await);
    assert_eq!(a.accepted.len(), 25);
    assert_eq!(ids(&a), ids(&b));
    assert_eq!(a.job.kind, JobKind::Synthesis);
    assert_eq!(a.end, WorkEnd::Finished);
    assert_eq!(a.counts.done as u64, a.summary.proposals);
    assert_eq!(a.summary.made_here, a.summary.proposals);
    // Every item stored exactly one proposal, in index order 0..n.
    let store = store::open(&sqlite(dir.path(), "one.db")).await.unwrap();
    let rows = store.proposals_page(a.job.id, -1, 10_000).await.unwrap();
    let indices: Vec<i64> = rows.iter().map(|r| r.proposal.index).collect();
    assert_eq!(indices, (0..rows.len() as i64).collect::<Vec<_>>());
    let valid = rows
        .iter()
        .filter(|r| r.proposal.status == ProposalStatus::Valid)
        .count();
    assert!(valid >= 25, "{valid} of {}", rows.len());
    // Some were accepted only after feedback: their attempts are all stored.
    assert!(rows
        .iter()
        .any(|r| r.proposal.attempts.as_array().unwrap().len() > 1));
    assert!(rows.iter().all(|r| r.proposal.prompt_tokens > 0));

    // The same config again is the same job: nothing is proposed twice.
    let again = synthesis(&one, 4).await;
    assert!(again.resumed);
    assert_eq!(again.summary.made_here, 0);
    assert_eq!(ids(&again), ids(&a));
}

#[tokio::test]
async fn an_exact_repeat_of_an_accepted_proposal_is_rejected_as_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite(dir.path(), "dup.db");
    let path = synth_config(
        dir.path(),
        "dup",
        &db,
        "mock-synth",
        "target = 10000\nmax_proposals = 170",
    );
    let report = synthesis(&path, 4).await;
    assert_eq!(report.summary.proposals, 170);
    let config = load_synth(&path).unwrap();
    let store = store::open(&db).await.unwrap();
    let mut decisions = std::collections::BTreeMap::new();
    tally(store.as_ref(), report.job.id, &config, |row, decision| {
        decisions.insert(
            row.proposal.index,
            (row.proposal.scenario.clone(), decision.cloned()),
        );
    })
    .await
    .unwrap();
    // mock-synth repeats proposal 8 as proposal 168 (160 numbers back).
    let (original, kept) = &decisions[&8];
    let (repeat, rejected) = &decisions[&168];
    assert_eq!(
        original.as_ref().unwrap()["evaluation"],
        repeat.as_ref().unwrap()["evaluation"]
    );
    assert_eq!(kept, &Some(Decision::Accepted));
    assert!(
        matches!(rejected, Some(Decision::Duplicate(d)) if d.of.ends_with("000008")),
        "{rejected:?}"
    );
    assert!(report.summary.rejected[&Stage::Duplicate] >= 1);
    assert!(report.accepted.iter().all(|s| !s.id.ends_with("000168")));
    assert_eq!(report.accepted.len() as u64, report.summary.accepted);
}

#[tokio::test]
async fn a_failed_generator_call_fails_its_item_not_the_proposal_and_a_dead_generator_trips_the_breaker(
) {
    let dir = tempfile::tempdir().unwrap();
    let once = synth_config(
        dir.path(),
        "once",
        &sqlite(dir.path(), "once.db"),
        "mock-synth+error500-once",
        "target = 3\nmax_proposals = 20",
    );
    let report = synthesis(&once, 1).await;
    assert_eq!((report.accepted.len(), report.counts.failed), (3, 1));
    assert_eq!(report.summary.failed, 1);
    assert!(report.summary.rejected_attempts() <= report.summary.attempts);

    let dead = synth_config(
        dir.path(),
        "dead",
        &sqlite(dir.path(), "dead.db"),
        "mock-synth+malformed",
        "target = 3\nmax_proposals = 100",
    );
    let report = synthesis(&dead, 2).await;
    let WorkEnd::Tripped { reason } = &report.end else {
        panic!("{:?}", report.end);
    };
    // The reason says what the failing calls said, not only that they failed.
    assert!(reason.contains("malformed"), "{reason}");
    assert!(
        report.errors.iter().any(|(e, _)| e.contains("malformed")),
        "{:?}",
        report.errors
    );
    assert_eq!(report.summary.proposals, 0);
    assert!(report.accepted.is_empty());
}

fn spawn_synthesize(dir: &Path, config: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args(["synthesize", config.to_str().unwrap(), "--quiet"])
        .current_dir(dir)
        .env_remove("SPARRING_DATABASE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn synthesis_killed_with_sigkill_resumes_without_redoing_a_proposal_and_writes_the_same_file()
{
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "synthesis sigkill resume") {
        let name = unique_name("synth-kill");
        let db = database.unwrap_or_else(|| sqlite(dir.path(), &format!("{name}.db")));
        let slow = "target = 40\nconcurrency = 4\nlease_secs = 1.0\n[mock]\nlatency_ms = 40";
        let path = synth_config(dir.path(), &name, &db, "mock-synth", slow);
        let store = store::open(&db).await.unwrap();
        let child = spawn_synthesize(dir.path(), &path);
        // Once some proposals are stored, kill it mid-job.
        let deadline = Instant::now() + Duration::from_secs(60);
        let job = loop {
            if let Some(job) = store.find_job_by_name(&name).await.unwrap() {
                if store.item_counts(job.id).await.unwrap().done >= 10 {
                    break job;
                }
            }
            assert!(Instant::now() < deadline, "no proposals stored within 60 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        Command::new("kill")
            .args(["-KILL", &child.id().to_string()])
            .status()
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(!out.status.success(), "the run ended before it was killed");
        let before = store.proposals_page(job.id, -1, 10_000).await.unwrap();
        let partial = store.item_counts(job.id).await.unwrap();
        assert!(partial.pending + partial.leased > 0, "{partial:?}");

        let resumed = sparring(
            dir.path(),
            &["synthesize", path.to_str().unwrap(), "--quiet"],
        );
        let stdout = text(&resumed.stdout);
        assert!(
            resumed.status.success(),
            "{stdout}\n{}",
            text(&resumed.stderr)
        );
        assert!(
            stdout.contains("(resumed)") && stdout.contains("accepted 40 of 40"),
            "{stdout}"
        );
        // What was stored before the kill stayed as it was: not proposed again.
        let after = store.proposals_page(job.id, -1, 10_000).await.unwrap();
        for row in &before {
            let same = after
                .iter()
                .find(|r| r.proposal.index == row.proposal.index)
                .unwrap();
            assert_eq!((same.id, same.created_at), (row.id, row.created_at));
        }
        let counts = store.item_counts(job.id).await.unwrap();
        assert_eq!(counts.pending + counts.leased, 0);
        assert_eq!(counts.done as usize, after.len());

        // An uninterrupted run of the same config in another database writes
        // the same scenarios.
        let fresh_name = format!("{name}-fresh");
        let fresh = synth_config(
            dir.path(),
            &fresh_name,
            &sqlite(dir.path(), &format!("{fresh_name}.db")),
            "mock-synth",
            "target = 40\nconcurrency = 4",
        );
        let report = synthesis(&fresh, 4).await;
        let written = std::fs::read_to_string(dir.path().join(format!("{name}.jsonl"))).unwrap();
        let written: Vec<String> = written
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(written, ids(&report), "{name} on {db}");
        store.close().await;
    }
}

#[tokio::test]
async fn two_processes_share_one_synthesis_job_on_the_same_database() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "synthesis shared by two processes") {
        let name = unique_name("synth-shared");
        let db = database.unwrap_or_else(|| sqlite(dir.path(), &format!("{name}.db")));
        let path = synth_config(
            dir.path(),
            &name,
            &db,
            "mock-synth",
            "target = 30\nconcurrency = 4\n[mock]\nlatency_ms = 10",
        );
        let config = load_synth(&path).unwrap();
        let store = store::open(&db).await.unwrap();
        let (job, _) = submit_synthesis(store.as_ref(), &config, false)
            .await
            .unwrap();
        let (a, b) = tokio::join!(synthesis(&path, 4), synthesis(&path, 4));
        assert_eq!(a.job.id, job.id);
        assert_eq!(a.job.id, b.job.id);
        assert_eq!(ids(&a), ids(&b));
        assert_eq!(a.accepted.len(), 30);
        let rows = store.proposals_page(a.job.id, -1, 10_000).await.unwrap();
        let counts = store.item_counts(a.job.id).await.unwrap();
        assert_eq!(rows.len() as i64, counts.done);
        assert_eq!(a.summary.made_here + b.summary.made_here, rows.len() as u64);
        assert!(
            a.summary.made_here > 0 && b.summary.made_here > 0,
            "{} / {}",
            a.summary.made_here,
            b.summary.made_here
        );
        store.close().await;
    }
}

const SERVICE_SYNTH: &str = "name = \"svc-synth\"\ntarget = 12\n\
    [endpoints.generator]\nmock = true\nmodel = \"mock-synth\"\n\
    [roles]\ngenerator = \"generator\"\n[environment]\nname = \"builtin:retail\"\n";

async fn post_synthesis(service: &Service, toml: &str) -> (u16, serde_json::Value) {
    let response = service
        .post("/v1/synthesis-jobs")
        .header("content-type", "application/toml")
        .body(toml.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (
        status,
        serde_json::from_slice(&response.bytes().await.unwrap()).unwrap(),
    )
}

#[tokio::test]
async fn a_synthesis_job_sent_over_http_runs_in_the_service_which_serves_its_scenarios_and_stats() {
    let service = Service::start("synthesis-token").await;
    let (status, job) = post_synthesis(&service, SERVICE_SYNTH).await;
    assert_eq!(status, 201, "{job}");
    assert_eq!(job["kind"], "synthesis");
    let id = job["id"].as_i64().unwrap();
    let done = service.wait_until_done(id).await;
    assert_eq!(done["counts"]["failed"], 0, "{done}");

    let lines = service.text(&format!("/v1/jobs/{id}/scenarios")).await;
    let rows: Vec<sparring::persona::Scenario> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 12);
    assert!(rows.iter().all(|s| s.id.starts_with("synth-0-")));
    let stats = service.json(&format!("/v1/jobs/{id}/stats")).await;
    assert_eq!(stats["synthesis"]["accepted"], 12, "{stats}");
    assert!(
        stats["synthesis"]["stages"].as_array().unwrap().len() >= 2,
        "{stats}"
    );

    // The same config again is the same job.
    let (again, same) = post_synthesis(&service, SERVICE_SYNTH).await;
    assert_eq!((again, same["id"].as_i64()), (200, Some(id)));
    // A file outside the data root is refused, naming its field.
    let outside = SERVICE_SYNTH.replace("target = 12", "target = 12\nexamples = \"/etc/passwd\"");
    let (refused, problems) = post_synthesis(&service, &outside).await;
    assert_eq!(refused, 422, "{problems}");
    assert!(problems.to_string().contains("examples"), "{problems}");
    // A job that is not a synthesis job has no scenarios.
    let generation = service.submit("not-synthesis", 1).await;
    let response = service
        .get(&format!("/v1/jobs/{generation}/scenarios"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 409);
}
