//! The circuit breaker: a job stops itself when too many of its most recent items
//! failed (an invalid key, a server that is down), instead of failing every item.

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::config::CircuitBreakerConfig;

#[derive(Debug)]
pub struct CircuitBreaker {
    config: CircuitBreakerConfig,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// `true` for a failed item, most recent last.
    recent: VecDeque<bool>,
    last_error: Option<String>,
    tripped: Option<String>,
}

impl CircuitBreaker {
    pub fn new(config: CircuitBreakerConfig) -> Self {
        CircuitBreaker {
            config,
            state: Mutex::new(State::default()),
        }
    }

    /// Record an item's outcome; returns the reason once the breaker trips.
    pub fn record(&self, failure: Option<&str>) -> Option<String> {
        let Ok(mut s) = self.state.lock() else {
            return None;
        };
        if s.tripped.is_some() {
            return s.tripped.clone();
        }
        s.recent.push_back(failure.is_some());
        if let Some(error) = failure {
            s.last_error = Some(error.to_string());
        }
        let window = self.config.window as usize;
        while s.recent.len() > window {
            s.recent.pop_front();
        }
        if s.recent.len() < window {
            return None;
        }
        let failed = s.recent.iter().filter(|f| **f).count();
        if failed as f64 / window as f64 >= self.config.max_error_rate {
            let reason = format!(
                "{failed} of the last {window} items failed (circuit_breaker.max_error_rate is {}); last error: {}",
                self.config.max_error_rate,
                s.last_error.as_deref().unwrap_or("unknown")
            );
            s.tripped = Some(reason.clone());
            return Some(reason);
        }
        None
    }

    pub fn tripped(&self) -> Option<String> {
        self.state.lock().ok().and_then(|s| s.tripped.clone())
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

    #[test]
    fn it_trips_only_once_the_window_is_full_and_the_rate_is_reached() {
        let b = breaker(4, 0.5);
        assert_eq!(b.record(Some("401 invalid key")), None);
        assert_eq!(b.record(Some("401 invalid key")), None);
        assert_eq!(b.record(None), None, "the window is not full yet");
        let reason = b.record(None).expect("2 of 4 failed: 0.5 reached");
        assert!(reason.contains("2 of the last 4 items failed"), "{reason}");
        assert!(reason.contains("401 invalid key"), "{reason}");
        assert!(b.tripped().is_some());
    }

    #[test]
    fn old_failures_slide_out_of_the_window() {
        let b = breaker(3, 0.67);
        b.record(Some("e"));
        b.record(Some("e"));
        assert_eq!(b.record(None), None, "2/3 < 0.67");
        assert_eq!(b.record(None), None);
        assert_eq!(b.record(None), None);
        assert_eq!(b.record(Some("e")), None, "1/3 now");
    }
}
