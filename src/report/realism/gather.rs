//! The user side of a job's conversations, read from the store: the user's
//! turns (messages written by the user, in order), whether the agent had
//! spoken before each, the termination, and the scenario's `known_info`
//! (an imported conversation's `metadata.scenario`; a conversation without
//! one borrows it from a conversation of either job with the same scenario
//! id, so a generated job run on an imported job's scenarios gets it too).

use crate::store::pages::each_stored_conversation;
use std::collections::HashMap;

use crate::store::{ConversationStore, StoreError, StoredConversation};

use super::conversation::UserSide;

fn known_info(c: &StoredConversation) -> Option<String> {
    let known = c.conversation.metadata["scenario"]["known_info"].as_str()?;
    (!known.trim().is_empty()).then(|| known.to_string())
}

fn user_side(c: &StoredConversation) -> UserSide {
    let (mut user_turns, mut after_agent) = (Vec::new(), Vec::new());
    let (mut agent_spoke, mut user_spoke_last) = (false, false);
    for m in &c.messages {
        user_spoke_last = false;
        match (m.role.as_str(), m.author.as_str()) {
            ("user", "user") => {
                user_turns.push(m.content.clone());
                after_agent.push(agent_spoke);
                user_spoke_last = true;
            }
            ("assistant", _) => agent_spoke = true,
            _ => {}
        }
    }
    UserSide {
        scenario_id: c.conversation.scenario_id.clone(),
        user_turns,
        after_agent,
        termination: c.conversation.termination.clone(),
        user_spoke_last,
        known_info: known_info(c),
    }
}

/// A job's conversations as user sides, and the user models that wrote them.
pub struct Gathered {
    pub sides: Vec<UserSide>,
    pub user_models: Vec<String>,
}

/// Every conversation of `job_id`, as user sides; the known info of each
/// scenario that has it is added to `known`.
pub async fn user_sides(
    store: &dyn ConversationStore,
    job_id: i64,
    known: &mut HashMap<String, String>,
) -> Result<Gathered, StoreError> {
    let mut sides = Vec::new();
    let mut user_models = std::collections::BTreeSet::new();
    each_stored_conversation(store, job_id, |c| {
        if !c.conversation.user_model.is_empty() {
            user_models.insert(c.conversation.user_model.clone());
        }
        let side = user_side(c);
        if let Some(k) = &side.known_info {
            known
                .entry(side.scenario_id.clone())
                .or_insert_with(|| k.clone());
        }
        sides.push(side);
        Ok::<(), StoreError>(())
    })
    .await?;
    Ok(Gathered {
        sides,
        user_models: user_models.into_iter().collect(),
    })
}

/// Give each side without known info its scenario's, when `known` has it.
pub fn lend_known_info(sides: &mut [UserSide], known: &HashMap<String, String>) {
    for side in sides.iter_mut().filter(|s| s.known_info.is_none()) {
        side.known_info = known.get(&side.scenario_id).cloned();
    }
}
