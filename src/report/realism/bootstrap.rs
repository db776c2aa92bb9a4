//! Resampling conversations for the bootstrap interval of a difference.
//! Unmatched, each job's conversations are drawn with replacement on their
//! own; matched, scenarios are drawn with replacement and each draw brings
//! both jobs' conversations of that scenario (a paired bootstrap: a job
//! compared with itself then differs by exactly 0 in every draw). A seeded
//! RNG: the same jobs and seed give the same intervals. The interval is the
//! percentile one: the draws' differences sorted, the values at ranks
//! ⌈0.025·B⌉ and ⌈0.975·B⌉ of the B draws where the measure is defined.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// One draw: indices into the simulated job's and the real job's conversations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draw {
    pub sim: Vec<usize>,
    pub real: Vec<usize>,
}

/// `resamples` draws of two independent samples of sizes `sim` and `real`.
pub fn independent(sim: usize, real: usize, resamples: usize, seed: u64) -> Vec<Draw> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut pick = |n: usize| -> Vec<usize> {
        if n == 0 {
            return Vec::new();
        }
        (0..n).map(|_| rng.random_range(0..n)).collect()
    };
    (0..resamples)
        .map(|_| Draw {
            sim: pick(sim),
            real: pick(real),
        })
        .collect()
}

/// `resamples` draws of scenarios: `groups[i]` holds scenario i's
/// conversation indices in (the simulated job, the real job).
pub fn paired(groups: &[(Vec<usize>, Vec<usize>)], resamples: usize, seed: u64) -> Vec<Draw> {
    let mut rng = StdRng::seed_from_u64(seed);
    let n = groups.len();
    (0..resamples)
        .map(|_| {
            let mut draw = Draw {
                sim: Vec::new(),
                real: Vec::new(),
            };
            for _ in 0..n {
                let (sim, real) = &groups[rng.random_range(0..n)];
                draw.sim.extend(sim);
                draw.real.extend(real);
            }
            draw
        })
        .collect()
}

/// The percentile 95% interval of `values`; `None` for none.
pub fn percentile_interval(mut values: Vec<f64>) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let b = values.len();
    let at_rank = |per_mille: usize| values[(per_mille * b).div_ceil(1000).clamp(1, b) - 1];
    Some((at_rank(25), at_rank(975)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_and_another_seed_does_not() {
        assert_eq!(independent(10, 7, 50, 1), independent(10, 7, 50, 1));
        assert_ne!(independent(10, 7, 50, 1), independent(10, 7, 50, 2));
        let groups = vec![(vec![0], vec![0, 1]), (vec![1, 2], vec![2])];
        assert_eq!(paired(&groups, 20, 3), paired(&groups, 20, 3));
    }

    #[test]
    fn draws_keep_the_sizes_and_pairs_keep_scenarios_together() {
        let draws = independent(10, 7, 5, 1);
        assert!(draws.iter().all(|d| d.sim.len() == 10 && d.real.len() == 7));
        let groups = vec![(vec![0], vec![5]), (vec![1], vec![6])];
        for d in paired(&groups, 20, 3) {
            let sim_of_real: Vec<usize> = d.real.iter().map(|r| r - 5).collect();
            assert_eq!(d.sim, sim_of_real);
        }
    }

    #[test]
    fn the_percentile_interval_of_a_thousand_values() {
        let values: Vec<f64> = (1..=1000).map(f64::from).rev().collect();
        assert_eq!(percentile_interval(values), Some((25.0, 975.0)));
        assert_eq!(percentile_interval(vec![0.0; 3]), Some((0.0, 0.0)));
        assert_eq!(percentile_interval(Vec::new()), None);
    }
}
