//! Where the overhead per call goes: inside the model calls (beyond the
//! mock's latency L: the connection, the mock itself, the client reading the
//! reply) or between them (the orchestrator: the environment, prompts,
//! verification, waiting for a runtime thread or for the endpoint's limits),
//! for all conversations and for the slowest 1%, which set the p99.

use std::time::Duration;

use serde::Serialize;

use super::netstat::TcpStalls;

/// One stored conversation's times (ms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConversationTimes {
    pub started: i64,
    pub finished: i64,
    pub calls: i64,
    /// The model calls' latencies as the client measured them, summed
    /// (time waited for admission left out).
    pub call_ms: i64,
}

/// Mean overhead per call of a set of conversations, and its two parts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct OverheadSplit {
    pub conversations: usize,
    pub per_call_ms: f64,
    /// Inside model calls, beyond L.
    pub in_calls_ms: f64,
    /// Between model calls.
    pub between_calls_ms: f64,
    /// Of them, those that started before any conversation had finished
    /// (the first wave, which opens every connection at once).
    pub first_wave: usize,
}

/// The breakdown `sparring bench` prints.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TailBreakdown {
    pub all: OverheadSplit,
    /// The slowest 1% of conversations by overhead per call (at least one).
    pub slowest_1pct: OverheadSplit,
    /// The mock's own time beyond L per reply (p50, p99, max), ms.
    pub mock_excess_ms: Option<[f64; 3]>,
    /// The wait of a ready task for a runtime thread (p50, p99, max), ms.
    pub sched_delay_ms: Option<[f64; 3]>,
    /// TCP handshakes that stalled during the run (the whole machine's).
    pub tcp: Option<TcpStalls>,
}

/// Split the overhead of `conversations` (each with at least one call) at
/// latency `latency_ms`.
pub fn split(
    conversations: &[ConversationTimes],
    latency_ms: f64,
) -> (OverheadSplit, OverheadSplit) {
    let first_end = conversations.iter().map(|c| c.finished).min().unwrap_or(0);
    let per_call = |c: &ConversationTimes| {
        let calls = c.calls.max(1) as f64;
        let elapsed = (c.finished - c.started) as f64;
        let in_calls = (c.call_ms as f64 - calls * latency_ms) / calls;
        let between = (elapsed - c.call_ms as f64) / calls;
        (in_calls + between, in_calls, between, c.started < first_end)
    };
    let mut rows: Vec<_> = conversations
        .iter()
        .filter(|c| c.calls > 0)
        .map(per_call)
        .collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mean = |rows: &[(f64, f64, f64, bool)]| {
        let n = rows.len().max(1) as f64;
        OverheadSplit {
            conversations: rows.len(),
            per_call_ms: rows.iter().map(|r| r.0).sum::<f64>() / n,
            in_calls_ms: rows.iter().map(|r| r.1).sum::<f64>() / n,
            between_calls_ms: rows.iter().map(|r| r.2).sum::<f64>() / n,
            first_wave: rows.iter().filter(|r| r.3).count(),
        }
    };
    // The slowest 1% (at least one conversation): those above the first
    // floor(0.99 n).
    let from = ((rows.len() as f64 * 0.99).floor() as usize).min(rows.len().saturating_sub(1));
    (mean(&rows), mean(&rows[from..]))
}

/// p50, p99 and the maximum of sorted durations, in ms.
pub fn quantiles_ms(sorted: &[Duration]) -> Option<[f64; 3]> {
    let last = sorted.len().checked_sub(1)?;
    let at = |p: f64| {
        let rank = ((p * sorted.len() as f64).ceil() as usize).saturating_sub(1);
        sorted[rank.min(last)].as_secs_f64() * 1e3
    };
    Some([at(0.5), at(0.99), sorted[last].as_secs_f64() * 1e3])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conversation(started: i64, calls: i64, call_ms: i64, gaps_ms: i64) -> ConversationTimes {
        ConversationTimes {
            started,
            finished: started + call_ms + gaps_ms,
            calls,
            call_ms,
        }
    }

    #[test]
    fn the_slowest_percent_shows_whether_its_time_was_in_calls_or_between_them() {
        // 99 conversations of 10 calls at L = 200 with 1 ms beyond L per call
        // and 2 ms between calls, started after the first one ended; one of
        // the first wave whose first call waited a second for its connection.
        let mut all: Vec<_> = (0..99)
            .map(|i| conversation(10_000 + i, 10, 10 * 201, 10 * 2))
            .collect();
        all.push(conversation(0, 10, 10 * 201 + 1000, 10 * 2));
        let (everyone, slowest) = split(&all, 200.0);
        assert_eq!(slowest.conversations, 1);
        assert_eq!(slowest.first_wave, 1);
        assert!((slowest.in_calls_ms - 101.0).abs() < 1e-9);
        assert!((slowest.between_calls_ms - 2.0).abs() < 1e-9);
        assert!((slowest.per_call_ms - 103.0).abs() < 1e-9);
        assert_eq!(everyone.conversations, 100);
        assert!((everyone.between_calls_ms - 2.0).abs() < 1e-9);
        assert!((everyone.in_calls_ms - 2.0).abs() < 1e-9);
    }

    #[test]
    fn no_conversations_split_into_zeros() {
        let (all, slowest) = split(&[], 200.0);
        assert_eq!(all, OverheadSplit::default());
        assert_eq!(slowest, OverheadSplit::default());
        assert_eq!(quantiles_ms(&[]), None);
    }

    #[test]
    fn quantiles_are_read_at_their_rank() {
        let d: Vec<_> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(quantiles_ms(&d), Some([50.0, 99.0, 100.0]));
    }
}
