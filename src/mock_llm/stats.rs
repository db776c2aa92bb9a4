//! What the mock received: requests per model and per wall-clock second, and the
//! faults it injected, so a test can check that a client's limits held.

use std::collections::{BTreeMap, BTreeSet};

use crate::llm::message::Message;

use serde::{Deserialize, Serialize};

/// Per-second buckets kept: one day. Older seconds are dropped, so a long-running
/// `sparring mock-llm` holds at most this many buckets whatever its traffic.
pub const MAX_SECONDS_KEPT: usize = 24 * 60 * 60;

/// Requests the mock received (`/mock/stats` serves it as JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MockStats {
    /// Chat completion requests with a readable body.
    pub requests: u64,
    /// Requests per model name (including modifiers).
    pub by_model: BTreeMap<String, u64>,
    /// Requests per wall-clock second they arrived in (Unix time), the last day at most.
    #[serde(default)]
    pub per_second: BTreeMap<u64, u64>,
    /// Requests per model name, by the wall-clock second they arrived in,
    /// the last day at most.
    #[serde(default)]
    pub requests_per_second: BTreeMap<String, BTreeMap<u64, u64>>,
    /// Tokens reported in replies (prompt + completion) per model name, by
    /// the second their requests arrived in, the last day at most.
    #[serde(default)]
    pub tokens_per_second: BTreeMap<String, BTreeMap<u64, u64>>,
    /// Faults injected by `fault_rate`, by name (`429`, `500`, `503`, `timeout`,
    /// `malformed`, `truncated`). Faults asked for by a model-name modifier are not counted.
    #[serde(default)]
    pub faults: BTreeMap<String, u64>,
    /// Chat completion requests by HTTP version (`HTTP/1.1`, `HTTP/2.0`).
    #[serde(default)]
    pub by_http_version: BTreeMap<String, u64>,
    /// Chat completion requests by their `Authorization` header (`none` when
    /// absent): a test double's record of which key reached it.
    #[serde(default)]
    pub by_authorization: BTreeMap<String, u64>,
    /// The names of the tool calls found in the messages of requests, per
    /// model name: what each role was shown (a test checks that the policy
    /// never sees the user's own tool calls).
    #[serde(default)]
    pub tool_calls_seen: BTreeMap<String, BTreeSet<String>>,
    /// How long the mock took to answer beyond the delay it held (reading
    /// the request, its timer firing late, building the reply), by tenths of
    /// a millisecond: the mock's own share of a call's time beyond the
    /// latency. Normal replies only (not faults or `+slow`).
    #[serde(default)]
    pub excess_tenths_ms: BTreeMap<u32, u64>,
    /// Batches created with a valid file (the Batch API).
    #[serde(default)]
    pub batches_created: u64,
    /// Requests in those batches.
    #[serde(default)]
    pub batch_requests_submitted: u64,
    /// Of those, requests whose custom_id an earlier batch already held:
    /// a request submitted twice.
    #[serde(default)]
    pub batch_requests_repeated: u64,
}

/// How a request was counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// 0-based position among all requests; the fault draw is keyed on it.
    pub index: u64,
    /// 1-based count of requests for this model name, this one included.
    pub seen_for_model: u64,
}

impl MockStats {
    pub fn record_request(&mut self, model: &str, unix_second: u64) -> Arrival {
        let index = self.requests;
        self.requests += 1;
        let seen = self.by_model.entry(model.to_string()).or_insert(0);
        *seen += 1;
        let seen_for_model = *seen;
        add_to_second(&mut self.per_second, unix_second, 1);
        add_to_second(
            model_entry(&mut self.requests_per_second, model),
            unix_second,
            1,
        );
        Arrival {
            index,
            seen_for_model,
        }
    }

    /// A reply of `model` to a request that arrived in `unix_second` reported `tokens`.
    pub fn record_tokens(&mut self, model: &str, unix_second: u64, tokens: u64) {
        add_to_second(
            model_entry(&mut self.tokens_per_second, model),
            unix_second,
            tokens,
        );
    }

    /// Tokens reported in all replies, all models together, per second.
    pub fn all_tokens_per_second(&self) -> BTreeMap<u64, u64> {
        let mut all = BTreeMap::new();
        for per_second in self.tokens_per_second.values() {
            for (&second, &n) in per_second {
                *all.entry(second).or_insert(0) += n;
            }
        }
        all
    }

    /// What a server with a limit of `limit` tokens a minute would announce
    /// at `now` (a Unix second): the tokens left in the last 60 seconds, and
    /// the seconds until the oldest of them leave the window.
    pub fn remaining_tokens(&self, limit: u64, now: u64) -> (u64, u64) {
        let all = self.all_tokens_per_second();
        let window = all.range(now.saturating_sub(59)..=now);
        let used: u64 = window.clone().map(|(_, n)| n).sum();
        let reset = window.map(|(&s, _)| s + 60 - now).next().unwrap_or(0);
        (limit.saturating_sub(used), reset)
    }

    /// Tokens reported in all replies.
    pub fn tokens(&self) -> u64 {
        self.tokens_per_second
            .values()
            .flat_map(|m| m.values())
            .sum()
    }

    /// The most tokens reported for requests that arrived in any
    /// `window_secs` consecutive whole seconds, all models together.
    pub fn max_tokens_in_any_window(&self, window_secs: u64) -> u64 {
        busiest(&self.all_tokens_per_second(), window_secs)
    }

    pub fn record_tool_calls_seen(&mut self, model: &str, messages: &[Message]) {
        let names = messages
            .iter()
            .flat_map(|m| &m.tool_calls)
            .map(|c| c.name.clone());
        let mut names = names.peekable();
        if names.peek().is_some() {
            self.tool_calls_seen
                .entry(model.to_string())
                .or_default()
                .extend(names);
        }
    }

    /// A normal reply took `excess` beyond the delay it held.
    pub fn record_excess(&mut self, excess: std::time::Duration) {
        let tenths = u32::try_from(excess.as_micros() / 100).unwrap_or(u32::MAX);
        *self.excess_tenths_ms.entry(tenths).or_insert(0) += 1;
    }

    /// The `p`-th percentile (0–100) of [`MockStats::excess_tenths_ms`] in
    /// milliseconds, the upper edge of its tenth; `None` before any reply.
    pub fn excess_ms_percentile(&self, p: f64) -> Option<f64> {
        let total: u64 = self.excess_tenths_ms.values().sum();
        let rank = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        self.excess_tenths_ms.iter().find_map(|(&tenths, &n)| {
            seen += n;
            (seen >= rank).then(|| f64::from(tenths + 1) / 10.0)
        })
    }

    pub fn record_fault(&mut self, name: &str) {
        *self.faults.entry(name.to_string()).or_insert(0) += 1;
    }

    /// Faults injected by `fault_rate`, all kinds together.
    pub fn faults_injected(&self) -> u64 {
        self.faults.values().sum()
    }

    /// The most requests that arrived in any `window_secs` consecutive whole
    /// seconds, e.g. `max_in_any_window(60)` against a requests-per-minute limit.
    pub fn max_in_any_window(&self, window_secs: u64) -> u64 {
        busiest(&self.per_second, window_secs)
    }
}

/// `model`'s per-second counts (empty the first time).
fn model_entry<'a>(
    by_model: &'a mut BTreeMap<String, BTreeMap<u64, u64>>,
    model: &str,
) -> &'a mut BTreeMap<u64, u64> {
    by_model.entry(model.to_string()).or_default()
}

/// Add `n` to `second`'s count, keeping the last [`MAX_SECONDS_KEPT`] seconds.
fn add_to_second(per_second: &mut BTreeMap<u64, u64>, second: u64, n: u64) {
    *per_second.entry(second).or_insert(0) += n;
    while per_second.len() > MAX_SECONDS_KEPT {
        per_second.pop_first();
    }
}

/// The largest sum of `per_second` over any `window_secs` consecutive whole seconds.
pub fn busiest(per_second: &BTreeMap<u64, u64>, window_secs: u64) -> u64 {
    if window_secs == 0 {
        return 0;
    }
    let buckets: Vec<(u64, u64)> = per_second.iter().map(|(s, n)| (*s, *n)).collect();
    let mut best = 0;
    let mut in_window = 0;
    let mut first = 0;
    for &(second, count) in &buckets {
        in_window += count;
        // The window is [second - window_secs + 1, second]; drop buckets before it.
        while let Some(&(oldest, oldest_count)) = buckets.get(first) {
            if second - oldest < window_secs {
                break;
            }
            in_window -= oldest_count;
            first += 1;
        }
        best = best.max(in_window);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats_with(buckets: &[(u64, u64)]) -> MockStats {
        let mut stats = MockStats::default();
        for &(second, count) in buckets {
            for _ in 0..count {
                stats.record_request("mock-user", second);
            }
        }
        stats
    }

    #[test]
    fn excess_percentiles_are_the_upper_edge_of_their_tenth_of_a_millisecond() {
        use std::time::Duration;
        let mut stats = MockStats::default();
        assert_eq!(stats.excess_ms_percentile(99.0), None);
        for _ in 0..98 {
            stats.record_excess(Duration::from_micros(250));
        }
        stats.record_excess(Duration::from_millis(12));
        stats.record_excess(Duration::from_millis(900));
        assert_eq!(stats.excess_ms_percentile(50.0), Some(0.3));
        assert_eq!(stats.excess_ms_percentile(98.0), Some(0.3));
        assert_eq!(stats.excess_ms_percentile(99.0), Some(12.1));
        assert_eq!(stats.excess_ms_percentile(100.0), Some(900.1));
    }

    #[test]
    fn requests_are_counted_per_second_and_per_model() {
        let mut stats = MockStats::default();
        assert_eq!(
            stats.record_request("a", 10),
            Arrival {
                index: 0,
                seen_for_model: 1
            }
        );
        assert_eq!(
            stats.record_request("b", 10),
            Arrival {
                index: 1,
                seen_for_model: 1
            }
        );
        assert_eq!(
            stats.record_request("a", 12),
            Arrival {
                index: 2,
                seen_for_model: 2
            }
        );
        assert_eq!(stats.requests, 3);
        assert_eq!(stats.per_second, BTreeMap::from([(10, 2), (12, 1)]));
    }

    #[test]
    fn the_busiest_window_slides_over_whole_seconds() {
        let stats = stats_with(&[(100, 3), (101, 1), (130, 5), (159, 2), (160, 4)]);
        assert_eq!(stats.max_in_any_window(0), 0);
        assert_eq!(stats.max_in_any_window(1), 5);
        assert_eq!(stats.max_in_any_window(2), 6, "159 and 160");
        assert_eq!(stats.max_in_any_window(30), 7, "130..=159");
        assert_eq!(stats.max_in_any_window(31), 11, "130..=160");
        assert_eq!(stats.max_in_any_window(60), 12, "101..=160");
        assert_eq!(stats.max_in_any_window(61), 15, "100..=160");
        assert_eq!(stats.max_in_any_window(10_000), 15);
        assert_eq!(MockStats::default().max_in_any_window(60), 0);
    }

    #[test]
    fn per_second_buckets_are_bounded() {
        let mut stats = MockStats::default();
        for second in 0..(MAX_SECONDS_KEPT as u64 + 10) {
            stats.record_request("m", second);
        }
        assert_eq!(stats.per_second.len(), MAX_SECONDS_KEPT);
        assert_eq!(stats.per_second.keys().next(), Some(&10));
    }
}
