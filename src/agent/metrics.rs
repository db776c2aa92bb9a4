//! `/aggregate_metrics`: NeMo Gym's rollout collection sends back the
//! verify responses it collected (stripped of their conversations) and
//! reads `AggregateMetrics`: per task (`_ng_task_index`), per repeat
//! (`_ng_rollout_index`) and overall reward statistics, with the names
//! NeMo Gym's own `RewardProfiler` gives them (`mean/reward`, ...; the
//! standard deviation is the sample one, as NeMo Gym's). Masked samples
//! (`mask_sample = true`) are not measurements and are left out.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::error::Invalid;
use super::request::{ROLLOUT_INDEX, TASK_INDEX};

/// Read the request and compute the answer.
pub fn aggregate(body: &[u8]) -> Result<Value, Invalid> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Invalid::at(&[], format!("the body is not JSON ({e})")))?;
    let Some(list) = value.get("verify_responses").and_then(Value::as_array) else {
        return Err(Invalid::at(
            &["verify_responses"],
            "is missing or not a list of verify responses",
        ));
    };
    let mut rollouts = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let Some(entry) = entry.as_object() else {
            return Err(Invalid::at(
                &["verify_responses", &i.to_string()],
                "is not an object",
            ));
        };
        if entry.get("mask_sample").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let Some(reward) = entry.get("reward").and_then(Value::as_f64) else {
            return Err(Invalid::at(
                &["verify_responses", &i.to_string(), "reward"],
                "is missing or not a number",
            ));
        };
        rollouts.push((
            entry.get(TASK_INDEX).and_then(Value::as_u64),
            entry.get(ROLLOUT_INDEX).and_then(Value::as_u64),
            reward,
        ));
    }
    Ok(metrics(&rollouts))
}

/// `(task index, rollout index, reward)` of each measured rollout.
fn metrics(rollouts: &[(Option<u64>, Option<u64>, f64)]) -> Value {
    let mut by_task: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let mut by_repeat: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let mut all = Vec::with_capacity(rollouts.len());
    for &(task, repeat, reward) in rollouts {
        if let Some(task) = task {
            by_task.entry(task).or_default().push(reward);
        }
        if let Some(repeat) = repeat {
            by_repeat.entry(repeat).or_default().push(reward);
        }
        all.push(reward);
    }
    let group_level: Vec<Value> = by_task
        .iter()
        .map(|(task, rewards)| {
            let mut m = summary(rewards);
            m.insert(TASK_INDEX.into(), json!(task));
            m.insert("num_rollouts".into(), json!(rewards.len()));
            Value::Object(m)
        })
        .collect();
    let repeat_level: Vec<Value> = by_repeat
        .iter()
        .map(|(repeat, rewards)| {
            let mut m = summary(rewards);
            m.insert(ROLLOUT_INDEX.into(), json!(repeat));
            m.insert("sample_count".into(), json!(rewards.len()));
            Value::Object(m)
        })
        .collect();
    let mut agent = summary(&all);
    agent.insert("num_rollouts".into(), json!(all.len()));
    agent.insert("num_tasks".into(), json!(by_task.len()));
    let key = json!({"mean/reward": agent.get("mean/reward").cloned().unwrap_or(Value::Null)});
    json!({
        "group_level_metrics": group_level,
        "agent_metrics": agent,
        "key_metrics": key,
        "repeat_level_metrics": repeat_level,
    })
}

/// Mean, max, min, median and sample standard deviation of `rewards`
/// (nothing for none).
fn summary(rewards: &[f64]) -> Map<String, Value> {
    let mut m = Map::new();
    if rewards.is_empty() {
        return m;
    }
    let n = rewards.len() as f64;
    let mean = rewards.iter().sum::<f64>() / n;
    let mut sorted = rewards.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    let median = if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    };
    let std = if rewards.len() > 1 {
        (rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    m.insert("mean/reward".into(), json!(mean));
    m.insert("max/reward".into(), json!(sorted[sorted.len() - 1]));
    m.insert("min/reward".into(), json!(sorted[0]));
    m.insert("median/reward".into(), json!(median));
    m.insert("std/reward".into(), json!(std));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewards_are_summarised_per_task_per_repeat_and_overall_as_nemo_gym_names_them() {
        let body = json!({"verify_responses": [
            {"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0},
            {"_ng_task_index": 0, "_ng_rollout_index": 1, "reward": 0.0},
            {"_ng_task_index": 1, "_ng_rollout_index": 0, "reward": 1.0},
            {"_ng_task_index": 1, "_ng_rollout_index": 1, "reward": 0.0, "mask_sample": true},
        ]});
        let m = aggregate(body.to_string().as_bytes()).unwrap();
        let agent = &m["agent_metrics"];
        assert!((agent["mean/reward"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
        // NeMo Gym's figure for these three rewards (sample standard deviation).
        assert!((agent["std/reward"].as_f64().unwrap() - 0.5773502691896258).abs() < 1e-12);
        assert_eq!(agent["num_rollouts"], 3, "the masked sample is left out");
        assert_eq!(m["group_level_metrics"][0]["mean/reward"], 0.5);
        assert_eq!(m["group_level_metrics"][1]["num_rollouts"], 1);
        assert_eq!(m["repeat_level_metrics"][0]["mean/reward"], 1.0);
        assert_eq!(m["key_metrics"]["mean/reward"], agent["mean/reward"]);
    }

    #[test]
    fn a_request_without_a_reward_names_the_entry() {
        let e = aggregate(br#"{"verify_responses": [{"reward": 1}, {}]}"#).unwrap_err();
        assert_eq!(e.field, ["verify_responses", "1", "reward"]);
        assert_eq!(aggregate(b"{}").unwrap_err().field, ["verify_responses"]);
    }
}
