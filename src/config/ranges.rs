//! The range of every number a user gives sparring, in one place: `validate`
//! checks them (and so the service answers 422), the config reference
//! (`docs/configuration.md`) lists them. A number outside its range could
//! crash the binary (a duration of 1e20 s), wrap (a lease of 1.5e16 s in
//! milliseconds), or exhaust the machine (a million tasks, four billion items).

use std::fmt;

use crate::diagnostics::problem::Problem;

/// An inclusive integer range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Whole {
    pub min: u64,
    pub max: u64,
}

/// A float range; NaN and infinities are never in one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Real {
    pub min: f64,
    /// Whether `min` itself is allowed (`(0, 1]` vs `[0, 1]`).
    pub min_included: bool,
    pub max: f64,
}

pub const fn whole(min: u64, max: u64) -> Whole {
    Whole { min, max }
}

pub const fn closed(min: f64, max: f64) -> Real {
    Real {
        min,
        min_included: true,
        max,
    }
}

pub const fn above(min: f64, max: f64) -> Real {
    Real {
        min,
        min_included: false,
        max,
    }
}

/// Seconds between two looks at a job's batches in flight (`batch_poll_secs`).
pub const BATCH_POLL_SECS: Real = closed(0.05, 3_600.0);
/// Requests in one batch file: the Batch API takes at most 50,000.
pub const BATCH_MAX_REQUESTS: Whole = whole(1, 50_000);
/// Submissions of one judge call through batches before it fails.
pub const BATCH_MAX_ATTEMPTS: Whole = whole(1, 10);
/// A batch of the mock's Batch API, by the order it was created in (1 = the first).
pub const MOCK_BATCH_NUMBER: Whole = whole(1, 1_000_000);
/// Conversations in flight at once (`concurrency`, `--concurrency`).
pub const CONCURRENCY: Whole = whole(1, 10_000);
/// User turns per conversation.
pub const MAX_TURNS: Whole = whole(1, 1_000);
/// Policy model calls within one turn.
pub const MAX_STEPS_PER_TURN: Whole = whole(1, 100);
/// Samples of each (scenario, persona) pair.
pub const SAMPLES_PER_SCENARIO: Whole = whole(1, 100_000);
/// Personas paired with each scenario.
pub const PERSONAS_PER_SCENARIO: Whole = whole(1, 100_000);
/// Personas sampled from a persona table (per job or per scenario).
pub const PERSONA_SAMPLE: Whole = whole(1, 1_000_000);
/// Weight a persona-table knob rule adds at the ends of its scale.
pub const KNOB_RULE_STRENGTH: Real = above(0.0, 1_000.0);
/// A knob value's base weight in `[persona_table.knobs]`.
pub const KNOB_WEIGHT: Real = closed(0.0, 1_000_000.0);
/// Work items of one job (scenarios × personas × samples).
pub const MAX_ITEMS: u64 = 1_000_000;
/// Seconds a worker's claim on an item lasts without a heartbeat.
pub const LEASE_SECS: Real = closed(0.5, 86_400.0);
/// Consecutive items (in start order) the circuit breaker judges together.
pub const BREAKER_WINDOW: Whole = whole(1, 100_000);
/// The failed share of the window that stops the job.
pub const BREAKER_RATE: Real = above(0.0, 1.0);
/// Mock latency and jitter, milliseconds.
pub const MOCK_LATENCY_MS: Whole = whole(0, 600_000);
/// Share of mock requests answered with a fault.
pub const MOCK_FAULT_RATE: Real = closed(0.0, 1.0);
/// Sampling temperature (endpoints and judges).
pub const TEMPERATURE: Real = closed(0.0, 2.0);
/// Nucleus sampling.
pub const TOP_P: Real = above(0.0, 1.0);
/// Completion tokens per call (endpoints and judges).
pub const MAX_TOKENS: Whole = whole(1, 1_000_000);
/// Seconds one model call may take.
pub const TIMEOUT_SECS: Real = above(0.0, 3_600.0);
/// Calls in flight at once to one endpoint.
pub const MAX_IN_FLIGHT: Whole = whole(1, 10_000);
/// Retries of one call after its first attempt.
pub const MAX_RETRIES: Whole = whole(0, 100);
/// Scenarios one synthesis run accepts (`target`).
pub const SYNTH_TARGET: Whole = whole(1, 100_000);
/// Attempts of one proposal: the first and its feedback rounds (`max_attempts`).
pub const SYNTH_MAX_ATTEMPTS: Whole = whole(1, 10);
/// Users (with their orders and products) shown in one prompt (`records_per_prompt`).
pub const SYNTH_RECORDS_PER_PROMPT: Whole = whole(1, 50);
/// Proposals one synthesis run may make before it stops short of its target.
pub const SYNTH_MAX_PROPOSALS: Whole = whole(1, MAX_ITEMS);
/// Example scenarios shown in the generator's prompt.
pub const SYNTH_EXAMPLES: Whole = whole(0, 10);
/// Reviewers of a synthesis run's committee (`[[reviewers]]`), each called
/// once per blueprint that passes validation by execution.
pub const SYNTH_REVIEWERS: Whole = whole(1, 25);
/// A share of a synthesis run's scenarios (`[diversity]` refusal, transfer,
/// multi_intent, and each part of the difficulty mix).
pub const SYNTH_SHARE: Real = closed(0.0, 1.0);
/// The share of scenarios a `[diversity]` tag or tool must reach (zero would
/// ask for nothing).
pub const SYNTH_MIN_SHARE: Real = above(0.0, 1.0);
/// Accepted scenarios that must call a `[diversity.tools]` tool (`{ count = N }`).
pub const SYNTH_TOOL_COUNT: Whole = whole(1, 100_000);
/// Names one `[diversity]` table (tags, difficulty, tools) may list.
pub const SYNTH_DIVERSITY_NAMES: Whole = whole(0, 100);
/// Requests per minute to one endpoint.
pub const REQUESTS_PER_MINUTE: Whole = whole(1, 10_000_000);
/// Tokens per minute to one endpoint (the lower bound also depends on max_tokens).
pub const TOKENS_PER_MINUTE: Whole = whole(1, u32::MAX as u64);
/// USD per million tokens.
pub const PRICE_PER_MILLION: Real = closed(0.0, 10_000.0);
/// Calls per order of one judge.
pub const JUDGE_SAMPLES: Whole = whole(1, 100);
/// The ends of a pointwise judge's score range.
pub const SCORE: Real = closed(-1_000_000.0, 1_000_000.0);
/// A `numeric` reward's absolute tolerance (`evaluation.numeric.tolerance`).
pub const NUMERIC_TOLERANCE: Real = closed(0.0, 1e12);
/// A `numeric` reward's relative tolerance, a share of the expected value
/// (`evaluation.numeric.relative_tolerance`).
pub const NUMERIC_RELATIVE_TOLERANCE: Real = closed(0.0, 1.0);
/// The share of scenarios an export's `--split` puts in train.
pub const SPLIT: Real = closed(0.01, 0.99);
/// MCP server processes (stdio) alive at once, one per conversation.
pub const MCP_MAX_PROCESSES: Whole = whole(1, 1_000);
/// Seconds one MCP request (a tool call, `tools/list`) may take.
pub const MCP_TIMEOUT_SECS: Real = above(0.0, 3_600.0);
/// Seconds an MCP server may take to start and answer `initialize`.
pub const MCP_STARTUP_SECS: Real = above(0.0, 600.0);
/// An environment's `state_probes` or `seed_calls` (each a tool call made on
/// every session that needs it).
pub const STATE_CALLS: Whole = whole(0, 32);
/// Goal similarity (MinHash estimate of word-shingle Jaccard) at which two
/// synthesized scenarios are near-duplicates.
pub const DEDUP_SIMILARITY: Real = above(0.0, 1.0);
/// Words per shingle of a goal's text.
pub const DEDUP_SHINGLE_WORDS: Whole = whole(1, 16);
/// MinHash permutations per goal (the estimate's error shrinks as 1/sqrt(n)).
pub const DEDUP_PERMUTATIONS: Whole = whole(8, 4_096);

impl fmt::Display for Whole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} to {}", thousands(self.min), thousands(self.max))
    }
}

impl fmt::Display for Real {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min_included {
            write!(f, "{} to {}", self.min, self.max)
        } else {
            write!(f, "more than {} up to {}", self.min, self.max)
        }
    }
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Whole {
    pub fn contains(&self, n: u64) -> bool {
        (self.min..=self.max).contains(&n)
    }

    /// `None` when `n` is in range, else what to say about it.
    pub fn check(&self, n: u64) -> Option<String> {
        (!self.contains(n)).then(|| format!("{n} is out of range; use {self}"))
    }

    /// A problem at `field` of `file` when `n` is out of range.
    pub fn problem(
        &self,
        file: &std::path::Path,
        field: &str,
        n: impl TryInto<u64>,
    ) -> Option<Problem> {
        let message = match n.try_into() {
            Ok(n) => self.check(n)?,
            Err(_) => format!("is out of range; use {self}"),
        };
        Some(Problem::at_field(file, field, message))
    }
}

impl Real {
    pub fn contains(&self, x: f64) -> bool {
        x.is_finite() && x <= self.max && (x > self.min || (self.min_included && x == self.min))
    }

    pub fn check(&self, x: f64) -> Option<String> {
        if self.contains(x) {
            None
        } else if x.is_finite() {
            Some(format!("{x} is out of range; use {self}"))
        } else {
            Some(format!("{x} is not a number sparring can use; use {self}"))
        }
    }

    pub fn problem(&self, file: &std::path::Path, field: &str, x: f64) -> Option<Problem> {
        Some(Problem::at_field(file, field, self.check(x)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_and_infinities_are_never_in_range() {
        for range in [LEASE_SECS, TEMPERATURE, TOP_P, MOCK_FAULT_RATE, SCORE] {
            assert!(!range.contains(f64::NAN));
            assert!(!range.contains(f64::INFINITY));
            assert!(!range.contains(f64::NEG_INFINITY));
        }
        assert!(LEASE_SECS.check(f64::NAN).unwrap().contains("not a number"));
    }

    #[test]
    fn the_numbers_that_crashed_sparring_are_out_of_range() {
        assert!(!LEASE_SECS.contains(1e20));
        assert!(!LEASE_SECS.contains(1.5e16));
        assert!(!TIMEOUT_SECS.contains(1e20));
        assert!(!CONCURRENCY.contains(1_000_000));
        assert!(!CONCURRENCY.contains(i64::MAX as u64));
        assert!(!SAMPLES_PER_SCENARIO.contains(4_000_000_000));
        assert!(!CONCURRENCY.contains(0));
    }

    #[test]
    fn open_and_closed_ends_are_kept() {
        assert!(!TOP_P.contains(0.0));
        assert!(TOP_P.contains(1.0));
        assert!(TEMPERATURE.contains(0.0));
        assert!(!BREAKER_RATE.contains(0.0));
        assert_eq!(
            CONCURRENCY.check(0).unwrap(),
            "0 is out of range; use 1 to 10,000"
        );
    }
}
