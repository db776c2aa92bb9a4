//! The diversity planner: the brief of proposal `index` of a run, from
//! `[diversity]` and the run's seed alone, so the same proposal gets the same
//! brief whatever the concurrency, the order proposals finish in, a resume,
//! or which earlier proposals were accepted.
//!
//! Plain random draws would miss a 5% share by 2 to 3 points over a few
//! hundred proposals. Instead each knob reads one coordinate of a Kronecker
//! (irrational rotation) sequence, `offset + index × step` modulo 1, a
//! low-discrepancy sequence: over the first `n` indices, the number falling in
//! an interval of length `s` is within a few units of `n × s` (measured on
//! random intervals: within 4 for every `n` up to 200,000, for each of the
//! three steps below; the tests hold the planner to 4). Three coordinates with
//! steps that are rationally independent (the golden ratio, √2, √3), so the
//! knobs vary jointly rather than in lockstep:
//!
//! - **kind**: `[0, 1)` cut into the outcome mix: resolve first, then
//!   refusal, then transfer. Within resolve, required tools take consecutive
//!   intervals of their planned shares from the start, and multi-intent
//!   takes the last `multi_intent` of it (the two overlap only when their
//!   shares do not fit side by side).
//! - **difficulty**: `[0, 1)` cut into the difficulty mix.
//! - **tags**: each tag an arc of its share laid end to end around the
//!   circle: a brief gets one tag when the shares sum to at most 1, and
//!   overlapping arcs give some briefs two when they sum to more.

use crate::config::synth::diversity::DiversityConfig;

use super::brief::{Outcome, ProposalBrief};
use crate::minhash::splitmix64;

/// 2^64 / φ: the golden ratio's rotation, the best spread in one dimension.
const KIND_STEP: u64 = 0x9e37_79b9_7f4a_7c15;
/// frac(√2) × 2^64.
const DIFFICULTY_STEP: u64 = 0x6a09_e667_f3bc_c908;
/// frac(√3) × 2^64.
const TAG_STEP: u64 = 0xbb67_ae85_84ca_a73b;

/// The brief of proposal `index` of a run seeded `seed`. An empty
/// `[diversity]` gives the empty brief (the generator's choice) to all.
pub fn plan_brief(diversity: &DiversityConfig, seed: u64, index: u64) -> ProposalBrief {
    let mut brief = ProposalBrief::default();
    let kind = coordinate(seed, 1, KIND_STEP, index);
    let resolve = if diversity.plans_outcomes() {
        diversity.resolve_share()
    } else {
        1.0
    };
    if kind < resolve {
        let mut end = 0.0;
        for tool in &diversity.tools {
            end += tool.planned_share;
            if kind < end {
                brief.tools.push(tool.name.clone());
                break;
            }
        }
        brief.multi_intent = kind >= resolve - diversity.multi_intent;
    }
    if diversity.plans_outcomes() {
        brief.outcome = Some(if kind < resolve {
            Outcome::Resolve
        } else if kind < resolve + diversity.refusal {
            Outcome::Refusal
        } else {
            Outcome::Transfer
        });
    }
    if let Some(last) = diversity.difficulty.last() {
        let x = coordinate(seed, 2, DIFFICULTY_STEP, index);
        let mut end = 0.0;
        let chosen = diversity
            .difficulty
            .iter()
            .find(|d| {
                end += d.share;
                x < end
            })
            .unwrap_or(last);
        brief.difficulty = Some(chosen.name.clone());
    }
    let x = coordinate(seed, 3, TAG_STEP, index);
    let mut start = 0.0;
    for tag in &diversity.tags {
        if (x - start).rem_euclid(1.0) < tag.share || tag.share >= 1.0 {
            brief.tags.push(tag.name.clone());
        }
        start = (start + tag.share).fract();
    }
    brief
}

/// Coordinate `dimension` of proposal `index`, in [0, 1): the rotation by
/// `step` from an offset the seed picks.
fn coordinate(seed: u64, dimension: u64, step: u64, index: u64) -> f64 {
    let offset = splitmix64(seed ^ splitmix64(dimension));
    let x = offset.wrapping_add(index.wrapping_mul(step));
    // The top 53 bits, exactly representable: [0, 1).
    (x >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
#[path = "diversity_tests.rs"]
mod tests;
