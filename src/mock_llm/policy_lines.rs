//! The fixed texts the mock policy says, which the mock user and the probe
//! policy read too, and its tool-call message: apart from the policy's
//! logic, so that those who read them import nothing of it.

use crate::llm::message::{Message, Role, ToolCall};

pub const ASK_IDENTITY: &str = "I'd be glad to help. To get started, could you please give me your email address, or your full name and zip code?";
pub const CONFIRM_MARK: &str = "Please confirm (yes/no).";
pub const DONE_PREFIX: &str = "All done.";
pub const TRANSFERRED: &str = "I've transferred you to a human agent, who will take it from here.";
/// Asks the user to make one of its own tool calls (dual control), naming it.
pub const USER_ACTION_MARK: &str = "Please do this on your phone and tell me what you see:";

/// An assistant message making `calls`.
pub fn tool_calls(calls: Vec<ToolCall>) -> Message {
    Message {
        role: Role::Assistant,
        content: "".into(),
        tool_calls: calls,
        tool_call_id: None,
        reasoning: None,
    }
}
