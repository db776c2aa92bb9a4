//! Rollout groups for group-based RL (GRPO and its kin): the rollouts of one
//! task (a scenario, or a NeMo Gym row) form a group; each rollout's
//! advantage is its reward minus the group's mean, optionally divided by the
//! group's standard deviation. A group whose rewards are all equal gives no
//! learning signal: it is flagged `flat`. Shared by `report` (stats),
//! `export` (the rows' group fields) and the agent server's rollouts.

use serde::Serialize;

/// Rewards closer than this are equal (a flat group's test, and the
/// standard deviation under which advantages are not divided).
pub const EPSILON: f64 = 1e-9;

/// A group's reward statistics, over the rewards it has.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GroupStats {
    /// Rollouts with a reward.
    pub size: usize,
    pub reward_mean: f64,
    /// The population standard deviation (divided by n, as GRPO does).
    pub reward_std: f64,
    /// Every reward equal: no learning signal.
    pub flat: bool,
}

impl GroupStats {
    /// The statistics of `rewards`; `None` for a group with none.
    pub fn of(rewards: &[f64]) -> Option<GroupStats> {
        if rewards.is_empty() {
            return None;
        }
        let n = rewards.len() as f64;
        let mean = rewards.iter().sum::<f64>() / n;
        let variance = rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n;
        let (min, max) = rewards
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                (lo.min(*r), hi.max(*r))
            });
        Some(GroupStats {
            size: rewards.len(),
            reward_mean: mean,
            reward_std: variance.sqrt(),
            flat: max - min <= EPSILON,
        })
    }

    /// `reward`'s advantage in this group: reward minus the mean, divided by
    /// the standard deviation when `normalize` (and the deviation is not 0;
    /// a flat group's advantages are all 0 either way).
    pub fn advantage(&self, reward: f64, normalize: bool) -> f64 {
        let centred = reward - self.reward_mean;
        if normalize && self.reward_std > EPSILON {
            centred / self.reward_std
        } else {
            centred
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_std_and_advantages_of_a_mixed_group() {
        let g = GroupStats::of(&[1.0, 0.0, 1.0, 0.0]).unwrap();
        assert_eq!(g.size, 4);
        assert_eq!(g.reward_mean, 0.5);
        assert_eq!(g.reward_std, 0.5);
        assert!(!g.flat);
        assert_eq!(g.advantage(1.0, false), 0.5);
        assert_eq!(g.advantage(0.0, true), -1.0);
    }

    #[test]
    fn a_group_of_equal_rewards_is_flat_and_its_advantages_are_zero() {
        let g = GroupStats::of(&[0.7, 0.7, 0.7]).unwrap();
        assert!(g.flat);
        assert!(g.reward_std < EPSILON);
        assert!(g.advantage(0.7, true).abs() < EPSILON);
        assert!(g.advantage(0.7, false).abs() < EPSILON);
        let single = GroupStats::of(&[1.0]).unwrap();
        assert!(single.flat);
    }

    #[test]
    fn an_empty_group_has_no_statistics() {
        assert_eq!(GroupStats::of(&[]), None);
    }
}
