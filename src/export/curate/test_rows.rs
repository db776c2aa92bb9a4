//! Stored conversations for the gates' unit tests.

use crate::store::{ConversationRow, MessageRow, StoredConversation};

/// Conversation `id` of job 1 with these `(role, content)` messages.
pub fn conversation(
    id: i64,
    scenario: &str,
    persona: &str,
    reward: Option<f64>,
    messages: &[(&str, &str)],
) -> StoredConversation {
    StoredConversation {
        conversation: ConversationRow {
            id,
            job_id: 1,
            item_id: id,
            item_key: format!("{scenario}/{persona}/0"),
            scenario_id: scenario.into(),
            persona_id: persona.into(),
            sample: 0,
            seed: 0,
            policy_model: "mock-policy".into(),
            user_model: "mock-user".into(),
            termination: "user_stop".into(),
            reward,
            reward_breakdown: serde_json::json!({}),
            metadata: serde_json::json!({"environment": "builtin:retail"}),
            tools: serde_json::json!([]),
            started_at: 0,
            finished_at: 0,
            user_checks: None,
        },
        messages: messages
            .iter()
            .enumerate()
            .map(|(idx, (role, content))| MessageRow {
                idx: idx as i64,
                role: (*role).into(),
                content: (*content).into(),
                tool_calls: None,
                tool_call_id: None,
                author: if *role == "assistant" { "policy" } else { role }.into(),
                prompt_tokens: None,
                completion_tokens: None,
                latency_ms: None,
            })
            .collect(),
        usage: Vec::new(),
    }
}
