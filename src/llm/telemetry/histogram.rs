//! A latency histogram on atomics: one counter per bucket, so recording is a
//! couple of relaxed adds and never takes a lock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the buckets, seconds. Prometheus's default buckets, then
/// longer ones: a model call with a long completion takes tens of seconds.
pub const LATENCY_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

#[derive(Debug, Default)]
pub struct LatencyHistogram {
    /// Observations in each bucket alone (not cumulative); the last one is
    /// above every bound (`+Inf`).
    buckets: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    sum_nanos: AtomicU64,
    count: AtomicU64,
}

/// What a histogram held at one moment, as Prometheus reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    /// `(upper bound, observations at or below it)`, cumulative, ending with
    /// `f64::INFINITY` and `count`.
    pub cumulative: Vec<(f64, u64)>,
    pub sum_seconds: f64,
    pub count: u64,
}

impl LatencyHistogram {
    pub fn record(&self, latency: Duration) {
        let seconds = latency.as_secs_f64();
        let bucket = LATENCY_BUCKETS
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(LATENCY_BUCKETS.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// Read while others record: each counter is read once, so the buckets
    /// may be a few observations apart from `count`; `count` is taken as the
    /// `+Inf` bucket's sum so the two always agree, as Prometheus requires.
    pub fn snapshot(&self) -> HistogramSnapshot {
        let mut cumulative = Vec::with_capacity(LATENCY_BUCKETS.len() + 1);
        let mut running = 0u64;
        let bounds = LATENCY_BUCKETS.iter().copied().chain([f64::INFINITY]);
        for (bound, bucket) in bounds.zip(&self.buckets) {
            running += bucket.load(Ordering::Relaxed);
            cumulative.push((bound, running));
        }
        HistogramSnapshot {
            cumulative,
            sum_seconds: Duration::from_nanos(self.sum_nanos.load(Ordering::Relaxed)).as_secs_f64(),
            count: running,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_end_with_inf_equal_to_the_count() {
        let h = LatencyHistogram::default();
        for ms in [1, 3, 7, 7, 200, 1_000, 500_000] {
            h.record(Duration::from_millis(ms));
        }
        let s = h.snapshot();
        assert_eq!(s.count, 7);
        let at = |le: f64| s.cumulative.iter().find(|(b, _)| *b == le).unwrap().1;
        assert_eq!(at(0.005), 2, "1 ms and 3 ms");
        assert_eq!(at(0.01), 4, "and the two 7 ms");
        assert_eq!(at(0.25), 5, "and 200 ms");
        assert_eq!(at(1.0), 6, "a bound is inclusive: 1 s is in le=1");
        assert_eq!(at(120.0), 6, "500 s is above every bound");
        assert_eq!(s.cumulative.last(), Some(&(f64::INFINITY, 7)));
        assert!(s.cumulative.windows(2).all(|w| w[0].1 <= w[1].1));
        assert!((s.sum_seconds - 501.218).abs() < 1e-9, "{}", s.sum_seconds);
    }
}
