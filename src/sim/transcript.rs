//! The transcript of an episode in the policy's view, with who wrote each
//! message, and the flipped view the user simulator sees.

use std::sync::Arc;

use serde::Serialize;

use crate::llm::message::{Message, Role};
use crate::llm::Usage;
use crate::token_ids::TokenIds;

/// Who produced a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Author {
    /// Rendered system prompt or the configured greeting.
    System,
    Policy,
    User,
    Env,
    /// The environment's answer to a tool call of the user (dual control).
    UserTool,
    /// What a tool an agent ran itself gave it, as the agent reported it
    /// (a black-box policy's own tool use; its call is the policy's).
    AgentTool,
}

impl Author {
    pub fn as_str(self) -> &'static str {
        match self {
            Author::System => "system",
            Author::Policy => "policy",
            Author::User => "user",
            Author::Env => "env",
            Author::UserTool => "user_tool",
            Author::AgentTool => "agent_tool",
        }
    }
}

impl Recorded {
    /// A tool call of the simulated user, or the environment's answer to one:
    /// part of the user's side of the conversation, never shown to the policy.
    pub fn is_user_tool_use(&self) -> bool {
        match self.author {
            Author::User => !self.message.tool_calls.is_empty(),
            Author::UserTool => true,
            Author::System | Author::Policy | Author::Env | Author::AgentTool => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub message: Message,
    pub author: Author,
    pub usage: Option<Usage>,
    pub latency_ms: Option<u64>,
    /// The token ids and log probabilities of the generation that produced
    /// this message, where the policy's server returned them: kept on the
    /// recorded turn only (never in what is sent to a model), shared with the
    /// stored row rather than copied.
    pub tokens: Option<Arc<TokenIds>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    pub messages: Vec<Recorded>,
}

impl Transcript {
    pub fn push(&mut self, message: Message, author: Author) {
        self.messages.push(Recorded {
            message,
            author,
            usage: None,
            latency_ms: None,
            tokens: None,
        });
    }

    pub fn push_generated(
        &mut self,
        message: Message,
        author: Author,
        usage: Usage,
        latency_ms: u64,
        tokens: Option<Arc<TokenIds>>,
    ) {
        self.messages.push(Recorded {
            message,
            author,
            usage: Some(usage),
            latency_ms: Some(latency_ms),
            tokens,
        });
    }

    /// What the policy sees: everything, in order, except the user's own tool
    /// calls and their results (the user acted on its side; the policy only
    /// learns of it from what the user says).
    pub fn policy_view(&self) -> Vec<Message> {
        self.messages
            .iter()
            .filter(|r| !r.is_user_tool_use())
            .map(|r| r.message.clone())
            .collect()
    }

    /// What the user simulator sees: its own system prompt, then the dialogue with
    /// roles flipped (the agent's words arrive as `user`, its own as `assistant`).
    /// System prompts and the policy's tool calls and results are never shown
    /// to the user; its own tool calls and their results are, as its own.
    pub fn user_view(&self, system_prompt: &Arc<str>) -> Vec<Message> {
        let mut view = Vec::with_capacity(self.messages.len() + 1);
        view.push(Message::system(system_prompt.clone()));
        for r in &self.messages {
            if r.is_user_tool_use() {
                let mut own = r.message.clone();
                if own.role == Role::User {
                    own.role = Role::Assistant;
                }
                view.push(own);
                continue;
            }
            match r.message.role {
                Role::Assistant if !r.message.content.trim().is_empty() => {
                    view.push(Message::user(r.message.content.clone()));
                }
                Role::User => view.push(Message::assistant(r.message.content.clone())),
                Role::Assistant | Role::System | Role::Tool => {}
            }
        }
        view
    }

    /// Number of user messages so far (the user's tool calls are not turns).
    pub fn user_turns(&self) -> usize {
        self.messages
            .iter()
            .filter(|r| r.message.role == Role::User && !r.is_user_tool_use())
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::ToolCall;

    #[test]
    fn the_user_never_sees_system_prompts_tool_calls_or_tool_results() {
        let mut t = Transcript::default();
        t.push(Message::system("policy rules"), Author::System);
        t.push(Message::assistant("Hi!"), Author::System);
        t.push(Message::user("cancel my order"), Author::User);
        let mut call = Message::assistant("");
        call.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "get_order".into(),
            arguments: "{}".into(),
        });
        t.push(call, Author::Policy);
        t.push(
            Message::tool_result("c1", "{\"status\":\"pending\"}"),
            Author::Env,
        );
        t.push(Message::assistant("Cancelled."), Author::Policy);

        let view = t.user_view(&Arc::from("you are a customer"));
        let roles: Vec<(Role, &str)> = view.iter().map(|m| (m.role, &*m.content)).collect();
        assert_eq!(
            roles,
            vec![
                (Role::System, "you are a customer"),
                (Role::User, "Hi!"),
                (Role::Assistant, "cancel my order"),
                (Role::User, "Cancelled."),
            ]
        );
        assert!(view.iter().all(|m| m.tool_calls.is_empty()));
    }

    #[test]
    fn the_users_tool_calls_are_its_own_and_the_policy_never_sees_them() {
        let mut t = Transcript::default();
        t.push(Message::system("policy rules"), Author::System);
        t.push(
            Message::assistant("Please turn off airplane mode."),
            Author::Policy,
        );
        let mut call = Message::user("");
        call.tool_calls.push(ToolCall {
            id: "u1".into(),
            name: "toggle_airplane_mode".into(),
            arguments: "{}".into(),
        });
        t.push(call, Author::User);
        t.push(
            Message::tool_result("u1", "{\"airplane_mode\":false}"),
            Author::UserTool,
        );
        t.push(Message::user("Done, it's off now."), Author::User);

        let policy = t.policy_view();
        assert_eq!(policy.len(), 3);
        assert!(policy
            .iter()
            .all(|m| m.tool_calls.is_empty() && m.role != Role::Tool));
        assert_eq!(t.user_turns(), 1);

        let view = t.user_view(&Arc::from("you are a customer"));
        let roles: Vec<Role> = view.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            vec![
                Role::System,
                Role::User,
                Role::Assistant,
                Role::Tool,
                Role::Assistant
            ]
        );
        assert_eq!(view[2].tool_calls[0].name, "toggle_airplane_mode");
        assert_eq!(view[3].tool_call_id.as_deref(), Some("u1"));
    }
}
