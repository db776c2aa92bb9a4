//! The variables the `path` and `body` templates of `[policy.http]` see, read
//! from the conversation so far and the conversation's policy session:
//!
//! - `session`: the conversation's id (`sparring-` and 16 hex digits);
//! - `uuid`: the same id as a UUID, for agents that want one (a LangGraph
//!   thread id);
//! - `session_id`: the id of the agent's own session, as its
//!   `session_create` answered it (`session` when no `id` pointer says);
//! - `last_user`: the text of the user's latest message (`""` before any);
//! - `messages`: the dialogue as `[{role, content}]`, `role` being `user` or
//!   `assistant`: what the user and the agent said to each other, the
//!   greeting included; no system prompt, no tool calls and no tool results
//!   (an agent keeps its own tools' record);
//! - `system`: the policy's system prompt as the job renders it (the
//!   dataset's system messages, when it brings its own, joined by a blank
//!   line), for an agent that takes its instructions from the caller;
//! - `turn`: the policy turn, 0 for the first.

use serde::Serialize;
use tera::Context;

use crate::llm::message::Role;
use crate::sim::{PolicySession, Transcript};

/// One message of `messages`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DialogueLine {
    pub role: &'static str,
    pub content: String,
}

/// The variables of one turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Variables {
    pub session: String,
    pub uuid: String,
    pub session_id: String,
    pub last_user: String,
    pub messages: Vec<DialogueLine>,
    pub system: String,
    pub turn: u32,
}

/// The names, as an error tells a template's author.
pub const NAMES: &str = "session, uuid, session_id, last_user, messages (a list of {role, \
                         content}), system and turn";

impl Variables {
    /// The variables of the turn about to be taken: `session.turns` turns
    /// were taken before it.
    pub fn of_turn(transcript: &Transcript, session: &PolicySession) -> Variables {
        let mut system = Vec::new();
        let mut messages = Vec::new();
        for recorded in &transcript.messages {
            if recorded.is_user_tool_use() {
                continue;
            }
            let message = &recorded.message;
            match message.role {
                Role::System => system.push(message.content.to_string()),
                Role::User | Role::Assistant if !message.content.trim().is_empty() => {
                    messages.push(DialogueLine {
                        role: message.role.as_str(),
                        content: message.content.to_string(),
                    });
                }
                Role::User | Role::Assistant | Role::Tool => {}
            }
        }
        let last_user = messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| m.content.clone())
            .unwrap_or_default();
        Variables {
            session: session.id.clone(),
            uuid: session.uuid(),
            session_id: session
                .context_id
                .clone()
                .unwrap_or_else(|| session.id.clone()),
            last_user,
            messages,
            system: system.join("\n\n"),
            turn: session.turns,
        }
    }

    /// Sample values for checking a template before any conversation: a
    /// first turn, and a later one with a longer dialogue, each with text a
    /// template must encode to put in JSON (quotes, a backslash, a line
    /// break and non-ASCII letters).
    pub fn samples() -> [Variables; 2] {
        let session = PolicySession {
            id: "sparring-0123456789abcdef".into(),
            ..PolicySession::default()
        };
        let line = |role: &'static str, content: &str| DialogueLine {
            role,
            content: content.to_string(),
        };
        let first = line(
            "user",
            "Hi, my order \"#W1\" never came.\nCan you check? (ça\\va)",
        );
        let answer = line("assistant", "Sure, which email is it under?");
        let second = line("user", "It's \"ana@example.com\".");
        let system =
            "You are the help desk of a shop.\nNever promise a refund before checking the order.";
        [
            Variables {
                session: session.id.clone(),
                uuid: session.uuid(),
                session_id: "7f3e2a-session".into(),
                last_user: first.content.clone(),
                messages: vec![first.clone()],
                system: system.into(),
                turn: 0,
            },
            Variables {
                session: session.id.clone(),
                uuid: session.uuid(),
                session_id: "7f3e2a-session".into(),
                last_user: second.content.clone(),
                messages: vec![first, answer, second],
                system: system.into(),
                turn: 1,
            },
        ]
    }

    /// As a template's context.
    pub fn context(&self) -> Context {
        let mut context = Context::new();
        context.insert("session", &self.session);
        context.insert("uuid", &self.uuid);
        context.insert("session_id", &self.session_id);
        context.insert("last_user", &self.last_user);
        context.insert("messages", &self.messages);
        context.insert("system", &self.system);
        context.insert("turn", &self.turn);
        context
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::{Message, ToolCall};
    use crate::sim::Author;

    #[test]
    fn the_dialogue_leaves_out_system_prompts_tool_use_and_the_users_own_tools() {
        let mut t = Transcript::default();
        t.push(Message::system("rules"), Author::System);
        t.push(Message::assistant("Hi! How can I help?"), Author::System);
        t.push(Message::user("where is my order"), Author::User);
        let mut call = Message::assistant("");
        call.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "get_order".into(),
            arguments: "{}".into(),
        });
        t.push(call.clone(), Author::Policy);
        t.push(Message::tool_result("c1", "shipped"), Author::AgentTool);
        t.push(Message::assistant("It shipped."), Author::Policy);
        // The user's own tool use (dual control) is on its side only.
        let mut own = Message::user("");
        own.tool_calls = call.tool_calls.clone();
        t.push(own, Author::User);
        t.push(Message::tool_result("c1", "ok"), Author::UserTool);
        t.push(Message::user("thanks"), Author::User);
        let session = PolicySession {
            id: "sparring-00000000000000ff".into(),
            turns: 1,
            ..PolicySession::default()
        };
        let v = Variables::of_turn(&t, &session);
        assert_eq!(v.system, "rules");
        assert_eq!(v.last_user, "thanks");
        assert_eq!(v.turn, 1);
        assert_eq!(v.session, "sparring-00000000000000ff");
        assert_eq!(v.uuid, session.uuid());
        let roles: Vec<(&str, &str)> = v
            .messages
            .iter()
            .map(|m| (m.role, m.content.as_str()))
            .collect();
        assert_eq!(
            roles,
            [
                ("assistant", "Hi! How can I help?"),
                ("user", "where is my order"),
                ("assistant", "It shipped."),
                ("user", "thanks")
            ]
        );
    }

    #[test]
    fn before_any_user_message_last_user_is_empty() {
        let mut t = Transcript::default();
        t.push(Message::system("a"), Author::System);
        t.push(Message::system("b"), Author::System);
        let v = Variables::of_turn(&t, &PolicySession::new());
        assert_eq!((v.last_user.as_str(), v.system.as_str()), ("", "a\n\nb"));
        assert!(v.messages.is_empty());
    }
}
