//! An endpoint's limits: requests per minute (a GCRA limiter from
//! `governor`), tokens per minute (a ledger of charges settled with the
//! reported usage, [`super::token_budget`]), and its cap on requests in flight. Every HTTP
//! attempt, first tries and retries alike, is admitted here just before it is
//! sent, so the server never sees more than the limits allow, whoever sends.
//!
//! Admission, one request at a time (a FIFO gate):
//! 1. wait out the endpoint's pause after a 429, if any;
//! 2. take a slot of the in-flight cap;
//! 3. charge the estimated tokens and take the rpm cell, or, if either says
//!    "not yet", undo the charge, give the slot back and sleep until it would
//!    say yes (or until a settled reply gives tokens back), then start over.
//!
//! So nobody holds an in-flight slot while sleeping on a rate limit or a pause
//! (slots go to requests that can be sent), and cells are only taken by the
//! request about to be sent, in order, the instant before it is sent: the
//! times the server sees requests are as spread out as the times the limiters
//! let them through, never bunched up behind a slot or a pause. The requests
//! queued behind the gate hold nothing.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::sync::{Mutex, Notify, OwnedSemaphorePermit, Semaphore};

use super::error::LlmError;
use super::retry::Pause;
use super::token_budget::{Charge, TokenBudget};
use super::token_estimate::TokenEstimator;
use crate::config::EndpointConfig;

pub use super::token_estimate::{estimate_tokens, TEMPLATE_ALLOWANCE_TOKENS};

/// A quota that lets through at most `limit` cells in any 60 s window, with
/// bursts of up to `burst` cells (`1 ≤ burst ≤ limit`).
///
/// A GCRA limiter with burst `b` and one cell back every `T` lets through
/// `n` cells at times `t1 ≤ … ≤ tk` only if `n ≤ b + (tk − t1) / T`: a full
/// burst first, then one cell per `T`. `Quota::per_minute(limit)` is
/// `b = limit, T = 60 s / limit`, which lets twice the limit through in the
/// first minute (the burst, then the refill). Here the cells refill at
/// `r = limit + 1 − burst` per minute, with `T` one nanosecond longer than
/// `60 s / r`, so any window of 60 s (closed or not) has `(tk − t1) / T < r`
/// and holds fewer than `b + r = limit + 1` cells: at most `limit`.
pub fn window_safe_quota(limit: NonZeroU32, burst: NonZeroU32) -> Quota {
    let burst = burst.min(limit);
    let refill_per_minute = u64::from(limit.get() - burst.get()) + 1;
    let period = Duration::from_nanos(60_000_000_000 / refill_per_minute + 1);
    // `period` is at least a nanosecond, so `with_period` always gives a quota.
    Quota::with_period(period)
        .unwrap_or_else(|| Quota::per_minute(limit))
        .allow_burst(burst)
}

/// Requests per minute: one every 60 s / rpm, with a burst of a tenth of a
/// second's worth (rpm / 600; none below 1200 rpm). Without any burst, every
/// request a sleeping caller sends a little late (timers wake on the next
/// millisecond, or later under load) pushes all the next ones back, which
/// costs a tenth of the throughput at 6000 rpm; the small burst lets the next
/// requests catch up, for a refill slower by as little as the burst is large.
pub fn request_quota(rpm: NonZeroU32) -> Quota {
    let burst = NonZeroU32::new(rpm.get() / 600).unwrap_or(NonZeroU32::MIN);
    window_safe_quota(rpm, burst)
}

/// What an endpoint's limits have cost so far, summed over its requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LimitStats {
    /// HTTP requests admitted (first tries and retries).
    pub requests: u64,
    /// Tokens the tpm limit was charged for them at admission (estimates).
    pub estimated_tokens: u64,
    /// Tokens the server reported for them (replies that reported usage).
    pub reported_tokens: u64,
    /// Time requests waited for the rpm or tpm limit or a free in-flight slot.
    pub waited: Duration,
    /// Time requests waited for the endpoint's pause after a 429.
    pub paused: Duration,
}

/// The tpm limit: the ledger, the estimator and a wake-up for the request
/// waiting at the gate when a settled reply gives tokens back.
struct TokenLimit {
    per_minute: NonZeroU32,
    budget: std::sync::Mutex<TokenBudget>,
    estimator: std::sync::Mutex<TokenEstimator>,
    freed: Notify,
}

/// One endpoint's limits, shared by every role and request using the endpoint.
pub struct Limits {
    max_tokens: u32,
    requests: Option<DefaultDirectRateLimiter>,
    tokens: Option<TokenLimit>,
    in_flight: Arc<Semaphore>,
    /// Admits one request at a time, in arrival order.
    gate: Mutex<()>,
    clock: DefaultClock,
    admitted: AtomicU64,
    estimated_tokens: AtomicU64,
    reported_tokens: AtomicU64,
    waited_nanos: AtomicU64,
    paused_nanos: AtomicU64,
}

/// A request let through; it counts as in flight until this is dropped.
#[derive(Debug)]
pub struct Admission {
    _slot: OwnedSemaphorePermit,
    /// Its entry in the tpm ledger, settled with the reported usage.
    charge: Option<Charge>,
    /// How long it waited for the rpm or tpm limit or a free in-flight slot.
    pub waited: Duration,
    /// How long it waited for the endpoint's pause after a 429.
    pub paused: Duration,
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Limits {
    /// Fails when even a request with an empty body could never fit the tpm limit.
    pub fn new(config: &EndpointConfig) -> Result<Self, LlmError> {
        let tokens = config
            .settings
            .tokens_per_minute
            .and_then(NonZeroU32::new)
            .map(|tpm| TokenLimit {
                per_minute: tpm,
                budget: std::sync::Mutex::new(TokenBudget::new(u64::from(tpm.get()))),
                estimator: std::sync::Mutex::new(TokenEstimator::new(config.settings.max_tokens)),
                freed: Notify::new(),
            });
        let limits = Limits {
            max_tokens: config.settings.max_tokens,
            requests: config
                .settings
                .requests_per_minute
                .and_then(NonZeroU32::new)
                .map(|rpm| RateLimiter::direct(request_quota(rpm))),
            tokens,
            in_flight: Arc::new(Semaphore::new(config.settings.max_in_flight.max(1))),
            gate: Mutex::new(()),
            clock: DefaultClock::default(),
            admitted: AtomicU64::new(0),
            estimated_tokens: AtomicU64::new(0),
            reported_tokens: AtomicU64::new(0),
            waited_nanos: AtomicU64::new(0),
            paused_nanos: AtomicU64::new(0),
        };
        if let Some(tokens) = &limits.tokens {
            let least = estimate_tokens(0, limits.max_tokens);
            if least > u64::from(tokens.per_minute.get()) {
                return Err(LlmError::ExceedsTokenLimit {
                    estimated: least,
                    per_request: u64::from(tokens.per_minute.get()),
                    tokens_per_minute: tokens.per_minute.get(),
                });
            }
        }
        Ok(limits)
    }

    /// The tokens a request with a body of `body_bytes` is charged: the
    /// calibrated estimate once the server has reported a few replies' usage,
    /// the byte bound ([`estimate_tokens`]) before.
    pub fn estimate_tokens(&self, body_bytes: usize) -> u64 {
        match &self.tokens {
            Some(tokens) => lock(&tokens.estimator).estimate(body_bytes),
            None => estimate_tokens(body_bytes, self.max_tokens),
        }
    }

    /// Whether requests are charged tokens (a tpm limit is set).
    pub fn limits_tokens(&self) -> bool {
        self.tokens.is_some()
    }

    pub fn stats(&self) -> LimitStats {
        LimitStats {
            requests: self.admitted.load(Ordering::Relaxed),
            estimated_tokens: self.estimated_tokens.load(Ordering::Relaxed),
            reported_tokens: self.reported_tokens.load(Ordering::Relaxed),
            waited: Duration::from_nanos(self.waited_nanos.load(Ordering::Relaxed)),
            paused: Duration::from_nanos(self.paused_nanos.load(Ordering::Relaxed)),
        }
    }

    /// Admit a request at once if nothing stands in its way: no pause, nobody
    /// queued at the gate, a free slot and room in the limits. `None` means
    /// it must wait its turn in [`Limits::admit`]; a caller holding a large
    /// body can drop it before waiting, instead of holding it in the queue.
    ///
    /// The request is charged [`Limits::estimate_tokens`] of `body_bytes`,
    /// estimated when it is let through, so that a request that waited is
    /// charged what the latest replies taught, not what was known when it
    /// started waiting.
    pub fn try_admit(
        &self,
        body_bytes: usize,
        pause: &Pause,
    ) -> Result<Option<Admission>, LlmError> {
        let estimated_tokens = self.check_fits(self.estimate_tokens(body_bytes))?;
        if pause.remaining().is_some() {
            return Ok(None);
        }
        let Ok(gate) = self.gate.try_lock() else {
            return Ok(None);
        };
        let Ok(slot) = self.in_flight.clone().try_acquire_owned() else {
            return Ok(None);
        };
        let Ok(charge) = self.take(estimated_tokens) else {
            return Ok(None);
        };
        drop(gate);
        Ok(Some(self.admitted(
            slot,
            charge,
            estimated_tokens,
            Duration::ZERO,
            Duration::ZERO,
        )))
    }

    /// Wait until a request with a body of `body_bytes` may be sent (see the
    /// module docs). A request too large to ever fit the tpm limit fails at once.
    pub async fn admit(&self, body_bytes: usize, pause: &Pause) -> Result<Admission, LlmError> {
        self.check_fits(self.estimate_tokens(body_bytes))?;
        let started = Instant::now();
        // Paused callers wait side by side, not one after another in the queue.
        let mut paused = pause.wait().await;
        let gate = self.gate.lock().await;
        let (slot, charge, estimated_tokens) = loop {
            paused += pause.wait().await;
            let slot = self.free_slot().await?;
            // A 429 may have paused the endpoint while we waited for the slot.
            if pause.remaining().is_some() {
                continue;
            }
            let estimated_tokens = self.check_fits(self.estimate_tokens(body_bytes))?;
            match self.take(estimated_tokens) {
                Ok(charge) => break (slot, charge, estimated_tokens),
                Err(wait) => {
                    drop(slot);
                    match &self.tokens {
                        Some(tokens) => {
                            tokio::select! {
                                () = tokio::time::sleep(wait) => {}
                                () = tokens.freed.notified() => {}
                            }
                        }
                        None => tokio::time::sleep(wait).await,
                    }
                }
            }
        };
        drop(gate);
        let waited = started.elapsed().saturating_sub(paused);
        Ok(self.admitted(slot, charge, estimated_tokens, waited, paused))
    }

    /// The reply to an admitted request arrived: settle its charge with the
    /// usage the server reported (`None`: none was reported, the estimate
    /// stands), and learn from it for the next estimates.
    pub fn settle(&self, admission: &Admission, body_bytes: usize, usage: Option<(u64, u64)>) {
        let (Some(tokens), Some((prompt, completion))) = (&self.tokens, usage) else {
            return;
        };
        let reported = prompt + completion;
        self.reported_tokens.fetch_add(reported, Ordering::Relaxed);
        lock(&tokens.estimator).observe(body_bytes, prompt, completion);
        if let Some(charge) = admission.charge {
            if lock(&tokens.budget).settle(charge, reported) {
                tokens.freed.notify_one();
            }
        }
    }

    /// A server's `x-ratelimit-remaining-tokens` and its reset: where it says
    /// less is left than the ledger, the difference is held back until then.
    pub fn observe_remaining_tokens(&self, remaining: u64, reset: Duration) {
        if let Some(tokens) = &self.tokens {
            lock(&tokens.budget).observe_remaining(Instant::now(), remaining, reset);
        }
    }

    fn admitted(
        &self,
        slot: OwnedSemaphorePermit,
        charge: Option<Charge>,
        estimated_tokens: u64,
        waited: Duration,
        paused: Duration,
    ) -> Admission {
        self.admitted.fetch_add(1, Ordering::Relaxed);
        if charge.is_some() {
            self.estimated_tokens
                .fetch_add(estimated_tokens, Ordering::Relaxed);
        }
        self.waited_nanos
            .fetch_add(nanos(waited), Ordering::Relaxed);
        self.paused_nanos
            .fetch_add(nanos(paused), Ordering::Relaxed);
        Admission {
            _slot: slot,
            charge,
            waited,
            paused,
        }
    }

    async fn free_slot(&self) -> Result<OwnedSemaphorePermit, LlmError> {
        let closed = |_| LlmError::InvalidRequest("the endpoint is shut down".into());
        self.in_flight.clone().acquire_owned().await.map_err(closed)
    }

    /// The tokens a request is charged: its estimate, or the whole limit for
    /// an estimate above it while the estimate is still the byte bound (the
    /// request then runs alone and is settled at what it really cost). An
    /// error when a calibrated estimate can never fit.
    fn check_fits(&self, estimated_tokens: u64) -> Result<u64, LlmError> {
        let Some(tokens) = &self.tokens else {
            return Ok(estimated_tokens);
        };
        let limit = u64::from(tokens.per_minute.get());
        if estimated_tokens <= limit {
            return Ok(estimated_tokens);
        }
        if !lock(&tokens.estimator).calibrated() {
            return Ok(limit);
        }
        Err(LlmError::ExceedsTokenLimit {
            estimated: estimated_tokens,
            per_request: limit,
            tokens_per_minute: tokens.per_minute.get(),
        })
    }

    /// Charge the tokens, then take the rpm cell; `Err(wait)` if either says
    /// not yet (a charge made is undone when the rpm cell is refused).
    fn take(&self, estimated_tokens: u64) -> Result<Option<Charge>, Duration> {
        let charge = match &self.tokens {
            Some(tokens) => {
                let mut budget = lock(&tokens.budget);
                Some(budget.try_charge(Instant::now(), estimated_tokens)?)
            }
            None => None,
        };
        if let Some(requests) = &self.requests {
            if let Err(not_until) = requests.check() {
                if let (Some(tokens), Some(charge)) = (&self.tokens, charge) {
                    lock(&tokens.budget).settle(charge, 0);
                }
                return Err(not_until.wait_time_from(self.clock.now()));
            }
        }
        Ok(charge)
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use governor::clock::FakeRelativeClock;

    const MINUTE: Duration = Duration::from_secs(60);

    fn nz(n: u32) -> NonZeroU32 {
        NonZeroU32::new(n).unwrap()
    }

    /// Send requests of `sizes` (cycled) as fast as `quota` lets them through
    /// for `span`; returns (time since start, cells) of each.
    fn greedy(quota: Quota, sizes: &[u32], span: Duration) -> Vec<(Duration, u32)> {
        greedy_waking_late(quota, sizes, span, Duration::ZERO)
    }

    /// `greedy`, with every sleep rounded up to the next millisecond and then
    /// `late` more, as timers do.
    fn greedy_waking_late(
        quota: Quota,
        sizes: &[u32],
        span: Duration,
        late: Duration,
    ) -> Vec<(Duration, u32)> {
        let clock = FakeRelativeClock::default();
        let limiter = RateLimiter::direct_with_clock(quota, clock.clone());
        let mut sent = Vec::new();
        let mut elapsed = Duration::ZERO;
        for &size in sizes.iter().cycle() {
            loop {
                match limiter.check_n(nz(size)).unwrap() {
                    Ok(()) => break,
                    Err(not_until) => {
                        let mut wait = not_until.wait_time_from(clock.now());
                        if !late.is_zero() {
                            let ms = wait.as_nanos().div_ceil(1_000_000) as u64;
                            wait = Duration::from_millis(ms) + late;
                        }
                        clock.advance(wait);
                        elapsed += wait;
                    }
                }
            }
            if elapsed > span {
                return sent;
            }
            sent.push((elapsed, size));
        }
        sent
    }

    /// The most cells in any closed 60 s window (`sent` is in time order).
    fn busiest_minute(sent: &[(Duration, u32)]) -> u64 {
        let (mut best, mut in_window, mut end) = (0, 0, 0);
        for (start, &(t0, _)) in sent.iter().enumerate() {
            while end < sent.len() && sent[end].0 <= t0 + MINUTE {
                in_window += u64::from(sent[end].1);
                end += 1;
            }
            best = best.max(in_window);
            if start < end {
                in_window -= u64::from(sent[start].1);
            }
        }
        best
    }

    #[test]
    fn governors_own_per_minute_quota_lets_twice_the_limit_through_in_the_first_minute() {
        let sent = greedy(Quota::per_minute(nz(10)), &[1], 5 * MINUTE);
        assert_eq!(busiest_minute(&sent), 20, "a burst of 10, then 10 refills");
    }

    #[test]
    fn rpm_is_never_exceeded_in_any_minute_and_is_reached_in_the_long_run() {
        for rpm in [1, 2, 7, 60, 120, 600, 1199, 6000] {
            let sent = greedy(request_quota(nz(rpm)), &[1], 10 * MINUTE);
            assert!(busiest_minute(&sent) <= u64::from(rpm), "rpm {rpm}");
            // The burst at t = 0, then one request every 60 s / refill for
            // 10 minutes: no burst below 1200 rpm, so exactly 10 · rpm.
            let burst = u64::from((rpm / 600).max(1));
            let refill = u64::from(rpm) + 1 - burst;
            assert_eq!(sent.len() as u64, burst + 10 * refill - 1, "rpm {rpm}");
        }
    }

    #[test]
    fn high_rpm_is_held_in_every_minute_and_reached_by_callers_that_wake_late() {
        let late = Duration::from_micros(700);
        for rpm in [1200, 6000, 20_000] {
            let sent = greedy_waking_late(request_quota(nz(rpm)), &[1], 3 * MINUTE, late);
            assert!(busiest_minute(&sent) <= u64::from(rpm), "rpm {rpm}");
            let per_minute = sent.len() as f64 / 3.0;
            assert!(
                per_minute >= 0.98 * f64::from(rpm),
                "rpm {rpm}: {per_minute}"
            );
        }
    }

    #[test]
    fn rpm_spaces_requests_evenly_instead_of_bursting() {
        let sent = greedy(request_quota(nz(120)), &[1], Duration::from_secs(5));
        let times: Vec<u128> = sent.iter().map(|(t, _)| t.as_millis()).collect();
        assert_eq!(
            times,
            [0, 500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500]
        );
    }

    #[test]
    fn the_estimate_counts_every_byte_plus_the_allowance_and_max_tokens() {
        assert_eq!(estimate_tokens(1000, 64), 1000 + 256 + 64);
        // Two CJK characters are six bytes, so up to six tokens: counted as six.
        let body = serde_json::json!({"content": "東京"}).to_string();
        assert_eq!(body.len(), 20);
        assert_eq!(estimate_tokens(body.len(), 0), 20 + 256);
    }
}
