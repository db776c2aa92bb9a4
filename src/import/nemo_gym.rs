//! NeMo Gym rollouts: the conversation is `responses_create_params.input`
//! (a string, or Responses-API items) followed by `response.output`, as
//! NeMo Gym's `tau2` agent and `conversational_tool_use_simulation` write
//! them. Items: `message` (role system, developer, user or assistant; content
//! text or parts with `text`), `function_call` (`call_id`, `name`,
//! `arguments`), `function_call_output` (`call_id`, `output`) and
//! `reasoning`, which is no message: it is kept in metadata under
//! `reasoning`, each with the index (in `messages`) of the message it came
//! before. A function call right after an assistant message joins it, as
//! chat messages hold text and calls together. `instructions` is the system
//! prompt when the input has none. `reward` and every other top-level field
//! are kept in metadata, and so are the request's and the response's
//! settings (without the items and tools already read).
//!
//! `nemo_user_sim`'s rollouts hold their conversation elsewhere
//! (`usersim_result.conversation_messages`) and are not read here.

use serde_json::{json, Map, Value};

use crate::llm::message::{Message, Role, ToolCall};

use super::conversation::{object, text, tool_specs};
use super::{ImportedConversation, LineProblem};

pub fn read_line(text: &str, line: usize) -> Result<ImportedConversation, LineProblem> {
    let mut row = object(line, text)?;
    let mut request = match row.remove("responses_create_params") {
        Some(Value::Object(r)) => r,
        _ => {
            return Err(LineProblem::new(
                line,
                "no `responses_create_params` object (not a NeMo Gym rollout)",
            ))
        }
    };
    let mut response = match row.remove("response") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(r)) => r,
        Some(_) => return Err(LineProblem::new(line, "`response` is not an object")),
    };
    let input = match request.remove("input") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![json!({"type": "message", "role": "user", "content": s})],
        Some(Value::Array(items)) => items,
        Some(_) => return Err(LineProblem::new(line, "`input` is neither text nor a list")),
    };
    let output = match response.remove("output") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(LineProblem::new(line, "`response.output` is not a list")),
    };
    let mut items = Items::default();
    for (i, item) in input.iter().enumerate() {
        items
            .read(line, item)
            .map_err(|why| LineProblem::new(line, format!("input item {}: {why}", i + 1)))?;
    }
    for (i, item) in output.iter().enumerate() {
        items
            .read(line, item)
            .map_err(|why| LineProblem::new(line, format!("output item {}: {why}", i + 1)))?;
    }
    let Items {
        mut messages,
        mut reasoning,
    } = items;
    // Indices into the messages after the system prompt is split off.
    if messages.first().map(|m| m.role) == Some(Role::System) {
        for r in &mut reasoning {
            let at = r["before_message"].as_u64().unwrap_or_default();
            r["before_message"] = json!(at.saturating_sub(1));
        }
    }
    let instructions = request.remove("instructions");
    if let Some(Value::String(s)) = &instructions {
        if !s.is_empty() && messages.first().map(|m| m.role) != Some(Role::System) {
            messages.insert(0, Message::system(s.as_str()));
        }
    }
    let tools = tool_specs(line, request.remove("tools").as_ref())?;
    response.remove("tools");
    let reward = row.get("reward").and_then(Value::as_f64);
    if !reasoning.is_empty() {
        row.insert("reasoning".into(), Value::Array(reasoning));
    }
    row.insert("responses_create_params".into(), Value::Object(request));
    row.insert("response".into(), Value::Object(response));
    ImportedConversation::new(line, messages, tools, reward, row)
}

#[derive(Default)]
struct Items {
    messages: Vec<Message>,
    reasoning: Vec<Value>,
}

impl Items {
    fn read(&mut self, line: usize, item: &Value) -> Result<(), String> {
        let kind = item.get("type").and_then(Value::as_str);
        let kind = kind.or_else(|| item.get("role").map(|_| "message"));
        match kind.unwrap_or_default() {
            "message" => self.message(line, item),
            "function_call" => self.call(item),
            "function_call_output" => self.output(item),
            "reasoning" => {
                self.reasoning
                    .push(json!({"before_message": self.messages.len(), "item": item}));
                Ok(())
            }
            other => Err(format!(
                "type `{other}` is not one of message, function_call, function_call_output, reasoning"
            )),
        }
    }

    fn message(&mut self, line: usize, item: &Value) -> Result<(), String> {
        let role = match item.get("role").and_then(Value::as_str).unwrap_or_default() {
            "system" | "developer" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            other => {
                return Err(format!(
                    "role `{other}` is not one of system, developer, user, assistant"
                ))
            }
        };
        let content = text(line, item.get("content")).map_err(|p| p.why)?;
        self.messages.push(Message::text(role, content));
        Ok(())
    }

    fn call(&mut self, item: &Value) -> Result<(), String> {
        let field = |name: &str| {
            item.get(name)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("a function_call has no `{name}`"))
        };
        let arguments = match item.get("arguments") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        let call = ToolCall {
            id: field("call_id")?.to_string(),
            name: field("name")?.to_string(),
            arguments,
        };
        match self.messages.last_mut() {
            Some(m) if m.role == Role::Assistant => m.tool_calls.push(call),
            _ => self.messages.push(Message {
                tool_calls: vec![call],
                ..Message::assistant("")
            }),
        }
        Ok(())
    }

    fn output(&mut self, item: &Value) -> Result<(), String> {
        let call_id = item
            .get("call_id")
            .and_then(Value::as_str)
            .ok_or("a function_call_output has no `call_id`")?;
        let output = match item.get("output") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        self.messages.push(Message::tool_result(call_id, output));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = r#"{"responses_create_params": {
        "input": [
          {"type": "message", "role": "developer", "content": "be kind"},
          {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "where is #1?"}]}],
        "tools": [{"type": "function", "name": "get", "description": "d", "parameters": {}}],
        "temperature": 0.5},
      "response": {"output": [
          {"type": "reasoning", "summary": [{"text": "look it up"}]},
          {"type": "function_call", "call_id": "c1", "name": "get", "arguments": "{}"},
          {"type": "function_call_output", "call_id": "c1", "output": "shipped"},
          {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It shipped."}]}],
        "model": "m"},
      "reward": 1.0, "task": {"id": 3}}"#;

    #[test]
    fn input_then_output_items_read_as_one_conversation_with_reward_and_fields() {
        let c = read_line(ROW, 1).unwrap();
        assert_eq!(c.system_prompt.as_deref(), Some("be kind"));
        let roles: Vec<Role> = c.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
        );
        assert_eq!(c.messages[0].content.as_ref(), "where is #1?");
        assert_eq!(c.messages[1].tool_calls[0].id, "c1");
        assert_eq!(c.reward, Some(1.0));
        assert_eq!(c.metadata["reward"], 1.0);
        assert_eq!(c.metadata["task"]["id"], 3);
        assert_eq!(c.metadata["reasoning"][0]["before_message"], 1);
        assert_eq!(c.metadata["responses_create_params"]["temperature"], 0.5);
        assert_eq!(c.metadata["response"]["model"], "m");
        assert_eq!(c.tools[0]["name"], "get");
    }

    #[test]
    fn instructions_are_the_system_prompt_and_a_string_input_is_the_user() {
        let row = r#"{"responses_create_params": {"input": "hi", "instructions": "sys"},
            "response": {"output": [{"type": "message", "role": "assistant", "content": "hello"}]}}"#;
        let c = read_line(row, 1).unwrap();
        assert_eq!(c.system_prompt.as_deref(), Some("sys"));
        assert_eq!(c.messages[0].content.as_ref(), "hi");
        assert_eq!(c.messages.len(), 2);
    }

    #[test]
    fn each_bad_row_is_a_problem_at_its_line() {
        let why = |t: &str| read_line(t, 4).unwrap_err().to_string();
        let row = |items: &str| format!(r#"{{"responses_create_params": {{"input": [{items}]}}}}"#);
        assert!(why("nope").starts_with("line 4: invalid JSON"));
        assert!(why(r#"{"messages": []}"#).contains("no `responses_create_params`"));
        assert!(why(&row(
            r#"{"type": "message", "role": "tool", "content": "x"}"#
        ))
        .contains("input item 1: role `tool`"));
        assert!(why(&row(r#"{"type": "web_search_call"}"#)).contains("type `web_search_call`"));
        assert!(why(&row(
            r#"{"type": "message", "role": "user", "content": "x"},
               {"type": "function_call_output", "call_id": "c7", "output": "r"}"#
        ))
        .contains("call `c7`"));
        assert!(why(&row("")).contains("empty conversation"));
    }
}
