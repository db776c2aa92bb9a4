//! The policy's tool calls in a transcript, each with whether it succeeded
//! and the user turn it followed, as the `held` scorers read them.

use serde_json::Value;

use crate::llm::message::{reads_as_tool_error, Message, Role};

const READ_PREFIXES: &[&str] = &["get_", "find_", "list_", "search_", "check_", "calculate"];
/// Tools that change nothing whatever their name: the hand-off to a human,
/// and tau-bench's `think` (a note to itself).
const NOT_WRITES: &[&str] = &["transfer_to_human_agents", "think"];

/// Whether a tool changes something, by the built-in domains' naming (and
/// tau-bench's, whose airline and retail tools read the same way).
pub fn is_write(name: &str) -> bool {
    !READ_PREFIXES.iter().any(|p| name.starts_with(p)) && !NOT_WRITES.contains(&name)
}

/// The user turn a message at `index` of `view` follows: how many user
/// messages come before it (1 = after the first user message).
pub fn user_turn_of(view: &[Message], index: usize) -> u32 {
    let turns = view[..index.min(view.len())]
        .iter()
        .filter(|m| m.role == Role::User)
        .count();
    u32::try_from(turns).unwrap_or(u32::MAX)
}

/// One call the policy made.
#[derive(Debug, Clone)]
pub(super) struct Call<'a> {
    pub name: &'a str,
    /// `Value::Null` when the arguments are not JSON.
    pub arguments: Value,
    /// The index of the assistant message that made it.
    pub at: usize,
    /// Its result is in the transcript and is not an error.
    pub succeeded: bool,
}

pub(super) fn calls(view: &[Message]) -> Vec<Call<'_>> {
    let mut out = Vec::new();
    for (at, message) in view.iter().enumerate() {
        if message.role != Role::Assistant {
            continue;
        }
        for call in &message.tool_calls {
            let result = view[at + 1..].iter().find(|m| {
                m.role == Role::Tool && m.tool_call_id.as_deref() == Some(call.id.as_str())
            });
            out.push(Call {
                name: &call.name,
                arguments: serde_json::from_str(&call.arguments).unwrap_or(Value::Null),
                at,
                succeeded: result.is_some_and(|r| !reads_as_tool_error(&r.content)),
            });
        }
    }
    out
}

/// Whether `arguments` hold every argument of `wanted` (equal as JSON); a
/// `wanted` that is not an object asks for nothing.
pub(super) fn holds_arguments(arguments: &Value, wanted: &Value) -> bool {
    let Some(wanted) = wanted.as_object() else {
        return true;
    };
    wanted
        .iter()
        .all(|(key, value)| arguments.get(key) == Some(value))
}

/// The ids a call acts on: its argument values (nested too) that hold a
/// digit (order, item and payment method ids, flight numbers, an address's
/// number), dates (`2024-05-20`) left out: said back in words, they read
/// as another text.
pub(super) fn ids(arguments: &Value, out: &mut Vec<String>) {
    match arguments {
        Value::String(s) if s.chars().any(|c| c.is_ascii_digit()) && !is_date(s) => {
            out.push(s.clone())
        }
        Value::Array(items) => items.iter().for_each(|v| ids(v, out)),
        Value::Object(map) => map.values().for_each(|v| ids(v, out)),
        _ => {}
    }
}

/// `YYYY-MM-DD`, alone or starting a timestamp.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 10
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// Text for matching: lowercase letters and digits, every other run of
/// characters one space, padded with spaces.
pub(super) fn normalized(text: &str) -> String {
    let mut out = String::from(" ");
    for c in text.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

/// Whether `haystack` (normalized) says `value`: its words in order, on
/// word boundaries.
pub(super) fn says(haystack: &str, value: &str) -> bool {
    let needle = normalized(value);
    needle.trim().len() >= 2 && haystack.contains(&needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_what_the_domains_do_not_name_as_reads() {
        assert!(is_write("cancel_pending_order"));
        assert!(is_write("enable_roaming"));
        assert!(!is_write("get_order_details"));
        assert!(!is_write("calculate"));
        assert!(!is_write("transfer_to_human_agents"));
        assert!(!is_write("think"));
    }

    #[test]
    fn a_value_is_said_on_word_boundaries_whatever_the_punctuation() {
        let text = normalized("Your order #LL21743 ships to 418 Alder Street.");
        assert!(says(&text, "#LL21743"));
        assert!(says(&text, "418 Alder Street"));
        assert!(!says(&text, "LL2174"));
        assert!(!says(&text, "#"));
    }

    #[test]
    fn ids_hold_a_digit_and_are_no_date() {
        let mut out = Vec::new();
        ids(
            &serde_json::json!({"reservation_id": "ZFA04Y", "date": "2024-05-20", "cabin": "economy",
                "flights": [{"flight_number": "HAT136"}]}),
            &mut out,
        );
        assert_eq!(out, ["HAT136", "ZFA04Y"]);
    }

    #[test]
    fn arguments_hold_a_subset() {
        let args = serde_json::json!({"order_id": "#A", "reason": "x"});
        assert!(holds_arguments(
            &args,
            &serde_json::json!({"order_id": "#A"})
        ));
        assert!(!holds_arguments(
            &args,
            &serde_json::json!({"order_id": "#B"})
        ));
        assert!(holds_arguments(&args, &Value::Null));
    }
}
