//! `--format auto`: which format a file is in, from its first line.

use serde_json::Value;

use super::Format;

/// The format `first_line` is written in: a NeMo Gym rollout has
/// `responses_create_params`, ShareGPT `conversations`; of the rows with
/// `messages`, `hf`'s always have `metadata` (or object arguments) and
/// `openai`'s never. `None` when it is none of them.
pub fn detect(first_line: &str) -> Option<Format> {
    let row: Value = serde_json::from_str(first_line).ok()?;
    let row = row.as_object()?;
    if row.contains_key("responses_create_params") {
        return Some(Format::NemoGym);
    }
    if row.get("conversations").is_some_and(Value::is_array) {
        return Some(Format::ShareGpt);
    }
    let messages = row.get("messages")?.as_array()?;
    let object_arguments = messages
        .iter()
        .filter_map(|m| m.get("tool_calls")?.as_array())
        .flatten()
        .any(|c| c["function"]["arguments"].is_object());
    if row.contains_key("metadata") || object_arguments {
        Some(Format::Hf)
    } else {
        Some(Format::Openai)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_is_told_by_its_first_line() {
        let user = r#"{"role": "user", "content": "x"}"#;
        assert_eq!(
            detect(&format!(r#"{{"messages": [{user}]}}"#)),
            Some(Format::Openai)
        );
        assert_eq!(
            detect(&format!(
                r#"{{"messages": [{user}], "tools": [], "metadata": {{}}}}"#
            )),
            Some(Format::Hf)
        );
        let object_args = r#"{"messages": [{"role": "assistant", "tool_calls": [
            {"id": "a", "function": {"name": "f", "arguments": {}}}]}]}"#;
        assert_eq!(detect(object_args), Some(Format::Hf));
        assert_eq!(
            detect(r#"{"conversations": [], "system": ""}"#),
            Some(Format::ShareGpt)
        );
        assert_eq!(
            detect(r#"{"responses_create_params": {"input": []}}"#),
            Some(Format::NemoGym)
        );
        for other in ["", "{", "[1]", r#"{"text": "x"}"#, r#"{"messages": 1}"#] {
            assert_eq!(detect(other), None, "{other}");
        }
    }
}
