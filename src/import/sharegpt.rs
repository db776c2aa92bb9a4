//! `sharegpt` rows, as `sparring export --format sharegpt` writes them
//! (LLaMA-Factory's ShareGPT): `conversations` of `{from, value}` turns,
//! `from` one of `human`, `gpt`, `function_call`, `observation`; `system`
//! and `tools` (JSON text) at the top level; `metadata`.
//!
//! ShareGPT has no call ids: each call gets `call_<turn>_<n>`, and the
//! observation after it answers it. The results of parallel calls are one
//! observation joined by newlines, so an observation after `n` calls must
//! split into `n` lines; one that does not cannot be paired and is a problem.

use serde_json::{Map, Value};

use crate::llm::message::{Message, ToolCall};

use super::conversation::{object, tool_specs};
use super::{ImportedConversation, LineProblem};

pub fn read_line(text: &str, line: usize) -> Result<ImportedConversation, LineProblem> {
    let mut row = object(line, text)?;
    let turns = row
        .remove("conversations")
        .and_then(|c| c.as_array().cloned())
        .ok_or_else(|| LineProblem::new(line, "no `conversations` list"))?;
    let mut messages = Vec::with_capacity(turns.len() + 1);
    match row.remove("system") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.is_empty() => {}
        Some(Value::String(s)) => messages.push(Message::system(s)),
        Some(_) => return Err(LineProblem::new(line, "`system` is not text")),
    }
    let mut pending: Vec<String> = Vec::new();
    for (i, turn) in turns.iter().enumerate() {
        let at = |why: String| LineProblem::new(line, format!("turn {}: {why}", i + 1));
        let from = turn.get("from").and_then(Value::as_str).unwrap_or_default();
        let value = turn
            .get("value")
            .and_then(Value::as_str)
            .ok_or_else(|| at("no `value` text".into()))?;
        match from {
            "human" => messages.push(Message::user(value)),
            "gpt" => messages.push(Message::assistant(value)),
            "function_call" => {
                let calls = function_calls(i + 1, value).map_err(at)?;
                pending = calls.iter().map(|c| c.id.clone()).collect();
                messages.push(Message {
                    tool_calls: calls,
                    ..Message::assistant("")
                });
            }
            "observation" => {
                let results = observations(value, &pending).map_err(at)?;
                pending.clear();
                messages.extend(results);
            }
            other => {
                return Err(at(format!(
                    "`from` is `{other}`, not one of human, gpt, function_call, observation"
                )))
            }
        }
    }
    let tools = match row.remove("tools") {
        Some(Value::String(s)) if s.is_empty() => Vec::new(),
        Some(Value::String(s)) => {
            let tools: Value = serde_json::from_str(&s)
                .map_err(|e| LineProblem::new(line, format!("`tools` is not JSON text: {e}")))?;
            tool_specs(line, Some(&tools))?
        }
        other => tool_specs(line, other.as_ref())?,
    };
    let mut metadata = match row.remove("metadata") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(LineProblem::new(line, "`metadata` is not an object")),
    };
    metadata.extend(row);
    let reward = metadata.get("reward").and_then(Value::as_f64);
    ImportedConversation::new(line, messages, tools, reward, metadata)
}

/// The calls of a `function_call` value: the JSON text of one
/// `{name, arguments}` or of a list of them.
fn function_calls(turn: usize, value: &str) -> Result<Vec<ToolCall>, String> {
    let parsed: Value = serde_json::from_str(value)
        .map_err(|e| format!("a function_call value is not JSON: {e}"))?;
    let calls = match parsed {
        Value::Array(calls) => calls,
        one => vec![one],
    };
    if calls.is_empty() {
        return Err("a function_call with no call".into());
    }
    calls
        .iter()
        .enumerate()
        .map(|(n, call)| {
            let name = call
                .get("name")
                .and_then(Value::as_str)
                .ok_or("a function call has no `name`")?;
            let arguments = match call.get("arguments") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            Ok(ToolCall {
                id: format!("call_{turn}_{}", n + 1),
                name: name.to_string(),
                arguments,
            })
        })
        .collect()
}

/// The tool results of an observation answering the calls `pending`.
fn observations(value: &str, pending: &[String]) -> Result<Vec<Message>, String> {
    match pending {
        [] => Err("an observation with no function_call before it".into()),
        [one] => Ok(vec![Message::tool_result(one.clone(), value)]),
        many => {
            let lines: Vec<&str> = value.split('\n').collect();
            if lines.len() != many.len() {
                return Err(format!(
                    "an observation after {} parallel calls has {} lines, not one per call",
                    many.len(),
                    lines.len()
                ));
            }
            Ok(many
                .iter()
                .zip(lines)
                .map(|(id, text)| Message::tool_result(id.clone(), text))
                .collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::Role;

    const ROW: &str = r#"{"conversations": [
        {"from": "human", "value": "where are #1 and #2?"},
        {"from": "function_call", "value": "[{\"name\": \"get\", \"arguments\": {\"id\": 1}}, {\"name\": \"get\", \"arguments\": {\"id\": 2}}]"},
        {"from": "observation", "value": "a\nb"},
        {"from": "gpt", "value": "both shipped"}],
      "system": "be kind",
      "tools": "[{\"name\": \"get\", \"description\": \"d\", \"parameters\": {}}]",
      "metadata": {"persona": "p"}}"#;

    #[test]
    fn parallel_calls_get_ids_and_their_observation_splits_into_one_result_each() {
        let c = read_line(ROW, 1).unwrap();
        assert_eq!(c.system_prompt.as_deref(), Some("be kind"));
        let roles: Vec<Role> = c.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::User,
                Role::Assistant,
                Role::Tool,
                Role::Tool,
                Role::Assistant
            ]
        );
        assert_eq!(c.messages[1].tool_calls[1].id, "call_2_2");
        assert_eq!(c.messages[1].tool_calls[1].arguments, r#"{"id":2}"#);
        assert_eq!(c.messages[3].tool_call_id.as_deref(), Some("call_2_2"));
        assert_eq!(c.messages[3].content.as_ref(), "b");
        assert_eq!(c.tools[0]["name"], "get");
        assert_eq!(c.metadata["persona"], "p");
    }

    #[test]
    fn each_bad_row_is_a_problem_at_its_line() {
        let why = |t: &str| read_line(t, 2).unwrap_err().to_string();
        let row = |turns: &str| format!(r#"{{"conversations": [{turns}]}}"#);
        assert!(why("{").starts_with("line 2: invalid JSON"));
        assert!(why(r#"{"messages": []}"#).contains("no `conversations`"));
        assert!(why(&row(r#"{"from": "bot", "value": "x"}"#)).contains("`from` is `bot`"));
        assert!(why(&row(r#"{"from": "observation", "value": "x"}"#))
            .contains("no function_call before it"));
        assert!(why(&row(r#"{"from": "function_call", "value": "oops"}"#)).contains("not JSON"));
        let parallel = r#"{"from": "function_call", "value": "[{\"name\": \"a\"}, {\"name\": \"b\"}]"},
            {"from": "observation", "value": "one line"}"#;
        assert!(why(&row(parallel)).contains("2 parallel calls has 1 lines"));
        assert!(why(&row("")).contains("empty conversation"));
        assert!(
            why(r#"{"conversations": [{"from": "human", "value": "x"}], "tools": "{"}"#)
                .contains("`tools` is not JSON")
        );
    }
}
