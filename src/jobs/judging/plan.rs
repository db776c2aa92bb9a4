//! A judging job's items: one per judge and conversation (or pair of
//! conversations for the same scenario, persona and sample).

use std::collections::HashMap;

use crate::store::{ConversationKey, ConversationStore, NewItem, Store, StoredConversation};

use super::super::error::RunError;
use super::load::Loaded;
use super::spec::{JudgingSpec, JudgingTarget, MatchBy};

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
        JudgingTarget::Pairwise { a, b, ref match_by } => {
            for (c, other) in pairs(store, a, b, match_by).await? {
                if !keep(c.reward) {
                    continue;
                }
                for judge in &loaded.judges {
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
    Ok(items)
}

/// Each conversation of job `a` with the conversation of job `b` it is
/// paired with, in A's id order. Several of a job with the same match pair
/// in id order; one without a partner is left out.
async fn pairs(
    store: &dyn Store,
    a: i64,
    b: i64,
    match_by: &MatchBy,
) -> Result<Vec<(ConversationKey, i64)>, RunError> {
    let mine = store.conversation_keys(a).await?;
    let theirs = store.conversation_keys(b).await?;
    let (my_matches, their_matches) = match match_by {
        MatchBy::Scenario => (
            mine.iter().map(scenario_match).collect(),
            theirs.iter().map(scenario_match).collect(),
        ),
        MatchBy::Prompt | MatchBy::Metadata(_) => (
            matches_of(store, a, match_by).await?,
            matches_of(store, b, match_by).await?,
        ),
    };
    let mut partners: HashMap<String, std::collections::VecDeque<i64>> = HashMap::new();
    for (key, m) in theirs.iter().zip(their_matches) {
        if let Some(m) = m {
            partners
                .entry(m)
                .or_default()
                .push_back(key.conversation_id);
        }
    }
    Ok(mine
        .into_iter()
        .zip(my_matches)
        .filter_map(|(key, m)| {
            let other = partners.get_mut(&m?)?.pop_front()?;
            Some((key, other))
        })
        .collect())
}

fn scenario_match(c: &ConversationKey) -> Option<String> {
    Some(format!("{}\0{}\0{}", c.scenario_id, c.persona_id, c.sample))
}

/// The match of each of job `job`'s conversations (in id order), read a
/// page at a time.
async fn matches_of(
    store: &dyn ConversationStore,
    job: i64,
    match_by: &MatchBy,
) -> Result<Vec<Option<String>>, RunError> {
    const PAGE: u32 = 500;
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = store.conversations_page(job, after, PAGE).await?;
        let Some(last) = page.last() else {
            return Ok(out);
        };
        after = last.conversation.id;
        out.extend(page.iter().map(|c| match_of(c, match_by)));
    }
}

fn match_of(c: &StoredConversation, match_by: &MatchBy) -> Option<String> {
    match match_by {
        MatchBy::Scenario => Some(format!(
            "{}\0{}\0{}",
            c.conversation.scenario_id, c.conversation.persona_id, c.conversation.sample
        )),
        MatchBy::Prompt => {
            let text = |role: &str| {
                c.messages
                    .iter()
                    .find(|m| m.role == role)
                    .map_or("", |m| m.content.as_str())
            };
            Some(crate::import::prompt_key(text("system"), text("user")))
        }
        MatchBy::Metadata(key) => match c.conversation.metadata.get(key)? {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        },
    }
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
