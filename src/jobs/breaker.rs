//! The circuit breaker: a job stops itself when too many of its items failed in
//! a row (an invalid key, a server that is down), instead of failing every item.
//!
//! Items are judged in the order they *started*, not the order they finished:
//! failures are often fast (a 401 ends an item at its first call) and successes
//! slow (a whole conversation), so the first items to finish are mostly
//! failures even when most items succeed. Two windows of `window` items, both
//! in start order, are watched:
//! - the last items of the *settled prefix*: every item that started before
//!   them has finished, so their outcomes are exact. An item still running
//!   holds back the judgment of the items that started after it.
//! - the last items *started*, counting those still running as successes. This
//!   trips at once when failures are fast, whatever the slow items still do.
//!
//! Either reaching `max_error_rate` trips the breaker, once; then the worker
//! cancels the items in flight (see [`CircuitBreaker::wait_tripped`]).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use crate::config::CircuitBreakerConfig;

/// Where an item stands in start order: handed out by [`CircuitBreaker::start`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Started(u64);

/// How a started item ended, as the breaker counts it.
#[derive(Debug, Clone, Copy)]
pub enum ItemEnd<'a> {
    Succeeded,
    /// Failed, with its error class and message.
    Failed(&'a str),
    /// Its outcome is not this process's to count (the lease was lost).
    Abandoned,
}

#[derive(Debug)]
pub struct CircuitBreaker {
    config: CircuitBreakerConfig,
    state: Mutex<State>,
    tripped: tokio::sync::watch::Sender<bool>,
}

#[derive(Debug, Default)]
struct State {
    /// The next start's number.
    next: u64,
    /// The first started item whose outcome the settled prefix still waits for.
    settled_to: u64,
    /// Items that finished after `settled_to` started: `Some(true)` failed,
    /// `Some(false)` succeeded, `None` abandoned.
    finished: BTreeMap<u64, Option<bool>>,
    /// The settled prefix's last `window` outcomes, `true` for a failure.
    settled: VecDeque<bool>,
    /// The last `window` items started: `true` once known to have failed.
    started: VecDeque<bool>,
    last_error: Option<String>,
    reason: Option<String>,
}

impl CircuitBreaker {
    pub fn new(config: CircuitBreakerConfig) -> Self {
        CircuitBreaker {
            config,
            state: Mutex::new(State::default()),
            tripped: tokio::sync::watch::Sender::new(false),
        }
    }

    /// An item starts: its place in start order.
    pub fn start(&self) -> Started {
        let Ok(mut s) = self.state.lock() else {
            return Started(u64::MAX);
        };
        let started = Started(s.next);
        s.next += 1;
        s.started.push_back(false);
        while s.started.len() > self.window() {
            s.started.pop_front();
        }
        started
    }

    /// Record how a started item ended; returns the reason when this outcome
    /// trips the breaker (only the once: later calls return `None`).
    pub fn finish(&self, item: Started, end: ItemEnd<'_>) -> Option<String> {
        let Ok(mut s) = self.state.lock() else {
            return None;
        };
        if s.reason.is_some() {
            return None;
        }
        let failed = match end {
            ItemEnd::Succeeded => Some(false),
            ItemEnd::Failed(error) => {
                s.last_error = Some(error.to_string());
                Some(true)
            }
            ItemEnd::Abandoned => None,
        };
        // The last `window` started items are numbered `next - len ..`.
        let first_started = s.next - s.started.len() as u64;
        if failed == Some(true) && item.0 >= first_started && item.0 < s.next {
            let at = (item.0 - first_started) as usize;
            s.started[at] = true;
        }
        s.finished.insert(item.0, failed);
        self.settle(&mut s);
        let reason = self.judge(&s)?;
        s.reason = Some(reason.clone());
        self.tripped.send_replace(true);
        Some(reason)
    }

    /// Move the finished items at the head of start order into the settled window.
    fn settle(&self, s: &mut State) {
        loop {
            let head = s.settled_to;
            let Some(failed) = s.finished.remove(&head) else {
                return;
            };
            s.settled_to += 1;
            if let Some(failed) = failed {
                s.settled.push_back(failed);
                while s.settled.len() > self.window() {
                    s.settled.pop_front();
                }
            }
        }
    }

    /// The reason to trip, if either window is full and failed enough.
    fn judge(&self, s: &State) -> Option<String> {
        let window = self.window();
        let count = |w: &VecDeque<bool>| w.iter().filter(|f| **f).count();
        let failed = [&s.settled, &s.started]
            .into_iter()
            .filter(|w| w.len() == window)
            .map(count)
            .max()?;
        if (failed as f64 / window as f64) < self.config.max_error_rate {
            return None;
        }
        Some(format!(
            "{failed} of {window} consecutive items (in the order they started) failed \
             (circuit_breaker.max_error_rate is {}); last error: {}",
            self.config.max_error_rate,
            s.last_error.as_deref().unwrap_or("unknown")
        ))
    }

    fn window(&self) -> usize {
        (self.config.window as usize).max(1)
    }

    pub fn tripped(&self) -> Option<String> {
        self.state.lock().ok().and_then(|s| s.reason.clone())
    }

    /// Resolves once the breaker has tripped.
    pub async fn wait_tripped(&self) {
        let mut tripped = self.tripped.subscribe();
        if tripped.wait_for(|t| *t).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breaker(window: u32, rate: f64) -> CircuitBreaker {
        CircuitBreaker::new(CircuitBreakerConfig {
            window,
            max_error_rate: rate,
        })
    }

    /// Start and finish items one after the other.
    fn record(b: &CircuitBreaker, end: ItemEnd<'_>) -> Option<String> {
        let item = b.start();
        b.finish(item, end)
    }

    #[test]
    fn it_trips_only_once_the_window_is_full_and_the_rate_is_reached() {
        let b = breaker(4, 0.5);
        assert_eq!(record(&b, ItemEnd::Failed("401 invalid key")), None);
        assert_eq!(record(&b, ItemEnd::Failed("401 invalid key")), None);
        assert_eq!(record(&b, ItemEnd::Succeeded), None, "not full yet");
        let reason = record(&b, ItemEnd::Succeeded).expect("2 of 4 failed: 0.5 reached");
        assert!(reason.contains("2 of 4 consecutive items"), "{reason}");
        assert!(reason.contains("401 invalid key"), "{reason}");
        assert!(b.tripped().is_some());
    }

    #[test]
    fn old_failures_slide_out_of_the_window() {
        let b = breaker(3, 0.67);
        record(&b, ItemEnd::Failed("e"));
        record(&b, ItemEnd::Failed("e"));
        assert_eq!(record(&b, ItemEnd::Succeeded), None, "2/3 < 0.67");
        assert_eq!(record(&b, ItemEnd::Succeeded), None);
        assert_eq!(record(&b, ItemEnd::Succeeded), None);
        assert_eq!(record(&b, ItemEnd::Failed("e")), None, "1/3 now");
    }

    #[test]
    fn fast_failures_do_not_count_ahead_of_slower_successes_that_started_before_them() {
        let b = breaker(4, 0.75);
        // Eight items start: the even ones will succeed slowly, the odd ones fail fast.
        let items: Vec<Started> = (0..8).map(|_| b.start()).collect();
        for item in items.iter().skip(1).step_by(2) {
            assert_eq!(b.finish(*item, ItemEnd::Failed("500")), None);
        }
        for item in items.iter().step_by(2) {
            assert_eq!(b.finish(*item, ItemEnd::Succeeded), None, "half failed");
        }
        assert_eq!(b.tripped(), None);
    }

    #[test]
    fn fast_failures_trip_at_once_while_slow_items_still_run() {
        let b = breaker(4, 0.75);
        let slow = b.start();
        let fast: Vec<Started> = (0..4).map(|_| b.start()).collect();
        assert_eq!(b.finish(fast[0], ItemEnd::Failed("500")), None);
        assert_eq!(b.finish(fast[1], ItemEnd::Failed("500")), None);
        let reason = b.finish(fast[2], ItemEnd::Failed("500"));
        assert!(reason.is_some(), "3 of the last 4 started failed");
        assert_eq!(b.finish(fast[3], ItemEnd::Failed("500")), None, "once");
        assert_eq!(b.finish(slow, ItemEnd::Succeeded), None, "once");
    }

    #[test]
    fn slow_failures_trip_once_the_items_before_them_finished() {
        let b = breaker(2, 1.0);
        let items: Vec<Started> = (0..6).map(|_| b.start()).collect();
        // The last started window (4, 5) never sees these failures.
        assert_eq!(b.finish(items[1], ItemEnd::Failed("timeout")), None);
        assert_eq!(b.finish(items[2], ItemEnd::Failed("timeout")), None);
        let reason = b.finish(items[0], ItemEnd::Failed("timeout"));
        assert!(reason.is_some(), "0, 1, 2 settled, all failed");
    }

    #[test]
    fn abandoned_items_neither_fail_nor_hold_back_the_items_after_them() {
        let b = breaker(2, 1.0);
        let items: Vec<Started> = (0..5).map(|_| b.start()).collect();
        assert_eq!(b.finish(items[1], ItemEnd::Failed("e")), None);
        assert_eq!(b.finish(items[2], ItemEnd::Failed("e")), None);
        assert!(b.finish(items[0], ItemEnd::Abandoned).is_some());
    }
}
