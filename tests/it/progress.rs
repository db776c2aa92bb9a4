//! What `sparring run` shows on stderr off a terminal (CI logs, files) while a
//! job is slow: the issue 12 §8 job against a one-slot local model looked
//! frozen, with no line for minutes and its retries only under SPARRING_LOG.

use std::process::Command;
use std::time::Instant;

use crate::common::{first_scenarios, text, write_job, JobSpec};

#[test]
fn off_a_terminal_progress_is_a_line_every_10_s_with_calls_in_flight_retries_and_the_first_retry_logged(
) {
    let dir = tempfile::tempdir().unwrap();
    // One conversation of slow calls (2.5 s each), a third of them answered
    // 503 and retried: it takes well over 10 s and finishes nothing before.
    let spec = JobSpec {
        scenarios: first_scenarios(dir.path(), 1),
        max_turns: 4,
        extra: "[mock]\nlatency_ms = 2500\nfault_rate = 0.34\nfaults = [\"503\"]\n".into(),
        max_retries: 6,
        ..JobSpec::default()
    };
    let (path, _) = write_job(dir.path(), &spec);
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args(["run", path.to_str().unwrap()])
        .current_dir(dir.path())
        .env_remove("SPARRING_DATABASE")
        .env_remove("SPARRING_LOG")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        took.as_secs() >= 11,
        "the job must outlast one line interval: {took:?}"
    );
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();

    // A line at once, with the clock, before anything finished.
    assert!(
        lines[0].starts_with("progress: 0/1 [00:00:00] done 0 failed 0 | "),
        "{stderr}"
    );
    // While nothing finishes the clock still runs and lines keep coming:
    // one 10 s later, still at 0 of 1, with a call on the wire.
    let later = lines
        .iter()
        .find(|l| l.starts_with("progress: 0/1 [00:00:1"))
        .unwrap_or_else(|| panic!("no line 10 s in, while nothing was done:\n{stderr}"));
    assert!(later.contains("1 call in flight"), "{later}");
    // Retries so far are counted on the line, and the last line is the end.
    let last = lines.last().unwrap();
    assert!(last.starts_with("progress: 1/1 "), "{stderr}");
    let retries: u64 = last
        .split(" in flight, ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no retry count in {last}"));
    assert!(retries >= 1, "{last}");
    assert!(last.contains("conv/min"), "{last}");
    // Lines every 10 s, not more: at most one per 10 s, plus the first and last.
    assert!(
        lines.len() as u64 <= took.as_secs() / 10 + 2,
        "{} lines in {took:?}:\n{stderr}",
        lines.len()
    );
    // The first retry is logged without SPARRING_LOG, once; the later ones are not.
    let first_retry: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("first retry of a model call on endpoint"))
        .collect();
    assert_eq!(first_retry.len(), 1, "{stderr}");
    assert!(first_retry[0].contains("5xx"), "{}", first_retry[0]);
    assert!(!stderr.contains("model call failed, retrying"), "{stderr}");
}
