//! The mock user's own tool calls (dual control): when the agent asks it to
//! do something on its phone, naming one of the user tools the request
//! offers, it makes that call; once the results are back, it tells the
//! agent what it saw. `+no-tools` makes a user that never calls them.

use crate::llm::message::{Message, Role, ToolCall};

use super::behaviour::Modifiers;
use super::policy::USER_ACTION_MARK;

/// What a user says after its own tool calls, before their results.
pub const DID_IT: &str = "Done, I did that on my phone. It now shows:";

/// The mock user's message when its tools are in play, or `None` to answer
/// as the plain mock user does. `messages` is the simulator's view; `tools`
/// the names of the user tools offered.
pub fn respond(messages: &[Message], tools: &[String], modifiers: &Modifiers) -> Option<Message> {
    if tools.is_empty() || modifiers.no_tools {
        return None;
    }
    let last = messages.last()?;
    if last.role == Role::Tool {
        let seen: Vec<&str> = messages
            .iter()
            .rev()
            .take_while(|m| m.role == Role::Tool)
            .map(|m| &*m.content)
            .collect();
        return Some(Message::assistant(format!("{DID_IT} {}", seen.join(" "))));
    }
    if last.role != Role::User {
        return None;
    }
    let (_, asked) = last.content.split_once(USER_ACTION_MARK)?;
    let made = messages
        .iter()
        .filter(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
        .count();
    let calls: Vec<ToolCall> = tools
        .iter()
        .filter(|name| mentions(asked, name))
        .enumerate()
        .map(|(k, name)| ToolCall {
            id: format!("user_call_{made}_{k}"),
            name: name.clone(),
            arguments: "{}".into(),
        })
        .collect();
    if calls.is_empty() {
        return None;
    }
    Some(Message {
        role: Role::Assistant,
        content: "".into(),
        tool_calls: calls,
        tool_call_id: None,
        reasoning: None,
    })
}

/// `name` appears in `text` as a whole word.
fn mentions(text: &str, name: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<String> {
        vec!["toggle_airplane_mode".into(), "toggle_mobile_data".into()]
    }

    #[test]
    fn asked_by_name_the_user_calls_the_tool_then_reports_what_it_saw() {
        let mut view = vec![
            Message::system("you are a customer"),
            Message::user(format!("{USER_ACTION_MARK} toggle_airplane_mode.")),
        ];
        let call = respond(&view, &tools(), &Modifiers::default()).unwrap();
        assert_eq!(call.tool_calls.len(), 1);
        assert_eq!(call.tool_calls[0].name, "toggle_airplane_mode");
        view.push(call);
        view.push(Message::tool_result(
            "user_call_0_0",
            "{\"airplane_mode\":\"off\"}",
        ));
        let said = respond(&view, &tools(), &Modifiers::default()).unwrap();
        assert!(said.tool_calls.is_empty());
        assert!(said.content.starts_with(DID_IT) && said.content.contains("off"));
    }

    #[test]
    fn without_an_ask_or_with_no_tools_it_answers_as_the_plain_mock_user() {
        let view = vec![Message::user("How can I help?")];
        assert!(respond(&view, &tools(), &Modifiers::default()).is_none());
        let asked = vec![Message::user(format!(
            "{USER_ACTION_MARK} toggle_mobile_data."
        ))];
        let stubborn = Modifiers {
            no_tools: true,
            ..Modifiers::default()
        };
        assert!(respond(&asked, &tools(), &stubborn).is_none());
        assert!(respond(&asked, &[], &Modifiers::default()).is_none());
    }
}
