//! What a request will cost in tokens, estimated before it is sent and
//! learned from what the endpoint's server reports.
//!
//! Until the server has reported the usage of a few requests, the estimate
//! is the upper bound of [`estimate_tokens`]: a token per
//! byte of the body, plus a template allowance, plus `max_tokens`. After
//! that it is calibrated per endpoint:
//! - the prompt: the body's bytes times the highest ratio of reported prompt
//!   tokens to body bytes among the recent replies, with a margin;
//! - the completion: the largest recent completion with a margin, or
//!   `max_tokens` if that is smaller.
//!
//! The highest recent figures, not the mean, so that an estimate is rarely
//! below what the server then reports; the ledger ([`super::token_budget`])
//! settles each charge with the reported usage, so an over-estimate costs
//! the budget only while its request is in flight.

use std::collections::VecDeque;

/// Tokens allowed for what a chat template adds to a prompt beyond what the
/// JSON body holds, e.g. a tool-use preamble or a default system line.
pub const TEMPLATE_ALLOWANCE_TOKENS: u64 = 256;

/// The most tokens a request may cost, estimated before it is sent: one token
/// for every byte of its JSON body, plus [`TEMPLATE_ALLOWANCE_TOKENS`], plus
/// `max_tokens` for the reply (the server stops there).
///
/// A byte per token is an upper bound, not a guess. Byte-level BPE tokenizers
/// (GPT, Llama 3, Qwen, ...) never make a token of less than one byte, and
/// SentencePiece with byte fallback (Llama 2, Mistral) falls back to one token
/// per byte at worst. Ratios like "4 characters per token" hold for English
/// prose only: JSON, code and digits run at 2 to 3 bytes per token, CJK and
/// Indic scripts at 1 to 3 bytes per token, so they would overrun a tpm limit
/// set by such a ratio. The body's keys and quotes around every message are
/// more bytes than a template's role markers (a few tokens per message), and
/// the tool specs are in it as JSON, as templates render them. The price of
/// the bound: English prose is counted about four times over. So it is only
/// the estimate until the server has reported a few replies' usage
/// ([`TokenEstimator`]), and every charge is settled with the
/// reported usage ([`super::token_budget`]).
pub fn estimate_tokens(body_bytes: usize, max_tokens: u32) -> u64 {
    (body_bytes as u64)
        .saturating_add(TEMPLATE_ALLOWANCE_TOKENS)
        .saturating_add(u64::from(max_tokens))
}

/// Replies remembered for calibration.
pub const RECENT: usize = 64;
/// Replies needed before the estimate is calibrated.
pub const CALIBRATED_AFTER: usize = 4;
/// The margin over the highest recent prompt ratio and completion.
const MARGIN: f64 = 1.10;
/// Tokens added to every calibrated estimate (role markers, rounding).
const SLACK_TOKENS: u64 = 16;

/// The recent replies of one endpoint.
#[derive(Debug, Clone)]
pub struct TokenEstimator {
    max_tokens: u32,
    /// Reported prompt tokens per body byte.
    prompt_ratios: VecDeque<f64>,
    completions: VecDeque<u64>,
}

impl TokenEstimator {
    pub fn new(max_tokens: u32) -> Self {
        TokenEstimator {
            max_tokens,
            prompt_ratios: VecDeque::with_capacity(RECENT),
            completions: VecDeque::with_capacity(RECENT),
        }
    }

    /// Whether enough replies were seen to estimate from them.
    pub fn calibrated(&self) -> bool {
        self.prompt_ratios.len() >= CALIBRATED_AFTER
    }

    /// The tokens a request with a body of `body_bytes` will cost.
    pub fn estimate(&self, body_bytes: usize) -> u64 {
        if !self.calibrated() {
            return estimate_tokens(body_bytes, self.max_tokens);
        }
        let ratio = self.prompt_ratios.iter().copied().fold(0.0, f64::max) * MARGIN;
        let prompt = round_up(body_bytes as f64 * ratio);
        let largest = self.completions.iter().copied().max().unwrap_or(0);
        let completion = round_up(largest as f64 * MARGIN).min(u64::from(self.max_tokens));
        prompt + completion + SLACK_TOKENS
    }

    /// A reply to a request of `body_bytes` reported this usage.
    pub fn observe(&mut self, body_bytes: usize, prompt_tokens: u64, completion_tokens: u64) {
        if body_bytes == 0 {
            return;
        }
        push_recent(
            &mut self.prompt_ratios,
            prompt_tokens as f64 / body_bytes as f64,
        );
        push_recent(&mut self.completions, completion_tokens);
    }
}

/// The next whole number, ignoring the float error of a product like 20 × 1.1.
fn round_up(x: f64) -> u64 {
    (x - 1e-9).ceil().max(0.0) as u64
}

fn push_recent<T>(recent: &mut VecDeque<T>, value: T) {
    if recent.len() == RECENT {
        recent.pop_front();
    }
    recent.push_back(value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_calibration_the_estimate_is_the_byte_bound() {
        let mut e = TokenEstimator::new(200);
        assert_eq!(e.estimate(1000), estimate_tokens(1000, 200));
        for _ in 0..CALIBRATED_AFTER - 1 {
            e.observe(1000, 250, 40);
        }
        assert!(!e.calibrated());
        assert_eq!(e.estimate(1000), 1000 + 256 + 200);
    }

    #[test]
    fn after_calibration_it_follows_the_highest_recent_ratio_and_completion() {
        let mut e = TokenEstimator::new(200);
        e.observe(1000, 250, 40);
        e.observe(2000, 400, 10);
        e.observe(1000, 300, 30);
        e.observe(4000, 1000, 20);
        assert!(e.calibrated());
        // ratio 0.3 × 1.1 = 0.33 → 660 for 2000 bytes; completion 40 × 1.1 = 44.
        assert_eq!(e.estimate(2000), 660 + 44 + SLACK_TOKENS);
        // Far below the bound a byte per token gives.
        assert!(e.estimate(2000) < estimate_tokens(2000, 200) / 2);
    }

    #[test]
    fn the_completion_reserve_never_exceeds_max_tokens() {
        let mut e = TokenEstimator::new(50);
        for _ in 0..CALIBRATED_AFTER {
            e.observe(100, 25, 50);
        }
        assert_eq!(e.estimate(100), 28 + 50 + SLACK_TOKENS);
    }

    #[test]
    fn old_replies_are_forgotten() {
        let mut e = TokenEstimator::new(500);
        e.observe(100, 100, 400);
        for _ in 0..RECENT {
            e.observe(100, 20, 10);
        }
        assert_eq!(e.estimate(100), 22 + 11 + SLACK_TOKENS);
    }

    #[test]
    fn a_server_that_reports_more_than_a_token_per_byte_is_followed() {
        let mut e = TokenEstimator::new(10);
        for _ in 0..CALIBRATED_AFTER {
            e.observe(100, 300, 10);
        }
        assert!(e.estimate(100) >= 330);
    }
}
