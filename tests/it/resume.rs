//! Resuming and sharing jobs: a changed config is refused, a stored job resumes by
//! id, a process killed with SIGKILL at random points loses and duplicates
//! nothing, SIGTERM and a cancel in the service stop processes cleanly, and
//! several worker processes share one job. Each runs on SQLite and,
//! when `SPARRING_TEST_POSTGRES` is set, on Postgres.

use crate::common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{databases, job_id_from, sparring, text, unique_name, write_job, JobSpec, Service};
use sparring::store::{self, Store};

/// Slow enough to be interrupted mid-job, short leases so dead owners' items
/// come back fast. At 60 ms a call the 54 items take about 10 s: a CI
/// machine that starves the test's poller for a few seconds (at 25 ms one did,
/// and the job finished before its SIGTERM) still signals it mid-job.
fn slow_job(name: &str, database: Option<String>) -> JobSpec {
    JobSpec {
        name: name.to_string(),
        database,
        personas_per_scenario: 2,
        extra: "lease_secs = 1.0\n\n[mock]\nlatency_ms = 60\n".into(),
        ..JobSpec::default()
    }
}

fn spawn(dir: &std::path::Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args(args)
        .current_dir(dir)
        .env_remove("SPARRING_DATABASE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Every item done, and exactly one conversation per item.
async fn assert_done_exactly_once(store: &dyn Store, job: i64) -> i64 {
    let counts = store.item_counts(job).await.unwrap();
    assert_eq!(
        counts.pending + counts.leased + counts.failed,
        0,
        "{counts:?}"
    );
    let conversations = store.conversations_page(job, 0, 100_000).await.unwrap();
    let mut items: Vec<i64> = conversations
        .iter()
        .map(|c| c.conversation.item_id)
        .collect();
    items.sort();
    items.dedup();
    assert_eq!(items.len(), conversations.len(), "an item was stored twice");
    assert_eq!(conversations.len() as i64, counts.done);
    counts.done
}

#[tokio::test]
async fn a_changed_config_is_refused_unless_new_job_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let spec = JobSpec {
        scenarios: common::first_scenarios(dir.path(), 3),
        ..JobSpec::default()
    };
    let (path, _) = write_job(dir.path(), &spec);
    let config = path.to_str().unwrap();
    assert!(sparring(dir.path(), &["run", config, "--quiet"])
        .status
        .success());

    let changed = std::fs::read_to_string(&path)
        .unwrap()
        .replace("max_turns = 12", "max_turns = 6");
    std::fs::write(&path, changed).unwrap();
    let refused = sparring(dir.path(), &["run", config, "--quiet"]);
    let err = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(
        err.contains("job 'test' (id 1) already exists with a different config"),
        "{err}"
    );
    assert!(
        err.contains("--new-job") && err.contains("--resume 1"),
        "{err}"
    );

    let fresh = sparring(dir.path(), &["run", config, "--quiet", "--new-job"]);
    assert!(fresh.status.success(), "{}", text(&fresh.stderr));
    assert_eq!(job_id_from(&text(&fresh.stdout)), 2);
}

#[tokio::test]
async fn a_submitted_job_resumes_by_id_from_its_stored_config_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let spec = JobSpec {
        scenarios: common::first_scenarios(dir.path(), 3),
        ..JobSpec::default()
    };
    let (path, db) = write_job(dir.path(), &spec);
    let submitted = sparring(dir.path(), &["submit", path.to_str().unwrap()]);
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    let id = job_id_from(&text(&submitted.stdout));
    // The config file is gone and we run from elsewhere: the stored snapshot suffices.
    std::fs::remove_file(&path).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let resumed = sparring(
        elsewhere.path(),
        &[
            "run",
            "--resume",
            &id.to_string(),
            "--database",
            &db,
            "--quiet",
        ],
    );
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert!(text(&resumed.stdout).contains("(resumed)"));
    let store = store::open(&db).await.unwrap();
    assert_eq!(assert_done_exactly_once(store.as_ref(), id).await, 3);
}

#[tokio::test]
async fn sigkill_at_random_points_then_resume_stores_every_item_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "sigkill resume") {
        let name = unique_name("sigkill");
        let (path, db) = write_job(dir.path(), &slow_job(&name, database));
        let config = path.to_str().unwrap().to_string();
        let store = store::open(&db).await.unwrap();
        let mut seed = std::process::id() as u64 ^ store::now_ms() as u64;
        let mut kills = 0;
        for _ in 0..3 {
            let child = spawn(dir.path(), &["run", &config, "--quiet"]);
            // Once the job is stored (a loaded machine may take seconds to
            // start the binary and migrate), a random point mid-job: 300..1300 ms in.
            let deadline = Instant::now() + Duration::from_secs(60);
            while store.find_job_by_name(&name).await.unwrap().is_none()
                && Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            std::thread::sleep(Duration::from_millis(300 + (seed >> 33) % 1000));
            let pid = child.id().to_string();
            let killed = Command::new("kill").args(["-KILL", &pid]).status().unwrap();
            let out = child.wait_with_output().unwrap();
            if killed.success() && !out.status.success() {
                kills += 1;
            }
        }
        let job = store
            .find_job_by_name(&name)
            .await
            .unwrap()
            .expect("the job exists");
        let partial = store.item_counts(job.id).await.unwrap();
        assert!(kills >= 1, "at least one run was killed mid-job");
        assert!(
            partial.done < partial.total(),
            "the kills interrupted the job: {partial:?}"
        );

        let started = Instant::now();
        let last = sparring(dir.path(), &["run", &config, "--quiet"]);
        assert!(last.status.success(), "{}", text(&last.stderr));
        assert!(started.elapsed() < Duration::from_secs(60));
        let done = assert_done_exactly_once(store.as_ref(), job.id).await;
        assert_eq!(done, 27 * 2, "{name} on {db}");
    }
}

#[tokio::test]
async fn three_workers_share_a_job_and_a_killed_workers_items_are_redone() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "three workers") {
        let name = unique_name("workers");
        let (path, db) = write_job(dir.path(), &slow_job(&name, database));
        let submitted = sparring(dir.path(), &["submit", path.to_str().unwrap()]);
        assert!(submitted.status.success(), "{}", text(&submitted.stderr));
        let id = job_id_from(&text(&submitted.stdout)).to_string();
        let args = [
            "worker",
            "--database",
            db.as_str(),
            "--job",
            id.as_str(),
            "--quiet",
            "--concurrency",
            "3",
        ];
        let workers: Vec<Child> = (0..3).map(|_| spawn(dir.path(), &args)).collect();
        std::thread::sleep(Duration::from_millis(800));
        let victim = workers[1].id().to_string();
        assert!(Command::new("kill")
            .args(["-KILL", &victim])
            .status()
            .unwrap()
            .success());
        for (i, w) in workers.into_iter().enumerate() {
            let out = w.wait_with_output().unwrap();
            if i != 1 {
                assert!(out.status.success(), "worker {i}: {}", text(&out.stderr));
            }
        }
        let store = store::open(&db).await.unwrap();
        let job = id.parse().unwrap();
        assert_eq!(assert_done_exactly_once(store.as_ref(), job).await, 27 * 2);
        assert_eq!(
            store.get_job(job).await.unwrap().unwrap().status.as_str(),
            "done"
        );
    }
}

/// `sparring submit` a slow job; its id, database URL and store.
async fn submit_slow_job(
    dir: &std::path::Path,
    name: &str,
    database: Option<String>,
) -> (i64, String, std::sync::Arc<dyn Store>) {
    let (path, db) = write_job(dir, &slow_job(name, database));
    let submitted = sparring(dir, &["submit", path.to_str().unwrap()]);
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    let id = job_id_from(&text(&submitted.stdout));
    let store = store::open(&db).await.unwrap();
    (id, db, store)
}

/// Stopped part-way: some items left, none still leased.
async fn assert_stopped_mid_job(store: &dyn Store, job: i64) {
    let partial = store.item_counts(job).await.unwrap();
    assert_eq!(
        partial.leased, 0,
        "items in flight were released: {partial:?}"
    );
    assert!(
        partial.done < partial.total(),
        "stopped mid-job: {partial:?}"
    );
}

/// Wait until job `name` has a stored conversation (so the process is at work,
/// its signal handler installed), then send SIGTERM and collect its output.
async fn terminate_mid_job(store: &dyn Store, name: &str, child: Child) -> std::process::Output {
    let started = Instant::now();
    loop {
        if let Some(job) = store.find_job_by_name(name).await.unwrap() {
            if store.item_counts(job.id).await.unwrap().done > 0 {
                break;
            }
        }
        // Generous: on a loaded CI machine a real model may hold both cores.
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "no conversation of job '{name}' stored within 180 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    child.wait_with_output().unwrap()
}

#[tokio::test]
async fn sigterm_stops_run_gracefully_and_the_job_resumes_to_every_conversation() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "sigterm run") {
        let name = unique_name("sigterm-run");
        let (path, db) = write_job(dir.path(), &slow_job(&name, database));
        let config = path.to_str().unwrap().to_string();
        let store = store::open(&db).await.unwrap();

        let child = spawn(dir.path(), &["run", &config, "--quiet"]);
        let out = terminate_mid_job(store.as_ref(), &name, child).await;
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let said = text(&out.stdout);
        assert!(said.contains("interrupted"), "{said}");
        assert!(said.contains("run the same command to resume"), "{said}");
        let job = store.find_job_by_name(&name).await.unwrap().unwrap();
        assert_stopped_mid_job(store.as_ref(), job.id).await;

        let last = sparring(dir.path(), &["run", &config, "--quiet"]);
        assert!(last.status.success(), "{}", text(&last.stderr));
        assert_eq!(assert_done_exactly_once(store.as_ref(), job.id).await, 54);
    }
}

#[tokio::test]
async fn sigterm_stops_a_worker_gracefully_and_the_job_resumes_to_every_conversation() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "sigterm worker") {
        let name = unique_name("sigterm-worker");
        let (id, db, store) = submit_slow_job(dir.path(), &name, database).await;

        let id_arg = id.to_string();
        let args = ["worker", "--database", &db, "--job", &id_arg, "--quiet"];
        let child = spawn(dir.path(), &args);
        let out = terminate_mid_job(store.as_ref(), &name, child).await;
        let said = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "the worker on {db} ended with {:?} after SIGTERM; counts {:?}; it said: {said}",
            out.status,
            store.item_counts(id).await.unwrap()
        );
        assert!(said.contains("worker stopped"), "{said}");
        assert!(said.contains("again to resume"), "{said}");
        assert_stopped_mid_job(store.as_ref(), id).await;

        let last = sparring(
            dir.path(),
            &["run", "--resume", &id_arg, "--database", &db, "--quiet"],
        );
        assert!(
            last.status.success(),
            "resuming on {db}: {}",
            text(&last.stderr)
        );
        assert_eq!(assert_done_exactly_once(store.as_ref(), id).await, 54);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_cancelled_in_the_service_stops_its_worker_process_and_resumes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "cancel in the service") {
        let name = unique_name("cancel-service");
        let (id, db, store) = submit_slow_job(dir.path(), &name, database).await;
        let id_arg = id.to_string();
        let worker = spawn(dir.path(), &["worker", "--database", &db, "--job", &id_arg]);
        let started = Instant::now();
        while store.item_counts(id).await.unwrap().done == 0 {
            assert!(started.elapsed() < Duration::from_secs(60), "no progress");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        // The service does not run this job itself: the cancel reaches the
        // worker process through the store.
        let service = Service::over(&db, None, tempfile::tempdir().unwrap()).await;
        let cancelled = service
            .post(&format!("/v1/jobs/{id}/cancel"))
            .send()
            .await
            .unwrap();
        assert_eq!(cancelled.status(), 202);
        let out = tokio::time::timeout(
            Duration::from_secs(30),
            tokio::task::spawn_blocking(move || worker.wait_with_output()),
        )
        .await
        .expect("the worker stops within seconds of the cancel")
        .unwrap()
        .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let said = text(&out.stderr);
        assert!(said.contains("was cancelled"), "{said}");
        assert_stopped_mid_job(store.as_ref(), id).await;
        let job = store.get_job(id).await.unwrap().unwrap();
        assert_eq!(job.status, store::JobStatus::Cancelled);

        let resumed = service
            .post(&format!("/v1/jobs/{id}/resume"))
            .send()
            .await
            .unwrap();
        assert!(
            resumed.status().is_success(),
            "{}",
            resumed.text().await.unwrap()
        );
        service.wait_until_done(id).await;
        assert_eq!(assert_done_exactly_once(store.as_ref(), id).await, 54);
    }
}
