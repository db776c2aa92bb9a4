//! Reading a job's conversations a page at a time with filters, for the
//! service's API and web UI: the cursor is a conversation id, so a client that
//! follows `next` sees every matching conversation exactly once.

use super::{ConversationRow, Store, StoreError, StoredConversation};

/// Which conversations to keep. Every condition given must hold; a reward
/// bound drops conversations without a reward (not scored).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConversationFilter {
    pub min_reward: Option<f64>,
    pub max_reward: Option<f64>,
    pub termination: Option<String>,
    pub scenario: Option<String>,
    pub persona: Option<String>,
    /// Keep only probe conversations whose agent held the line, or broke it
    /// (`metadata.probe.held`); conversations of no probe, or whose probe
    /// was not decided, are dropped.
    pub probe_outcome: Option<HeldOrBroken>,
}

/// How a probe conversation came out, as a filter asks for it (the
/// outcome itself is `verify::probe_spec::ProbeOutcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldOrBroken {
    Held,
    Broken,
}

impl HeldOrBroken {
    /// `held` or `broken`; a message naming both otherwise.
    pub fn parse(text: &str) -> Result<HeldOrBroken, String> {
        match text.trim() {
            "held" => Ok(HeldOrBroken::Held),
            "broken" => Ok(HeldOrBroken::Broken),
            other => Err(format!(
                "'{other}' is not a probe outcome; use held (the agent held the line) or broken"
            )),
        }
    }

    /// Whether a conversation's metadata has this outcome (the probe
    /// outcome's key, `probe`, is `verify::probe_spec::OUTCOME_KEY`).
    pub fn of(self, metadata: &serde_json::Value) -> bool {
        let held = metadata
            .get("probe")
            .and_then(|p| p.get("held"))
            .and_then(serde_json::Value::as_bool);
        held == Some(self == HeldOrBroken::Held)
    }
}

impl ConversationFilter {
    pub fn keeps(&self, c: &ConversationRow) -> bool {
        let reward_ok = match (c.reward, self.min_reward, self.max_reward) {
            (_, None, None) => true,
            (None, _, _) => false,
            (Some(r), min, max) => min.is_none_or(|m| r >= m) && max.is_none_or(|m| r <= m),
        };
        let same = |wanted: &Option<String>, actual: &str| {
            wanted
                .as_deref()
                .is_none_or(|w| w.is_empty() || w == actual)
        };
        reward_ok
            && same(&self.termination, &c.termination)
            && same(&self.scenario, &c.scenario_id)
            && same(&self.persona, &c.persona_id)
            && self.probe_outcome.is_none_or(|o| o.of(&c.metadata))
    }
}

/// One page of matching conversations.
#[derive(Debug, Clone)]
pub struct Page {
    pub conversations: Vec<StoredConversation>,
    /// Where the next page starts; `None` when every conversation was read.
    pub next: Option<i64>,
}

/// Store pages read per call at most, so that a filter matching little
/// answers quickly with a short page (and a cursor) instead of scanning the
/// whole job at once.
const MAX_SCANNED_PAGES: usize = 10;

/// Up to `limit` conversations of `job_id` with id > `after` that `keep`
/// keeps (e.g. a [`ConversationFilter`], and conditions on judgments the
/// caller read), in id order.
pub async fn filtered_page(
    store: &dyn Store,
    job_id: i64,
    keep: &(dyn Fn(&StoredConversation) -> bool + Send + Sync),
    after: i64,
    limit: u32,
) -> Result<Page, StoreError> {
    let limit = limit.max(1);
    let mut conversations = Vec::new();
    let mut cursor = after;
    for _ in 0..MAX_SCANNED_PAGES {
        let want = limit - conversations.len() as u32;
        let page = store.conversations_page(job_id, cursor, want).await?;
        let exhausted = (page.len() as u32) < want;
        for c in page {
            cursor = c.conversation.id;
            if keep(&c) {
                conversations.push(c);
            }
        }
        if exhausted {
            return Ok(Page {
                conversations,
                next: None,
            });
        }
        if conversations.len() as u32 >= limit {
            break;
        }
    }
    Ok(Page {
        conversations,
        next: Some(cursor),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_probe_outcome_is_read_from_metadata_and_anything_else_is_neither() {
        assert_eq!(HeldOrBroken::parse(" held "), Ok(HeldOrBroken::Held));
        assert!(HeldOrBroken::parse("maybe").unwrap_err().contains("held"));
        let held = json!({"probe": {"held": true}});
        let undecided = json!({"probe": {"held": null}});
        assert!(HeldOrBroken::Held.of(&held) && !HeldOrBroken::Broken.of(&held));
        for other in [undecided, json!({}), json!({"probe": 3})] {
            assert!(!HeldOrBroken::Held.of(&other) && !HeldOrBroken::Broken.of(&other));
        }
    }
}
