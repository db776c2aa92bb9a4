//! The circuit breaker over a real job run by the binary: items are judged in
//! the order they started, so failures that finish first (an item fails at its
//! first faulted call, a success needs a whole conversation) do not trip it on
//! their own; a trip cancels and releases the items in flight at once, and its
//! reason is logged once.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{self, text, write_job, JobSpec};

/// 27 retail scenarios × 6 personas = 162 items, all started at once, over the
/// in-process mock with a latency mix and `faults` injected at `fault_rate`
/// into every call. No retries: a faulted call fails its item.
fn faulty_job(dir: &Path, fault_rate: f64, faults: &str, breaker: &str) -> (PathBuf, String) {
    let spec = JobSpec {
        personas_per_scenario: 6,
        max_retries: 0,
        extra: format!(
            "[mock]\nlatency_ms = 40\nlatency_jitter_ms = 60\nfault_rate = {fault_rate}\nfaults = [{faults}]\n\n[circuit_breaker]\n{breaker}\n"
        ),
        ..JobSpec::default()
    };
    write_job(dir, &spec)
}

fn run(dir: &Path, config: &Path) -> (std::process::Output, Duration) {
    let start = Instant::now();
    let out = common::sparring(
        dir,
        &[
            "run",
            config.to_str().unwrap(),
            "--concurrency",
            "200",
            "--quiet",
        ],
    );
    (out, start.elapsed())
}

/// Item statuses in the order the items finished (done or failed).
async fn finish_order(db: &str) -> Vec<String> {
    let pool = sqlx::SqlitePool::connect(db).await.unwrap();
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT status FROM items WHERE status IN ('done', 'failed') ORDER BY updated_at, id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    rows.into_iter().map(|(s,)| s).collect()
}

#[tokio::test]
async fn a_35_percent_failure_rate_whose_failures_finish_first_does_not_trip_at_0_95() {
    let dir = tempfile::tempdir().unwrap();
    let (config, db) = faulty_job(
        dir.path(),
        0.04,
        "\"500\"",
        "window = 20\nmax_error_rate = 0.95",
    );
    let (out, _) = run(dir.path(), &config);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    // Not stopped, but finished with failed items: exit 1.
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(!stdout.contains("circuit breaker"), "{stdout}");
    assert!(!stderr.contains("circuit breaker"), "{stderr}");

    let order = finish_order(&db).await;
    assert_eq!(order.len(), 162, "every item finished: {order:?}");
    let failed = order.iter().filter(|s| *s == "failed").count();
    assert!(
        (35..=80).contains(&failed),
        "about 35% of the items failed: {failed} of 162"
    );
    // What made the old breaker, which counted items as they finished, trip.
    let first_failed = order.iter().take(20).filter(|s| *s == "failed").count();
    assert!(
        first_failed >= 19,
        "failures finish first: {first_failed} of the first 20 to finish failed"
    );
}

#[tokio::test]
async fn a_100_percent_failure_rate_trips_cancels_the_items_in_flight_and_says_why_once() {
    let dir = tempfile::tempdir().unwrap();
    // Half the calls fail at once (500), half hang for the mock's 60 s timeout
    // hold: those items are in flight when the breaker trips.
    let (config, db) = faulty_job(
        dir.path(),
        1.0,
        "\"500\", \"timeout\"",
        "window = 20\nmax_error_rate = 0.3",
    );
    std::fs::write(
        &config,
        std::fs::read_to_string(&config)
            .unwrap()
            .replace("timeout_secs = 10", "timeout_secs = 50"),
    )
    .unwrap();
    let (out, took) = run(dir.path(), &config);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        took < Duration::from_secs(20),
        "the items in flight were cancelled, not waited for (50 s): took {took:?}"
    );
    assert!(
        stdout.contains("stopped by the circuit breaker: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("500"),
        "the reason names the cause: {stdout}"
    );
    assert_eq!(
        stderr.matches("circuit breaker tripped").count(),
        1,
        "the reason is logged once: {stderr}"
    );
    assert_eq!(
        stderr.matches("consecutive items").count(),
        1,
        "the reason is logged once: {stderr}"
    );

    let store = sparring::store::open(&db).await.unwrap();
    let counts = store.item_counts(1).await.unwrap();
    assert_eq!(counts.leased, 0, "the items in flight were released");
    assert!(counts.pending > 50, "left for a rerun: {counts:?}");
    assert_eq!(counts.done, 0);
    assert_eq!(
        store.get_job(1).await.unwrap().unwrap().status.as_str(),
        "failed"
    );
}
