//! A simulated user's control tokens (`###STOP###`, `###TRANSFER###`,
//! `###OUT-OF-SCOPE###`) stored as sparring stores its own user's:
//! tau2-bench, and NeMo Gym's `tau2` agent, leave them in the user's
//! message text, where the user checks would read them as words (a
//! "malformed token", an "invented id"). Cut as the engine cuts them
//! (`sim::user_simulator::parse_signal`): each user message's text is what
//! came before its first token, a message left with nothing (no text, no
//! tool call) is dropped, and every user turn's text as written is kept in
//! metadata `user_outputs` (`{message, raw}`, the user checks'
//! `UserOutput`: `message` the index it became, null when dropped).

use serde_json::{json, Value};

use crate::llm::message::{Message, Role};
use crate::prompt::{OUT_OF_SCOPE_TOKEN, STOP_TOKEN, TRANSFER_TOKEN};
use crate::sim::user_simulator::parse_signal;

/// What cutting did: the outputs for `user_outputs` (empty when no user
/// message held a token: then nothing changed) and the indices, before
/// cutting, of the messages dropped.
#[derive(Debug, Default)]
pub(super) struct Cut {
    pub outputs: Vec<Value>,
    pub dropped: Vec<usize>,
}

pub(super) fn cut(messages: &mut Vec<Message>) -> Cut {
    let holds_token = |m: &Message| {
        m.role == Role::User
            && [STOP_TOKEN, TRANSFER_TOKEN, OUT_OF_SCOPE_TOKEN]
                .iter()
                .any(|t| m.content.contains(t))
    };
    if !messages.iter().any(holds_token) {
        return Cut::default();
    }
    let mut out = Cut::default();
    let mut kept = Vec::with_capacity(messages.len());
    for (i, mut m) in std::mem::take(messages).into_iter().enumerate() {
        if m.role != Role::User || (m.content.is_empty() && !m.tool_calls.is_empty()) {
            kept.push(m);
            continue;
        }
        let raw = m.content.to_string();
        let (text, _) = parse_signal(&raw);
        let message = if text.is_empty() && m.tool_calls.is_empty() {
            out.dropped.push(i);
            Value::Null
        } else {
            m.content = text.into();
            kept.push(m);
            json!(kept.len() - 1)
        };
        out.outputs.push(json!({"message": message, "raw": raw}));
    }
    *messages = kept;
    out
}

/// `index`, a place among the messages before cutting, among those after.
pub(super) fn shifted(index: usize, dropped: &[usize]) -> usize {
    index - dropped.iter().filter(|d| **d < index).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_cut_from_user_text_and_a_token_alone_is_no_message() {
        let mut messages = vec![
            Message::assistant("Hi! How can I help?"),
            Message::user("Cancel order 7."),
            Message::assistant("Done."),
            Message::user("Thanks!###STOP### Agent: bye"),
            Message::user("###TRANSFER###"),
        ];
        let cut = cut(&mut messages);
        let texts: Vec<&str> = messages.iter().map(|m| m.content.as_ref()).collect();
        assert_eq!(
            texts,
            ["Hi! How can I help?", "Cancel order 7.", "Done.", "Thanks!"]
        );
        assert_eq!(cut.dropped, [4]);
        assert_eq!(
            cut.outputs,
            [
                json!({"message": 1, "raw": "Cancel order 7."}),
                json!({"message": 3, "raw": "Thanks!###STOP### Agent: bye"}),
                json!({"message": null, "raw": "###TRANSFER###"}),
            ]
        );
        assert_eq!(shifted(5, &cut.dropped), 4);
        assert_eq!(shifted(3, &cut.dropped), 3);
    }

    #[test]
    fn without_a_token_nothing_changes() {
        let mut messages = vec![
            Message::user("STOP it"),
            Message::assistant("ok ###STOP###"),
        ];
        let before = messages.clone();
        let cut = cut(&mut messages);
        assert_eq!(messages, before);
        assert!(cut.outputs.is_empty() && cut.dropped.is_empty());
    }
}
