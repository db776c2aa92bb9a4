//! Statistics over many judgments: win rate with a bootstrap interval,
//! position consistency and bias, and pass^k. (Means and their intervals are
//! the report's: `report::interval`.)
//! Only `ok` judgments go in: the caller leaves failed and unparseable out.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::verdict::Preference;

/// Wins, ties and losses of A against B (pairwise verdicts in the original
/// order: `A` is the judged conversation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WinTieLoss {
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
}

impl WinTieLoss {
    pub fn count(verdicts: &[Preference]) -> Self {
        let mut counts = WinTieLoss::default();
        for v in verdicts {
            match v {
                Preference::A => counts.wins += 1,
                Preference::Tie => counts.ties += 1,
                Preference::B => counts.losses += 1,
            }
        }
        counts
    }

    pub fn total(&self) -> usize {
        self.wins + self.ties + self.losses
    }

    /// (wins + ties / 2) / total; `None` for no verdicts.
    pub fn win_rate(&self) -> Option<f64> {
        let total = self.total();
        (total > 0).then(|| (self.wins as f64 + 0.5 * self.ties as f64) / total as f64)
    }

    pub fn tie_rate(&self) -> Option<f64> {
        let total = self.total();
        (total > 0).then(|| self.ties as f64 / total as f64)
    }
}

/// A win rate with its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WinRate {
    pub counts: WinTieLoss,
    /// Ties count half.
    pub rate: f64,
    pub ci95: (f64, f64),
    pub resamples: usize,
}

/// The win rate of A with a 95% bootstrap interval, percentile method: draw
/// `resamples` samples of the verdicts with replacement (a seeded RNG, so the
/// same input and seed give the same interval), compute each one's win rate,
/// sort them, and take the values at ranks ⌈0.025·B⌉ and ⌈0.975·B⌉ (1-based).
/// `None` for no verdicts or no resamples.
pub fn win_rate(verdicts: &[Preference], resamples: usize, seed: u64) -> Option<WinRate> {
    let counts = WinTieLoss::count(verdicts);
    let rate = counts.win_rate()?;
    if resamples == 0 {
        return None;
    }
    // A win is worth 2, a tie 1, a loss 0, in half-points: sums stay integers.
    let points: Vec<u32> = verdicts
        .iter()
        .map(|v| match v {
            Preference::A => 2,
            Preference::Tie => 1,
            Preference::B => 0,
        })
        .collect();
    let n = points.len();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut rates: Vec<f64> = (0..resamples)
        .map(|_| {
            let half_points: u64 = (0..n)
                .map(|_| u64::from(points[rng.random_range(0..n)]))
                .sum();
            half_points as f64 / (2 * n) as f64
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    // Rank ⌈per_mille · B / 1000⌉, in integers so no rounding moves it.
    let at_rank = |per_mille: usize| {
        let rank = (per_mille * resamples).div_ceil(1000);
        rates[rank.clamp(1, resamples) - 1]
    };
    Some(WinRate {
        counts,
        rate,
        ci95: (at_rank(25), at_rank(975)),
        resamples,
    })
}

/// The share of swap-checked judgments whose two orders agreed; `None` when
/// there are none. Pass each judgment's `consistent` flag (`None`s are skipped).
pub fn position_consistency(flags: impl IntoIterator<Item = Option<bool>>) -> Option<f64> {
    let (agreed, total) = flags
        .into_iter()
        .flatten()
        .fold((0usize, 0usize), |(a, t), f| (a + usize::from(f), t + 1));
    (total > 0).then(|| agreed as f64 / total as f64)
}

/// Position bias: of the individual pairwise calls that preferred one answer,
/// the share that preferred whichever was shown first. Pass each call's parsed
/// preference in its own order (a call record's `parsed`), so `A` is the first
/// answer in every order. Ties are left out. 0.5 is unbiased; `None` when no
/// call preferred either.
pub fn first_position_rate(calls: &[Preference]) -> Option<f64> {
    let first = calls.iter().filter(|p| **p == Preference::A).count();
    let second = calls.iter().filter(|p| **p == Preference::B).count();
    let decided = first + second;
    (decided > 0).then(|| first as f64 / decided as f64)
}

/// One scenario's trials: how many were run and how many succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trials {
    pub n: u64,
    pub successes: u64,
}

/// pass^k (tau-bench): the chance that k trials of a scenario drawn without
/// replacement all succeed, C(c, k) / C(n, k), averaged over scenarios.
/// Scenarios with fewer than k trials are left out; `None` when none is left
/// (or k is 0).
pub fn pass_hat_k(scenarios: &[Trials], k: u64) -> Option<f64> {
    if k == 0 {
        return None;
    }
    let values: Vec<f64> = scenarios
        .iter()
        .filter(|t| t.n >= k)
        .map(|t| {
            // C(c, k) / C(n, k) = Π_{i<k} (c − i) / (n − i); 0 when c < k.
            (0..k)
                .map(|i| t.successes.saturating_sub(i) as f64 / (t.n - i) as f64)
                .product::<f64>()
        })
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Preference::{Tie, A, B};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn ties_count_half_in_the_win_rate() {
        // W, W, L, T: (2 + 0.5) / 4 = 0.625; tie rate 1/4.
        let counts = WinTieLoss::count(&[A, A, B, Tie]);
        assert_eq!(
            counts,
            WinTieLoss {
                wins: 2,
                ties: 1,
                losses: 1
            }
        );
        assert_eq!(counts.win_rate(), Some(0.625));
        assert_eq!(counts.tie_rate(), Some(0.25));
        assert_eq!(WinTieLoss::default().win_rate(), None);
    }

    #[test]
    fn all_wins_give_the_interval_one_to_one() {
        // Every resample of all-wins is all wins: rate 1 in each of the B draws.
        let w = win_rate(&[A; 7], 1000, 1).unwrap();
        assert_eq!((w.rate, w.ci95), (1.0, (1.0, 1.0)));
        let l = win_rate(&[B; 3], 200, 9).unwrap();
        assert_eq!((l.rate, l.ci95), (0.0, (0.0, 0.0)));
    }

    #[test]
    fn a_win_and_a_loss_bootstrap_to_zero_and_one() {
        // Resampling [W, L] twice: WW (rate 1), WL or LW (0.5), LL (0):
        // probabilities 1/4, 1/2, 1/4. With B = 2000 draws, the 50th smallest is 0
        // unless fewer than 50 of 2000 draws are LL (expected 500, sd 19: never),
        // and likewise the 1950th is 1. So the interval is exactly [0, 1].
        let w = win_rate(&[A, B], 2000, 42).unwrap();
        assert_eq!(w.rate, 0.5);
        assert_eq!(w.ci95, (0.0, 1.0));
    }

    #[test]
    fn a_win_and_a_tie_bootstrap_to_a_half_and_one() {
        // [W, T] resampled: WW 1, WT/TW 0.75, TT 0.5 with probabilities 1/4, 1/2,
        // 1/4; the 2.5% and 97.5% points are the extremes, 0.5 and 1, as above.
        let w = win_rate(&[A, Tie], 2000, 7).unwrap();
        assert_eq!(w.rate, 0.75);
        assert_eq!(w.ci95, (0.5, 1.0));
    }

    #[test]
    fn the_bootstrap_is_deterministic_for_a_seed_and_brackets_the_rate() {
        let verdicts = [A, A, A, B, Tie, A, B, A, A, Tie, B, A];
        let one = win_rate(&verdicts, 1000, 2024).unwrap();
        let two = win_rate(&verdicts, 1000, 2024).unwrap();
        assert_eq!(one, two);
        // 7 wins, 2 ties, 3 losses of 12: (7 + 1) / 12 = 0.6667.
        assert!(close(one.rate, 8.0 / 12.0));
        let (lo, hi) = one.ci95;
        assert!(lo < one.rate && one.rate < hi, "{lo} {hi}");
        // Every resampled rate is a multiple of 1/24 (half-points over 2n).
        assert!(close((lo * 24.0).round(), lo * 24.0) && close((hi * 24.0).round(), hi * 24.0));
        assert!(lo >= 0.3 && hi <= 0.95, "{lo} {hi}");
        assert_eq!(win_rate(&[], 100, 1), None);
        assert_eq!(win_rate(&[A], 0, 1), None);
    }

    #[test]
    fn position_consistency_counts_only_swapped_judgments() {
        // 3 agreed, 1 did not, 1 not swap-checked: 3/4.
        let flags = [Some(true), Some(false), None, Some(true), Some(true)];
        assert_eq!(position_consistency(flags), Some(0.75));
        assert_eq!(position_consistency([None]), None);
    }

    #[test]
    fn first_position_rate_leaves_ties_out() {
        // A, A, A, B, tie: 3 of the 4 decided calls chose the first answer.
        assert_eq!(first_position_rate(&[A, A, A, B, Tie]), Some(0.75));
        assert_eq!(first_position_rate(&[Tie, Tie]), None);
    }

    #[test]
    fn pass_hat_k_by_hand() {
        let t = |n, successes| Trials { n, successes };
        let scenarios = [t(4, 2), t(4, 4), t(2, 2), t(1, 1), t(3, 0)];
        // k = 1: c/n per scenario: 2/4, 4/4, 2/2, 1/1, 0/3 → (0.5 + 1 + 1 + 1 + 0) / 5 = 0.7.
        assert!(close(pass_hat_k(&scenarios, 1).unwrap(), 0.7));
        // k = 2 (the n = 1 scenario is left out):
        // C(2,2)/C(4,2) = 1/6; C(4,2)/C(4,2) = 1; C(2,2)/C(2,2) = 1; C(0,2)/C(3,2) = 0
        // → (1/6 + 1 + 1 + 0) / 4 = 13/24.
        assert!(close(pass_hat_k(&scenarios, 2).unwrap(), 13.0 / 24.0));
        // k = 4: only the n = 4 scenarios: C(2,4)/C(4,4) = 0 and 1 → 0.5.
        assert!(close(pass_hat_k(&scenarios, 4).unwrap(), 0.5));
        assert_eq!(pass_hat_k(&scenarios, 5), None);
        assert_eq!(pass_hat_k(&scenarios, 0), None);
    }
}
