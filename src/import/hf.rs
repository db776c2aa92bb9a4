//! `hf` rows, as `sparring export --format hf` writes them: `messages` with
//! the same keys each (`null` where absent), tool-call arguments as
//! objects, `tools`, and a `metadata` object. The metadata object's fields
//! become the conversation's metadata, with any other top-level field (such
//! as `user_tools`) beside them.

use serde_json::Value;

use super::conversation::{object, tool_specs};
use super::{chat, ImportedConversation, LineProblem};

pub fn read_line(text: &str, line: usize) -> Result<ImportedConversation, LineProblem> {
    let mut row = object(line, text)?;
    let (messages, _) = chat::messages(line, row.get("messages"))?;
    let tools = tool_specs(line, row.get("tools"))?;
    let mut metadata = match row.remove("metadata") {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(LineProblem::new(line, "`metadata` is not an object")),
    };
    row.remove("messages");
    row.remove("tools");
    metadata.extend(row);
    let reward = metadata.get("reward").and_then(Value::as_f64);
    ImportedConversation::new(line, messages, tools, reward, metadata)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ROW: &str = r##"{"messages": [
        {"role": "user", "content": "where is #1?", "tool_calls": null, "tool_call_id": null},
        {"role": "assistant", "content": null, "tool_call_id": null, "tool_calls": [{"id": "c1",
            "type": "function", "function": {"name": "get_order", "arguments": {"id": "#1"}}}]},
        {"role": "tool", "content": "shipped", "tool_calls": null, "tool_call_id": "c1"},
        {"role": "assistant", "content": "It shipped.", "tool_calls": null, "tool_call_id": null}],
      "tools": [], "metadata": {"persona": "p1", "assistant_weights": [1, 1]}}"##;

    #[test]
    fn a_row_reads_with_object_arguments_as_text_and_its_metadata() {
        let c = read_line(ROW, 1).unwrap();
        assert_eq!(c.system_prompt, None);
        assert_eq!(c.messages.len(), 4);
        assert_eq!(c.messages[1].content.as_ref(), "");
        let args: Value = serde_json::from_str(&c.messages[1].tool_calls[0].arguments).unwrap();
        assert_eq!(args, json!({"id": "#1"}));
        assert_eq!(c.metadata["persona"], "p1");
        // The row defines no tools: the one it calls is inferred.
        assert_eq!(c.tools.len(), 1);
        assert_eq!(c.tools[0]["name"], "get_order");
        assert_eq!(c.metadata["inferred_tools"], json!(["get_order"]));
    }

    #[test]
    fn each_bad_row_is_a_problem_at_its_line() {
        let why = |t: &str| read_line(t, 3).unwrap_err().to_string();
        assert!(why("").starts_with("line 3: invalid JSON"));
        assert!(
            why(r#"{"messages": [{"role": "user", "content": "x"}], "metadata": 1}"#)
                .contains("`metadata` is not an object")
        );
        assert!(why(r#"{"messages": [{"role": "bot", "content": "x"}]}"#).contains("role `bot`"));
        assert!(
            why(r#"{"messages": [{"role": "tool", "content": "x", "tool_call_id": "a"}]}"#)
                .contains("call `a`")
        );
        assert!(why(r#"{"messages": [], "metadata": {}}"#).contains("empty conversation"));
    }
}
