//! A conversation's messages as the page shows them: chat bubbles, each tool
//! call with its arguments and its result inline (folded when long), and long
//! texts cut to a preview with the rest one click away.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::store::MessageRow;

use super::display::{self, Clipped};

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    /// The system prompt, folded.
    System {
        text: String,
    },
    Bubble(Bubble),
    /// A tool result whose call is not in the conversation.
    Orphan {
        call_id: String,
        result: Shown,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct Bubble {
    pub role: String,
    pub text: Option<Clipped>,
    pub calls: Vec<Call>,
    /// Who made the calls: `agent`, or `user` for the simulated user's own
    /// tool calls (dual control), which the policy never saw.
    pub caller: &'static str,
    /// A user message with text: its number among them (1 = the first), the
    /// page's `#turn-N` anchor (a probe's `turn_of_flip` links to it).
    pub turn: Option<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Call {
    pub id: String,
    pub name: String,
    pub arguments: Shown,
    /// `None` when no result was stored for it.
    pub result: Option<Shown>,
    /// The result reads as a tool error.
    pub error: bool,
}

/// A block of text, whole when short, otherwise folded behind `summary`.
#[derive(Debug, Clone, Serialize)]
pub struct Shown {
    pub text: String,
    pub folded: bool,
    /// One line of it, for the fold's label.
    pub summary: String,
}

/// Arguments and results longer than this (or of more lines) are folded.
const FOLD_CHARS: usize = 240;
const FOLD_LINES: usize = 6;

fn shown(text: String) -> Shown {
    let folded = text.chars().count() > FOLD_CHARS || text.lines().count() > FOLD_LINES;
    Shown {
        summary: display::one_line(&text, 90),
        folded,
        text,
    }
}

/// JSON text indented when it parses (arguments, most tool results).
fn pretty(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(v @ (Value::Object(_) | Value::Array(_))) => {
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| text.to_string())
        }
        _ => text.to_string(),
    }
}

/// Compact JSON arguments: `{"order_id":"#W1"}` reads better on one line
/// when short.
fn arguments_text(arguments: &str) -> String {
    let compact = serde_json::from_str::<Value>(arguments)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| arguments.to_string());
    if compact.chars().count() <= 100 {
        compact
    } else {
        pretty(arguments)
    }
}

fn is_error(result: &str) -> bool {
    crate::llm::message::reads_as_tool_error(result)
}

/// The tool calls of a message: `(id, name, arguments)`.
pub fn calls_of(m: &MessageRow) -> Vec<(String, String, String)> {
    m.tool_calls
        .as_ref()
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|call| {
            let text = |key: &str| {
                call.get(key)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            (text("id"), text("name"), text("arguments"))
        })
        .collect()
}

pub fn items(messages: &[MessageRow]) -> Vec<Item> {
    let mut results: HashMap<&str, &MessageRow> = HashMap::new();
    let mut called: std::collections::HashSet<String> = Default::default();
    for m in messages {
        if m.role == "tool" {
            if let Some(id) = m.tool_call_id.as_deref() {
                results.insert(id, m);
            }
        }
        for (id, _, _) in calls_of(m) {
            called.insert(id);
        }
    }
    let mut turns = 0;
    messages
        .iter()
        .filter_map(|m| match m.role.as_str() {
            "system" => Some(Item::System {
                text: m.content.clone(),
            }),
            "tool" => {
                let id = m.tool_call_id.clone().unwrap_or_default();
                (!called.contains(&id)).then(|| Item::Orphan {
                    call_id: id,
                    result: shown(pretty(&m.content)),
                })
            }
            role => Some(Item::Bubble(Bubble {
                turn: (role == "user" && !m.content.is_empty()).then(|| {
                    turns += 1;
                    turns
                }),
                caller: if m.author == "user" { "user" } else { "agent" },
                role: role.to_string(),
                text: (!m.content.is_empty()).then(|| display::clip(&m.content)),
                calls: calls_of(m)
                    .into_iter()
                    .map(|(id, name, arguments)| {
                        let result = results.get(id.as_str());
                        Call {
                            error: result.is_some_and(|r| is_error(&r.content)),
                            result: result.map(|r| shown(pretty(&r.content))),
                            arguments: shown(arguments_text(&arguments)),
                            name,
                            id,
                        }
                    })
                    .collect(),
            })),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(role: &str, content: &str) -> MessageRow {
        MessageRow {
            idx: 0,
            role: role.into(),
            content: content.into(),
            tool_calls: None,
            tool_call_id: None,
            author: role.into(),
            prompt_tokens: None,
            completion_tokens: None,
            latency_ms: None,
        }
    }

    #[test]
    fn a_tool_result_is_shown_with_its_call_and_a_long_one_is_folded() {
        let mut call = message("assistant", "");
        call.tool_calls = Some(serde_json::json!([
            {"id": "c1", "name": "get_order", "arguments": "{\"order_id\":\"#W1\"}"},
            {"id": "c2", "name": "list", "arguments": "{}"}
        ]));
        let mut short = message("tool", "{\"status\":\"pending\"}");
        short.tool_call_id = Some("c1".into());
        let mut long = message("tool", &"x".repeat(500));
        long.tool_call_id = Some("c2".into());
        let mut stray = message("tool", "Error: no such call");
        stray.tool_call_id = Some("c9".into());
        let shown = items(&[message("system", "be nice"), call, short, long, stray]);
        assert_eq!(shown.len(), 3, "{shown:?}");
        let Item::Bubble(bubble) = &shown[1] else {
            panic!("{shown:?}")
        };
        assert_eq!(bubble.text, None);
        assert_eq!(bubble.calls[0].arguments.text, "{\"order_id\":\"#W1\"}");
        let first = bubble.calls[0].result.as_ref().unwrap();
        assert!(!first.folded);
        assert!(first.text.contains("\"status\": \"pending\""));
        assert!(bubble.calls[1].result.as_ref().unwrap().folded);
        assert!(matches!(&shown[2], Item::Orphan { call_id, .. } if call_id == "c9"));
    }

    #[test]
    fn the_users_own_tool_call_is_shown_as_the_users_with_its_result() {
        let mut call = message("user", "");
        call.tool_calls = Some(serde_json::json!([
            {"id": "u1", "name": "toggle_airplane_mode", "arguments": "{}"}
        ]));
        let mut result = message("tool", "{\"airplane_mode\":\"off\"}");
        result.tool_call_id = Some("u1".into());
        result.author = "user_tool".into();
        let shown = items(&[call, result]);
        assert_eq!(shown.len(), 1, "{shown:?}");
        let Item::Bubble(bubble) = &shown[0] else {
            panic!("{shown:?}")
        };
        assert_eq!(bubble.caller, "user");
        assert_eq!(bubble.calls[0].name, "toggle_airplane_mode");
        assert!(bubble.calls[0]
            .result
            .as_ref()
            .unwrap()
            .text
            .contains("off"));
    }
}
