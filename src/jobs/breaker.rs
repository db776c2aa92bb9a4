//! The circuit breaker: a job stops itself when too many of its items failed
//! (an invalid key, a server that is down), instead of failing every item.
//!
//! Items are judged in the order they *started*, not the order they finished:
//! failures are often fast (a 401 ends an item at its first call) and successes
//! slow (a whole conversation), so the first items to finish are mostly
//! failures even when most items succeed. The breaker trips when any `window`
//! consecutive items, in start order, hold `max_error_rate` failures or more.
//! An item still running counts as a success until it fails, so a window trips
//! as soon as its known failures reach the rate, however long the items still
//! running in it take (a server that answers some calls with a fast 500 and
//! leaves the others hanging trips the breaker at once).
//!
//! It trips once; the worker then cancels the items in flight (see
//! [`CircuitBreaker::wait_tripped`]) and logs the reason once.

use std::collections::{BTreeSet, VecDeque};
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
    /// Its outcome is not this process's to count (the lease was lost): it
    /// counts as not failed.
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
    /// Started items that have not finished.
    running: BTreeSet<u64>,
    /// The windows that may still change or are not yet full: `failed[i]` is
    /// the failures known among the `window` items from number `first + i`.
    first: u64,
    failed: VecDeque<u32>,
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
        let item = s.next;
        s.next += 1;
        s.running.insert(item);
        s.failed.push_back(0);
        // The window that ends with this item is full now.
        if let Some(start) = (item + 1).checked_sub(self.window()) {
            self.check(&mut s, start);
        }
        Started(item)
    }

    /// Record how a started item ended.
    pub fn finish(&self, item: Started, end: ItemEnd<'_>) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        s.running.remove(&item.0);
        if let ItemEnd::Failed(error) = end {
            s.last_error = Some(error.to_string());
            // Every window holding the item: those starting at most
            // `window - 1` items before it.
            let from = item
                .0
                .saturating_add(1)
                .saturating_sub(self.window())
                .max(s.first);
            for start in from..=item.0.min(s.next.saturating_sub(1)) {
                let at = (start - s.first) as usize;
                if let Some(count) = s.failed.get_mut(at) {
                    *count += 1;
                }
                self.check(&mut s, start);
            }
        }
        self.forget_settled(&mut s);
    }

    /// Trip if the window from item `start` is full and failed enough.
    fn check(&self, s: &mut State, start: u64) {
        let window = self.window();
        if s.reason.is_some() || start + window > s.next || start < s.first {
            return;
        }
        let Some(&failed) = s.failed.get((start - s.first) as usize) else {
            return;
        };
        if (f64::from(failed) / window as f64) < self.config.max_error_rate {
            return;
        }
        s.reason = Some(format!(
            "{failed} of {window} consecutive items (in the order they started) failed \
             (circuit_breaker.max_error_rate is {}); last error: {}",
            self.config.max_error_rate,
            s.last_error.as_deref().unwrap_or("unknown")
        ));
        self.tripped.send_replace(true);
    }

    /// Drop the windows that are full and whose items have all finished:
    /// they were judged and cannot change.
    fn forget_settled(&self, s: &mut State) {
        let window = self.window();
        let oldest_running = s.running.first().copied().unwrap_or(s.next);
        while !s.failed.is_empty() && s.first + window <= s.next.min(oldest_running) {
            s.failed.pop_front();
            s.first += 1;
        }
    }

    fn window(&self) -> u64 {
        u64::from(self.config.window.max(1))
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

    /// Start and finish an item before the next starts.
    fn record(b: &CircuitBreaker, end: ItemEnd<'_>) {
        let item = b.start();
        b.finish(item, end);
    }

    #[test]
    fn it_trips_only_once_the_window_is_full_and_the_rate_is_reached() {
        let b = breaker(4, 0.5);
        record(&b, ItemEnd::Failed("401 invalid key"));
        record(&b, ItemEnd::Failed("401 invalid key"));
        record(&b, ItemEnd::Succeeded);
        assert_eq!(b.tripped(), None, "3 items: the window is not full yet");
        b.start();
        let reason = b.tripped().expect("2 of 4 failed: 0.5 reached");
        assert!(reason.contains("2 of 4 consecutive items"), "{reason}");
        assert!(reason.contains("401 invalid key"), "{reason}");
    }

    #[test]
    fn old_failures_slide_out_of_the_window() {
        let b = breaker(3, 0.67);
        record(&b, ItemEnd::Failed("e"));
        record(&b, ItemEnd::Failed("e"));
        record(&b, ItemEnd::Succeeded);
        assert_eq!(b.tripped(), None, "2/3 < 0.67");
        record(&b, ItemEnd::Succeeded);
        record(&b, ItemEnd::Succeeded);
        record(&b, ItemEnd::Failed("e"));
        assert_eq!(b.tripped(), None, "1/3 now");
    }

    #[test]
    fn fast_failures_do_not_count_ahead_of_slower_successes_that_started_before_them() {
        let b = breaker(4, 0.75);
        // Eight items start: the even ones will succeed slowly, the odd ones fail fast.
        let items: Vec<Started> = (0..8).map(|_| b.start()).collect();
        for item in items.iter().skip(1).step_by(2) {
            b.finish(*item, ItemEnd::Failed("500"));
        }
        assert_eq!(b.tripped(), None, "4 failures, but never 3 of 4 in a row");
        for item in items.iter().step_by(2) {
            b.finish(*item, ItemEnd::Succeeded);
        }
        assert_eq!(b.tripped(), None);
    }

    #[test]
    fn fast_failures_trip_at_once_while_slow_items_before_them_still_run() {
        let b = breaker(4, 0.75);
        let slow = b.start();
        let fast: Vec<Started> = (0..4).map(|_| b.start()).collect();
        b.finish(fast[0], ItemEnd::Failed("500"));
        b.finish(fast[1], ItemEnd::Failed("500"));
        assert_eq!(b.tripped(), None);
        b.finish(fast[2], ItemEnd::Failed("500"));
        let reason = b
            .tripped()
            .expect("3 of 4 failed, whatever the slow one does");
        assert!(reason.starts_with("3 of 4"), "{reason}");
        b.finish(slow, ItemEnd::Succeeded);
        assert_eq!(b.tripped(), Some(reason), "the reason stays the first");
    }

    #[test]
    fn a_failure_that_finishes_late_counts_in_the_windows_of_its_start() {
        let b = breaker(2, 1.0);
        let items: Vec<Started> = (0..6).map(|_| b.start()).collect();
        b.finish(items[1], ItemEnd::Failed("timeout"));
        for item in &items[2..] {
            b.finish(*item, ItemEnd::Succeeded);
        }
        assert_eq!(b.tripped(), None);
        b.finish(items[0], ItemEnd::Failed("timeout"));
        assert!(b.tripped().is_some(), "items 0 and 1 both failed");
    }

    #[test]
    fn abandoned_items_count_as_not_failed() {
        let b = breaker(2, 1.0);
        record(&b, ItemEnd::Failed("e"));
        record(&b, ItemEnd::Abandoned);
        record(&b, ItemEnd::Failed("e"));
        assert_eq!(b.tripped(), None);
    }

    #[test]
    fn settled_windows_are_forgotten() {
        let b = breaker(3, 0.9);
        for i in 0..1000 {
            let end = if i % 2 == 0 {
                ItemEnd::Failed("e")
            } else {
                ItemEnd::Succeeded
            };
            record(&b, end);
        }
        let held = b.state.lock().unwrap().failed.len();
        assert!(held <= 3, "{held} windows held");
        assert_eq!(b.tripped(), None);
    }
}
