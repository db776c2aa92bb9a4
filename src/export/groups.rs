//! Rollout groups in exports and statistics: within a job, a scenario's
//! conversations (its samples, of every persona it was played with; a NeMo
//! Gym row is a scenario) are one group, as group-based RL (GRPO and its
//! kin) wants them. Each group's statistics come from
//! [`crate::rollout_group::GroupStats`] over **every** conversation of the
//! job with a reward, whatever an export's filters keep, so a row's
//! advantage is the same in every export of the job. Conversations without
//! a reward (not verified) belong to no group and get no group fields.

use std::collections::HashMap;

use serde::Serialize;

use crate::rollout_group::GroupStats;
use crate::store::{ConversationRow, ConversationStore, StoreError};

/// How a row's advantage is written: `--advantage`, the service's `advantage=`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Advantage {
    /// Reward minus the group's mean reward.
    #[default]
    Centered,
    /// That, divided by the group's standard deviation (unless it is 0).
    Normalized,
}

impl Advantage {
    /// The values `--advantage` takes, for messages.
    pub const CHOICES: &'static str = "centered, normalized";

    pub fn parse(text: &str) -> Option<Advantage> {
        match text {
            "centered" | "centred" => Some(Advantage::Centered),
            "normalized" | "normalised" => Some(Advantage::Normalized),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Advantage::Centered => "centered",
            Advantage::Normalized => "normalized",
        }
    }
}

/// A row's group fields (their names are the keys written).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupFields {
    /// `JOB:SCENARIO`: unique across jobs, so exports of several jobs can
    /// be concatenated.
    pub group_id: String,
    pub group_size: usize,
    pub group_reward_mean: f64,
    pub group_reward_std: f64,
    pub advantage: f64,
}

/// The names of [`GroupFields`], in order.
pub const FIELD_NAMES: [&str; 5] = [
    "group_id",
    "group_size",
    "group_reward_mean",
    "group_reward_std",
    "advantage",
];

/// How many groups a job has and how many of them are flat (every reward
/// equal: no learning signal), with the rewards of the flat ones, since
/// groups that all fail and groups that all succeed call for different
/// remedies.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GroupCounts {
    /// Scenarios with at least one reward.
    pub groups: u64,
    /// Rollouts with a reward, over all groups.
    pub rollouts: u64,
    /// The smallest and largest group.
    pub min_size: u64,
    pub max_size: u64,
    /// Groups whose rewards are all equal (a group of one rollout is flat).
    pub flat: u64,
    /// flat / groups.
    pub flat_share: f64,
    /// The mean of the flat groups' rewards (each group once); `None` without
    /// a flat group.
    pub flat_reward_mean: Option<f64>,
    /// Flat groups whose every reward is 0: the policy never solves them.
    pub flat_at_zero: u64,
    /// Flat groups whose every reward is 1: the policy always solves them.
    pub flat_at_one: u64,
}

/// The groups of one job, by scenario.
#[derive(Debug, Clone, Default)]
pub struct RolloutGroups {
    groups: HashMap<String, GroupStats>,
}

impl RolloutGroups {
    /// The groups of one job from its `(scenario, reward)` pairs, each
    /// scenario's rewards in the order given.
    pub fn of(rewards: impl IntoIterator<Item = (String, f64)>) -> RolloutGroups {
        let mut by_scenario: HashMap<String, Vec<f64>> = HashMap::new();
        for (scenario, reward) in rewards {
            by_scenario.entry(scenario).or_default().push(reward);
        }
        RolloutGroups {
            groups: by_scenario
                .into_iter()
                .filter_map(|(scenario, rewards)| Some((scenario, GroupStats::of(&rewards)?)))
                .collect(),
        }
    }

    /// The groups of job `job` as stored (every conversation with a reward).
    pub async fn read(
        store: &dyn ConversationStore,
        job: i64,
    ) -> Result<RolloutGroups, StoreError> {
        Ok(RolloutGroups::of(store.scenario_rewards(job).await?))
    }

    /// The group fields of conversation `c`; `None` when it has no reward.
    pub fn fields(&self, c: &ConversationRow, advantage: Advantage) -> Option<GroupFields> {
        let reward = c.reward?;
        let group = self.groups.get(&c.scenario_id)?;
        Some(GroupFields {
            group_id: format!("{}:{}", c.job_id, c.scenario_id),
            group_size: group.size,
            group_reward_mean: group.reward_mean,
            group_reward_std: group.reward_std,
            advantage: group.advantage(reward, advantage == Advantage::Normalized),
        })
    }

    /// How many groups there are and how many are flat; `None` without any.
    pub fn counts(&self) -> Option<GroupCounts> {
        if self.groups.is_empty() {
            return None;
        }
        let near = |a: f64, b: f64| (a - b).abs() <= crate::rollout_group::EPSILON;
        let flat: Vec<&GroupStats> = self.groups.values().filter(|g| g.flat).collect();
        let sizes = self.groups.values().map(|g| g.size as u64);
        let groups = self.groups.len() as u64;
        Some(GroupCounts {
            groups,
            rollouts: sizes.clone().sum(),
            min_size: sizes.clone().min().unwrap_or(0),
            max_size: sizes.max().unwrap_or(0),
            flat: flat.len() as u64,
            flat_share: flat.len() as f64 / groups as f64,
            flat_reward_mean: (!flat.is_empty())
                .then(|| flat.iter().map(|g| g.reward_mean).sum::<f64>() / flat.len() as f64),
            flat_at_zero: flat.iter().filter(|g| near(g.reward_mean, 0.0)).count() as u64,
            flat_at_one: flat.iter().filter(|g| near(g.reward_mean, 1.0)).count() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, scenario: &str, reward: Option<f64>) -> ConversationRow {
        ConversationRow {
            id,
            job_id: 7,
            item_id: id,
            item_key: format!("{scenario}/p/{id}"),
            scenario_id: scenario.into(),
            persona_id: "p".into(),
            sample: id,
            seed: 0,
            policy_model: "m".into(),
            user_model: "u".into(),
            termination: "user_stop".into(),
            reward,
            reward_breakdown: serde_json::Value::Null,
            metadata: serde_json::json!({}),
            tools: serde_json::json!([]),
            started_at: 0,
            finished_at: 0,
            user_checks: None,
        }
    }

    fn groups() -> RolloutGroups {
        let rewards = [
            ("mixed", 1.0),
            ("mixed", 0.0),
            ("mixed", 1.0),
            ("mixed", 0.0),
            ("failing", 0.0),
            ("failing", 0.0),
            ("solved", 1.0),
            ("solved", 1.0),
            ("half", 0.5),
            ("half", 0.5),
        ];
        RolloutGroups::of(rewards.map(|(s, r)| (s.to_string(), r)))
    }

    #[test]
    fn each_row_gets_its_scenario_s_group_and_its_advantage_as_asked() {
        let g = groups();
        let won = g
            .fields(&row(1, "mixed", Some(1.0)), Advantage::Centered)
            .unwrap();
        assert_eq!(won.group_id, "7:mixed");
        assert_eq!(won.group_size, 4);
        assert_eq!((won.group_reward_mean, won.group_reward_std), (0.5, 0.5));
        assert_eq!(won.advantage, 0.5);
        let lost = g
            .fields(&row(2, "mixed", Some(0.0)), Advantage::Normalized)
            .unwrap();
        assert_eq!(lost.advantage, -1.0);
        let flat = g
            .fields(&row(3, "solved", Some(1.0)), Advantage::Normalized)
            .unwrap();
        assert_eq!(flat.advantage, 0.0, "a flat group's advantages are 0");
    }

    #[test]
    fn a_conversation_without_a_reward_gets_no_group_fields() {
        let g = groups();
        assert_eq!(g.fields(&row(4, "mixed", None), Advantage::Centered), None);
        assert_eq!(
            g.fields(&row(5, "unknown", Some(1.0)), Advantage::Centered),
            None
        );
        assert!(RolloutGroups::of([]).counts().is_none());
    }

    #[test]
    fn flat_groups_are_counted_with_what_their_rewards_are() {
        let c = groups().counts().unwrap();
        assert_eq!(
            (c.groups, c.rollouts, c.min_size, c.max_size),
            (4, 10, 2, 4)
        );
        assert_eq!(c.flat, 3);
        assert_eq!(c.flat_share, 0.75);
        assert_eq!(c.flat_reward_mean, Some(0.5));
        assert_eq!((c.flat_at_zero, c.flat_at_one), (1, 1));
    }

    #[test]
    fn advantage_names_read_in_either_spelling() {
        assert_eq!(Advantage::parse("centered"), Some(Advantage::Centered));
        assert_eq!(Advantage::parse("normalised"), Some(Advantage::Normalized));
        assert_eq!(Advantage::parse("z"), None);
        assert_eq!(Advantage::default().as_str(), "centered");
    }
}
