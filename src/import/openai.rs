//! `openai` rows, as `sparring export --format openai` writes them and
//! OpenAI's chat fine-tuning takes them: `{"messages": [...], "tools":
//! [...]}`, tool-call arguments as JSON text, assistant messages with an
//! optional `weight`. The weights (when any message has one) go to
//! metadata as `assistant_weights`, as the `hf` format keeps them; any other
//! top-level field is kept in metadata too.

use serde_json::{json, Value};

use super::conversation::{object, tool_specs};
use super::{chat, ImportedConversation, LineProblem};

pub fn read_line(text: &str, line: usize) -> Result<ImportedConversation, LineProblem> {
    let mut row = object(line, text)?;
    let (messages, weights) = chat::messages(line, row.get("messages"))?;
    let tools = tool_specs(line, row.get("tools"))?;
    row.remove("messages");
    row.remove("tools");
    if weights.iter().any(Option::is_some) {
        let weights: Vec<u64> = weights.iter().map(|w| w.unwrap_or(1)).collect();
        row.insert("assistant_weights".into(), json!(weights));
    }
    let reward = row.get("reward").and_then(Value::as_f64);
    ImportedConversation::new(line, messages, tools, reward, row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::Role;

    const ROW: &str = r##"{"messages": [
        {"role": "system", "content": "be kind"},
        {"role": "user", "content": "where is #1?"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "get_order", "arguments": "{\"id\": \"#1\"}"}}], "weight": 1},
        {"role": "tool", "tool_call_id": "c1", "content": "shipped"},
        {"role": "assistant", "content": "It shipped.", "weight": 1}],
      "tools": [{"type": "function", "function": {"name": "get_order",
        "description": "an order", "parameters": {"type": "object"}}}]}"##;

    #[test]
    fn a_row_reads_with_its_system_prompt_calls_results_and_tools() {
        let c = read_line(ROW, 1).unwrap();
        assert_eq!(c.system_prompt.as_deref(), Some("be kind"));
        let roles: Vec<Role> = c.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
        );
        assert_eq!(c.messages[1].tool_calls[0].arguments, r##"{"id": "#1"}"##);
        assert_eq!(c.messages[2].tool_call_id.as_deref(), Some("c1"));
        assert_eq!(c.tools[0]["name"], "get_order");
        assert_eq!(c.metadata["assistant_weights"], json!([1, 1]));
        assert_eq!(c.reward, None);
    }

    fn why(text: &str) -> String {
        read_line(text, 7).unwrap_err().to_string()
    }

    #[test]
    fn each_bad_row_is_a_problem_at_its_line() {
        assert!(why("{nope").starts_with("line 7: invalid JSON"));
        assert!(why("[1]").contains("not a JSON object"));
        assert!(why(r#"{"tools": []}"#).contains("no `messages`"));
        assert!(
            why(r#"{"messages": [{"role": "human", "content": "x"}]}"#).contains("role `human`")
        );
        assert!(why(r#"{"messages": []}"#).contains("empty conversation"));
        assert!(why(r#"{"messages": [{"role": "system", "content": "s"}]}"#)
            .contains("empty conversation"));
        let orphan = r#"{"messages": [{"role": "user", "content": "x"},
            {"role": "tool", "tool_call_id": "c9", "content": "r"}]}"#;
        assert!(why(orphan).contains("call `c9`"));
        let no_id = r#"{"messages": [{"role": "tool", "content": "r"}]}"#;
        assert!(why(no_id).contains("no `tool_call_id`"));
    }
}
