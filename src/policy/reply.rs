//! Text an agent answered, in the shapes agents write it, and (through
//! [`crate::policy::trace`]) the tool calls it reports.

use serde_json::Value;

use crate::sim::policy::AgentToolRecord;

/// The tool calls `items` report, in order, each with its output, read in
/// any of the shapes [`crate::policy::trace`] knows.
pub fn tool_records(items: &[Value]) -> Vec<AgentToolRecord> {
    super::trace::read(items, super::trace::TraceFormat::Auto)
}

/// A string as it is, content parts joined, anything else as JSON.
pub fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(parts)
            if parts
                .iter()
                .all(|p| p.get("text").is_some() || p.is_string()) =>
        {
            parts
                .iter()
                .map(|p| match p.get("text") {
                    Some(t) => text_of(t),
                    None => text_of(p),
                })
                .collect::<Vec<_>>()
                .join("")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_is_a_string_or_the_text_of_content_parts_and_anything_else_its_json() {
        assert_eq!(text_of(&json!("hi")), "hi");
        assert_eq!(text_of(&json!(null)), "");
        assert_eq!(text_of(&json!([{"type": "text", "text": "a"}, "b"])), "ab");
        assert_eq!(text_of(&json!({"a": 1})), "{\"a\":1}");
    }
}
