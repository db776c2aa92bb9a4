//! A judging job's items: one per judge and conversation (or pair of
//! conversations for the same scenario, persona and sample).

use std::collections::HashMap;

use crate::store::{NewItem, Store};

use super::super::error::RunError;
use super::load::Loaded;
use super::spec::{JudgingSpec, JudgingTarget};

/// Item key: `JUDGE:A` or `JUDGE:A:B` (conversation ids).
pub(super) fn item_key(judge: &str, a: i64, b: Option<i64>) -> String {
    match b {
        Some(b) => format!("{judge}:{a}:{b}"),
        None => format!("{judge}:{a}"),
    }
}

pub(super) fn parse_key(key: &str) -> Option<(&str, i64, Option<i64>)> {
    let mut parts = key.rsplitn(3, ':').collect::<Vec<_>>();
    parts.reverse();
    match parts.as_slice() {
        [judge, a, b] if b.parse::<i64>().is_ok() && a.parse::<i64>().is_ok() => {
            Some((judge, a.parse().ok()?, Some(b.parse().ok()?)))
        }
        _ => {
            let (judge, a) = key.rsplit_once(':')?;
            Some((judge, a.parse().ok()?, None))
        }
    }
}

pub(super) async fn plan(
    store: &dyn Store,
    loaded: &Loaded,
    spec: &JudgingSpec,
) -> Result<Vec<NewItem>, RunError> {
    let keep = |reward: Option<f64>| {
        spec.min_reward
            .is_none_or(|m| reward.is_some_and(|r| r >= m))
    };
    let mut items = Vec::new();
    match spec.target {
        JudgingTarget::Job { job_id } => {
            let conversations = store.conversation_keys(job_id).await?;
            for judge in &loaded.judges {
                for c in conversations.iter().filter(|c| keep(c.reward)) {
                    items.push(NewItem {
                        key: item_key(&judge.name, c.conversation_id, None),
                        scenario_id: c.scenario_id.clone(),
                        persona_id: c.persona_id.clone(),
                        sample: c.sample,
                        seed: 0,
                    });
                }
            }
        }
        JudgingTarget::Pairwise { a, b } => {
            let others: HashMap<(String, String, i64), i64> = store
                .conversation_keys(b)
                .await?
                .into_iter()
                .map(|c| ((c.scenario_id, c.persona_id, c.sample), c.conversation_id))
                .collect();
            let mine = store.conversation_keys(a).await?;
            for judge in &loaded.judges {
                for c in mine.iter().filter(|c| keep(c.reward)) {
                    let key = (c.scenario_id.clone(), c.persona_id.clone(), c.sample);
                    if let Some(&other) = others.get(&key) {
                        items.push(NewItem {
                            key: item_key(&judge.name, c.conversation_id, Some(other)),
                            scenario_id: c.scenario_id.clone(),
                            persona_id: c.persona_id.clone(),
                            sample: c.sample,
                            seed: 0,
                        });
                    }
                }
            }
        }
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_keys_round_trip_with_colons_in_judge_names() {
        assert_eq!(
            parse_key(&item_key("helpful", 12, None)),
            Some(("helpful", 12, None))
        );
        assert_eq!(
            parse_key(&item_key("pref", 3, Some(40))),
            Some(("pref", 3, Some(40)))
        );
        assert_eq!(parse_key(&item_key("a:b", 7, None)), Some(("a:b", 7, None)));
        assert_eq!(parse_key("nonsense"), None);
    }
}
