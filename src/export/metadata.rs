//! What a row says about the conversation it came from, so a team can filter
//! and stratify after export: ids, scenario, persona, termination, reward
//! and its components, and each judge's score. Every row of one export has
//! the same keys (a judge that did not score a conversation is `null`), so
//! `datasets` reads the column as one type and changes no row.
//!
//! Where it goes depends on what the format's readers accept: a `metadata`
//! column in `hf`, `sharegpt` and `dpo` rows (TRL and LLaMA-Factory ignore
//! columns they do not use); a sidecar file with the same line order for
//! `openai`, whose lines stay exactly what OpenAI's fine-tuning takes.
//!
//! A probe conversation's outcome is there as `probe` (family, strategy,
//! held, turn_of_flip; `null`s for any other conversation).
//!
//! The conversation's rollout group ([`super::groups`]) is there too:
//! `group_id`, `group_size`, `group_reward_mean`, `group_reward_std` and
//! `advantage`, each `null` for a conversation in no group (one without a
//! reward), so every row still has the same keys.

use serde_json::{json, Map, Value};

use super::groups::{GroupFields, FIELD_NAMES};
use super::JudgmentIndex;
use crate::store::StoredConversation;

/// The metadata of `c`, with a score (or `null`) for each of `judges` and
/// its `group`'s fields (or `null`s).
pub fn of(
    c: &StoredConversation,
    judgments: &JudgmentIndex,
    judges: &[String],
    group: Option<&GroupFields>,
) -> Value {
    let row = &c.conversation;
    let scores: Map<String, Value> = judges
        .iter()
        .map(|judge| {
            let score = judgments.scores(row.id, judge).next();
            (judge.clone(), json!(score))
        })
        .collect();
    let mut metadata = json!({
        "conversation": row.id,
        "job": row.job_id,
        "scenario": row.scenario_id,
        "persona": row.persona_id,
        "sample": row.sample,
        "seed": row.seed,
        "policy_model": row.policy_model,
        "termination": row.termination,
        "reward": row.reward,
        "reward_breakdown": component_scores(&row.reward_breakdown),
        "judges": scores,
        "probe": probe(&row.metadata),
    });
    if let Some(map) = metadata.as_object_mut() {
        let fields = group.map(|g| json!(g)).unwrap_or(Value::Null);
        for name in FIELD_NAMES {
            map.insert(
                name.into(),
                fields.get(name).cloned().unwrap_or(Value::Null),
            );
        }
    }
    metadata
}

/// A probe's outcome as rows keep it: family, strategy, held and
/// turn_of_flip, each `null` for a conversation of no probe (or undecided),
/// so every row has the same keys.
fn probe(metadata: &Value) -> Value {
    let outcome = metadata.get("probe");
    let field = |name: &str| {
        outcome
            .and_then(|o| o.get(name))
            .cloned()
            .unwrap_or(Value::Null)
    };
    json!({
        "family": field("family"),
        "strategy": field("strategy"),
        "held": field("held"),
        "turn_of_flip": field("turn_of_flip"),
    })
}

/// `[{component, score}]` of a stored breakdown (`{component: {score, ...}}`),
/// in name order: a list, because conversations may have different
/// components, and the components' details vary too much for one column type.
fn component_scores(breakdown: &Value) -> Value {
    let scores: Vec<Value> = breakdown
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, part)| {
            let score = part.get("score").and_then(Value::as_f64)?;
            Some(json!({"component": name, "score": score}))
        })
        .collect();
    Value::Array(scores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_breakdown_is_read_down_to_its_component_scores() {
        let stored = json!({
            "db": {"score": 1.0, "diff": []},
            "communicate": {"score": 0.5, "missing": ["x"]},
            "odd": "no score",
        });
        assert_eq!(
            component_scores(&stored),
            json!([
                {"component": "communicate", "score": 0.5},
                {"component": "db", "score": 1.0},
            ])
        );
        assert_eq!(component_scores(&Value::Null), json!([]));
    }
}
