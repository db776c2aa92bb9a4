//! The warning of a conversation whose agent reported tool use that no
//! trace read: a config that reads the wrong place (a `trace` pointer beside
//! the calls, a shape not named) or an agent that reports its tool use in a
//! way sparring cannot score (LangGraph's A2A server reports only results).
//! The conversation keeps the warning ([`PolicySession::warning`]) while no
//! tool call of it has been stored; `sparring stats` counts them.

use serde_json::Value;

use crate::sim::policy::PolicySession;
use crate::sim::transcript::{Author, Transcript};

/// How deep an answer is searched for tool use.
const SEARCH_DEPTH: usize = 8;

/// The pointer of the first tool use an answer holds in a shape agents
/// report it in, looking [`SEARCH_DEPTH`] levels deep.
pub fn tool_use_at(document: &Value) -> Option<String> {
    fn walk(value: &Value, at: &mut String, depth: usize) -> bool {
        if depth > SEARCH_DEPTH {
            return false;
        }
        match value {
            Value::Object(fields) => {
                for (key, inner) in fields {
                    let marks = match key.as_str() {
                        "tool_calls" | "tool_results" => {
                            inner.as_array().is_some_and(|c| !c.is_empty())
                        }
                        "functionCall" | "function_call" | "toolUse" => inner.is_object(),
                        "type" => matches!(inner.as_str(), Some("function_call" | "tool_use")),
                        "part_kind" => inner.as_str() == Some("tool-call"),
                        _ => false,
                    };
                    let len = at.len();
                    at.push('/');
                    at.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    if marks || walk(inner, at, depth + 1) {
                        return true;
                    }
                    at.truncate(len);
                }
                false
            }
            Value::Array(items) => {
                for (i, inner) in items.iter().enumerate() {
                    let len = at.len();
                    at.push_str(&format!("/{i}"));
                    if walk(inner, at, depth + 1) {
                        return true;
                    }
                    at.truncate(len);
                }
                false
            }
            _ => false,
        }
    }
    let mut at = String::new();
    walk(document, &mut at, 0).then_some(at)
}

/// Leave a warning on the conversation while an answer holds tool use (at
/// `tool_use_at`) but no tool call of the conversation has been stored;
/// take it back once one is. `advice` says what to change.
pub fn note(
    session: &mut PolicySession,
    transcript: &Transcript,
    tool_use_at: Option<&str>,
    advice: impl FnOnce() -> String,
) {
    if transcript
        .messages
        .iter()
        .any(|r| r.author == Author::AgentTool)
    {
        session.warning = None;
        return;
    }
    let (Some(at), None) = (tool_use_at, &session.warning) else {
        return;
    };
    session.warning = Some(format!(
        "the agent's answers hold tool use (at {at}) but no tool call was read from them: {}",
        advice()
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::Message;
    use serde_json::json;

    #[test]
    fn tool_use_is_found_by_the_keys_agents_write_it_under() {
        assert_eq!(
            tool_use_at(&json!({"m": [{"tool_calls": []}, {"a/b": {"type": "tool_use"}}]}))
                .as_deref(),
            Some("/m/1/a~1b/type")
        );
        assert_eq!(
            tool_use_at(&json!([{"data": {"tool_results": [{"name": "get"}]}}])).as_deref(),
            Some("/0/data/tool_results")
        );
        assert_eq!(tool_use_at(&json!({"reply": "I used no tool_calls"})), None);
    }

    #[test]
    fn the_warning_stays_while_no_call_is_stored_and_goes_once_one_is() {
        let mut session = PolicySession::new();
        let mut transcript = Transcript::default();
        note(&mut session, &transcript, None, || "x".into());
        assert_eq!(session.warning, None);
        note(&mut session, &transcript, Some("/0/functionCall"), || {
            "set trace".into()
        });
        let warning = session.warning.clone().unwrap();
        assert!(
            warning.contains("/0/functionCall") && warning.ends_with("set trace"),
            "{warning}"
        );
        note(&mut session, &transcript, Some("/9"), || "other".into());
        assert_eq!(session.warning.as_ref(), Some(&warning), "the first stays");
        transcript.push(Message::tool_result("c", "ok"), Author::AgentTool);
        note(&mut session, &transcript, None, || "x".into());
        assert_eq!(session.warning, None);
    }
}
