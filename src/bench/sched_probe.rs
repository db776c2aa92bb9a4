//! How long a ready task waits for one of the runtime's threads: every
//! 10 ms a probe spawns a task and measures the time until it first runs.
//! When the orchestrator's threads are busy (a burst of conversations
//! ending, a big commit being prepared), every conversation's next step
//! waits this long too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the probe looks.
const EVERY: Duration = Duration::from_millis(10);

pub struct SchedProbe {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
    delays: Arc<Mutex<Vec<Duration>>>,
}

impl SchedProbe {
    /// Start probing on the current runtime.
    pub fn start() -> SchedProbe {
        let stop = Arc::new(AtomicBool::new(false));
        let delays = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn({
            let stop = Arc::clone(&stop);
            let delays = Arc::clone(&delays);
            async move {
                while !stop.load(Ordering::Relaxed) {
                    tokio::time::sleep(EVERY).await;
                    let spawned = Instant::now();
                    if let Ok(delay) = tokio::spawn(async move { spawned.elapsed() }).await {
                        if let Ok(mut d) = delays.lock() {
                            d.push(delay);
                        }
                    }
                }
            }
        });
        SchedProbe { stop, task, delays }
    }

    /// Stop, and return the delays seen, sorted.
    pub async fn stop(mut self) -> Vec<Duration> {
        self.stop.store(true, Ordering::Relaxed);
        let _ = (&mut self.task).await;
        let mut delays = self
            .delays
            .lock()
            .map(|mut d| std::mem::take(&mut *d))
            .unwrap_or_default();
        delays.sort();
        delays
    }
}

/// A probe dropped unstopped (the run failed) stops too.
impl Drop for SchedProbe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
