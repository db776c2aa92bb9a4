//! The training target ends on the policy: messages after the policy's last
//! reply (the user's stop turn, a tool result nobody answered, a greeting
//! nobody answered) are cut, so no row ends with a message the trained
//! model is not asked to write.

use serde_json::Value;

/// The key of an assistant message's training weight: 1 for a reply the
/// policy wrote, 0 for one it did not (OpenAI's name for it).
pub const WEIGHT: &str = "weight";

/// The role of a chat-format message (`""` when it has none).
pub fn role(message: &Value) -> &str {
    message.get("role").and_then(Value::as_str).unwrap_or("")
}

/// Whether `message` is a reply the policy wrote: an assistant message
/// whose weight (1 when not given) is not 0.
pub fn is_policy_reply(message: &Value) -> bool {
    role(message) == "assistant" && message.get(WEIGHT).and_then(Value::as_u64) != Some(0)
}

/// `messages` up to and including the policy's last reply; empty when there
/// is none.
pub fn to_last_policy_reply(messages: &[Value]) -> &[Value] {
    let end = messages
        .iter()
        .rposition(is_policy_reply)
        .map_or(0, |last| last + 1);
    &messages[..end]
}

/// Take the weights out of `messages`: those of the assistant messages, in
/// order (1 where none was given).
pub fn take_weights(messages: &mut [Value]) -> Vec<u8> {
    let mut weights = Vec::new();
    for m in messages {
        let assistant = role(m) == "assistant";
        let weight = m.as_object_mut().and_then(|m| m.remove(WEIGHT));
        if assistant {
            weights.push(u8::from(weight.and_then(|w| w.as_u64()) != Some(0)));
        }
    }
    weights
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn m(role: &str) -> Value {
        json!({"role": role, "content": "x"})
    }

    #[test]
    fn user_and_tool_messages_after_the_last_reply_are_cut() {
        let all = [
            m("system"),
            m("user"),
            m("assistant"),
            m("tool"),
            m("assistant"),
            m("user"),
        ];
        assert_eq!(to_last_policy_reply(&all).len(), 5);
        let unanswered_tool = [m("user"), m("assistant"), m("tool")];
        assert_eq!(to_last_policy_reply(&unanswered_tool).len(), 2);
    }

    #[test]
    fn a_conversation_without_a_reply_of_the_policy_keeps_nothing() {
        assert!(to_last_policy_reply(&[m("system"), m("user")]).is_empty());
        assert!(to_last_policy_reply(&[]).is_empty());
        let greeting = json!({"role": "assistant", "content": "Hi!", "weight": 0});
        assert!(to_last_policy_reply(&[m("system"), greeting, m("user")]).is_empty());
    }

    #[test]
    fn weights_are_taken_out_in_the_order_of_the_assistant_messages() {
        let mut messages = [
            json!({"role": "assistant", "content": "Hi!", "weight": 0}),
            m("user"),
            json!({"role": "assistant", "content": "x", "weight": 1}),
            m("assistant"),
        ];
        assert_eq!(take_weights(&mut messages), [0, 1, 1]);
        assert!(messages.iter().all(|m| m.get(WEIGHT).is_none()));
    }
}
