//! The groups of a rollouts stream: a scenario's k rollouts. A group is
//! closed, and its statistics and advantages computed
//! ([`crate::rollout_group::GroupStats`]), once each of its k rollouts is
//! finished: stored (with or without a reward) or failed. Memory: a reward
//! per finished rollout of a group still open.

use std::collections::HashMap;

use crate::rollout_group::GroupStats;

use super::lines::{Advantage, GroupLine};

pub struct Groups {
    job_id: i64,
    k: usize,
    open: HashMap<String, Group>,
    pub closed: usize,
    pub flat: usize,
}

#[derive(Default)]
struct Group {
    /// (conversation id, sample, reward)
    rollouts: Vec<(i64, i64, Option<f64>)>,
    failed: usize,
}

impl Groups {
    pub fn new(job_id: i64, k: u32) -> Groups {
        Groups {
            job_id,
            k: k as usize,
            open: HashMap::new(),
            closed: 0,
            flat: 0,
        }
    }

    pub fn open(&self) -> usize {
        self.open.len()
    }

    /// A stored rollout; its group's line when this closed it.
    pub fn rollout(
        &mut self,
        group: &str,
        conversation_id: i64,
        sample: i64,
        reward: Option<f64>,
    ) -> Option<GroupLine> {
        let entry = self.open.entry(group.to_string()).or_default();
        entry.rollouts.push((conversation_id, sample, reward));
        self.close_if_full(group)
    }

    /// A failed rollout; its group's line when this closed it.
    pub fn failure(&mut self, group: &str) -> Option<GroupLine> {
        self.open.entry(group.to_string()).or_default().failed += 1;
        self.close_if_full(group)
    }

    fn close_if_full(&mut self, group: &str) -> Option<GroupLine> {
        let full = self
            .open
            .get(group)
            .is_some_and(|g| g.rollouts.len() + g.failed >= self.k);
        if !full {
            return None;
        }
        let finished = self.open.remove(group)?;
        let line = group_line(self.job_id, group, self.k, &finished);
        self.closed += 1;
        if line.flat {
            self.flat += 1;
        }
        Some(line)
    }
}

fn group_line(job_id: i64, group: &str, k: usize, finished: &Group) -> GroupLine {
    let rewards: Vec<f64> = finished.rollouts.iter().filter_map(|r| r.2).collect();
    let stats = GroupStats::of(&rewards);
    let mut advantages = Vec::new();
    if let Some(stats) = &stats {
        let mut scored: Vec<_> = finished
            .rollouts
            .iter()
            .filter_map(|&(id, sample, reward)| reward.map(|r| (id, sample, r)))
            .collect();
        scored.sort_by_key(|&(_, sample, _)| sample);
        for (conversation_id, sample, reward) in scored {
            advantages.push(Advantage {
                conversation_id,
                sample,
                reward,
                advantage: stats.advantage(reward, false),
                normalized_advantage: stats.advantage(reward, true),
            });
        }
    }
    GroupLine {
        job_id,
        group_id: super::lines::group_id(job_id, group),
        scenario: group.to_string(),
        size: k,
        scored: rewards.len(),
        unscored: finished.rollouts.len() - rewards.len(),
        failed: finished.failed,
        reward_mean: stats.map(|s| s.reward_mean),
        reward_std: stats.map(|s| s.reward_std),
        // A group without a reward carries no signal either.
        flat: stats.is_none_or(|s| s.flat),
        advantages,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_closes_with_its_kth_rollout_failures_included() {
        let mut groups = Groups::new(1, 3);
        assert!(groups.rollout("a", 10, 0, Some(1.0)).is_none());
        assert!(groups.failure("a").is_none());
        assert!(groups.rollout("b", 11, 0, Some(0.0)).is_none());
        let line = groups.rollout("a", 12, 2, Some(0.0)).unwrap();
        assert_eq!((line.size, line.scored, line.failed), (3, 2, 1));
        assert_eq!(line.reward_mean, Some(0.5));
        assert_eq!(line.reward_std, Some(0.5));
        assert!(!line.flat);
        let by_sample: Vec<(i64, f64, f64)> = line
            .advantages
            .iter()
            .map(|a| (a.sample, a.advantage, a.normalized_advantage))
            .collect();
        assert_eq!(by_sample, vec![(0, 0.5, 1.0), (2, -0.5, -1.0)]);
        assert_eq!((groups.closed, groups.flat, groups.open()), (1, 0, 1));
    }

    #[test]
    fn a_group_of_equal_or_no_rewards_is_flat() {
        let mut groups = Groups::new(1, 2);
        groups.rollout("a", 1, 0, Some(1.0));
        assert!(groups.rollout("a", 2, 1, Some(1.0)).unwrap().flat);
        groups.rollout("b", 3, 0, None);
        let unscored = groups.failure("b").unwrap();
        assert!(unscored.flat);
        assert_eq!(unscored.reward_mean, None);
        assert!(unscored.advantages.is_empty());
        assert_eq!(groups.flat, 2);
    }
}
