//! The process's resident memory, read from `/proc` (Linux; zeros elsewhere):
//! at a moment, and its peak by kind over a run, sampled.
//!
//! By kind, because the kinds mean different things here: anonymous memory
//! is the heap and stacks (what conversations cost), file-backed memory is
//! mostly the binary's code as it is first executed (a fixed cost that a run
//! touches once) and SQLite's `-shm` index (a mapped file, which grows with
//! the write-ahead log, not with the conversations in flight), and shared
//! memory (shmem and tmpfs mappings) is none here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

/// Resident memory in KiB: total, and its parts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Rss {
    pub total: u64,
    pub anon: u64,
    pub file: u64,
    pub shmem: u64,
}

impl Rss {
    pub fn max(self, other: Rss) -> Rss {
        Rss {
            total: self.total.max(other.total),
            anon: self.anon.max(other.anon),
            file: self.file.max(other.file),
            shmem: self.shmem.max(other.shmem),
        }
    }
}

fn status_field(status: &str, name: &str) -> u64 {
    status
        .lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// This process's resident memory now.
pub fn rss_now() -> Rss {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    Rss {
        total: status_field(&status, "VmRSS:"),
        anon: status_field(&status, "RssAnon:"),
        file: status_field(&status, "RssFile:"),
        shmem: status_field(&status, "RssShmem:"),
    }
}

/// The kernel's high-water mark of this process's RSS (KiB): exact, where
/// sampling may miss a short peak.
pub fn rss_peak_total() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status_field(&status, "VmHWM:")
}

/// Samples [`rss_now`] on its own thread until stopped.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<(i64, Rss)>>,
}

impl Sampler {
    pub fn start(every: Duration) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut samples = vec![(crate::store::now_ms(), rss_now())];
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(every);
                samples.push((crate::store::now_ms(), rss_now()));
            }
            samples
        });
        Sampler { stop, thread }
    }

    /// The samples taken: (ms since the epoch, RSS).
    pub fn stop(self) -> Vec<(i64, Rss)> {
        self.stop.store(true, Ordering::Relaxed);
        let mut samples = self.thread.join().unwrap_or_default();
        samples.push((crate::store::now_ms(), rss_now()));
        samples
    }
}

/// Each kind's peak over the samples taken up to `until` (ms since the epoch).
pub fn peak_until(samples: &[(i64, Rss)], until: i64) -> Rss {
    samples
        .iter()
        .filter(|(at, _)| *at <= until)
        .fold(Rss::default(), |peak, (_, rss)| peak.max(*rss))
}

/// CPU seconds (user + system) a process has used so far, from
/// `/proc/PID/stat`; `None` where that cannot be read.
pub fn cpu_secs(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields of the line, in clock ticks (100 per second here).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}
