//! The chat vocabulary shared by the model client, the episode engine and the
//! environments: messages, tool calls and tool specs, independent of any wire format.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Who wrote a message, in the policy's view of the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "system" => Some(Role::System),
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "tool" => Some(Role::Tool),
            _ => None,
        }
    }
}

/// A function call requested by the policy. `arguments` is the raw JSON text the
/// model produced: it may be invalid, and the environment reports that back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A JSON-schema'd function tool offered to the policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// One message of a conversation. The text is shared, not copied: every
/// model call sends the whole conversation so far, and a request holds its
/// messages until the call ends (to rebuild the body for a retry), so a
/// clone of a message must cost a reference count, not its text. The same
/// holds for a job's system prompt, one text for every conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Arc<str>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the id of the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// An assistant message's reasoning items from a Responses API server,
    /// sent back with it (see [`super::reasoning`]); never serialized here.
    #[serde(skip)]
    pub reasoning: Option<super::reasoning::Reasoning>,
}

impl Message {
    pub fn system(content: impl Into<Arc<str>>) -> Self {
        Self::text(Role::System, content)
    }
    pub fn user(content: impl Into<Arc<str>>) -> Self {
        Self::text(Role::User, content)
    }
    pub fn assistant(content: impl Into<Arc<str>>) -> Self {
        Self::text(Role::Assistant, content)
    }
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<Arc<str>>) -> Self {
        Message {
            role: Role::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
            reasoning: None,
        }
    }
    pub fn text(role: Role, content: impl Into<Arc<str>>) -> Self {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            reasoning: None,
        }
    }
}

/// Who made a tool call: the policy (the agent), or, with dual control, the
/// simulated user acting on its own side of the environment (its device).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Caller {
    #[default]
    Policy,
    User,
}

/// Whether a tool result reads as an error: sparring's environments write
/// `Error: ...`, agents' own tools often `{"error": ...}`.
pub fn reads_as_tool_error(result: &str) -> bool {
    let lower = result.trim_start().to_lowercase();
    lower.starts_with("error") || lower.starts_with("{\"error\"")
}

impl Caller {
    pub fn as_str(self) -> &'static str {
        match self {
            Caller::Policy => "policy",
            Caller::User => "user",
        }
    }

    pub fn is_policy(&self) -> bool {
        *self == Caller::Policy
    }
}
