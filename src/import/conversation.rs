//! What every reader produces, and the checks every format shares: a
//! conversation is not empty, and every tool result answers a call made
//! before it.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::llm::message::{Message, Role};
use crate::persona::UserScenario;
use crate::verify::Criteria;

use super::LineProblem;

/// One conversation read from a source file.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedConversation {
    /// The leading system (or developer) message, when there is one.
    pub system_prompt: Option<String>,
    /// The rest, in order: user, assistant (with tool calls), tool results;
    /// a system message after the start stays here.
    pub messages: Vec<Message>,
    /// The tools offered, each `{name, description, parameters}`.
    pub tools: Vec<Value>,
    /// The source's reward, when it has one.
    pub reward: Option<f64>,
    /// The source row's other fields.
    pub metadata: Map<String, Value>,
    /// Where the source places it: the task (tau2's `task_id`) or prompt it
    /// answers, the trial, the persona. The job's items and pass^k group by
    /// them; a source without them leaves them `None`.
    pub origin: Origin,
    /// The hidden scenario its simulated user played (tau2's
    /// `user_scenario`), when the source has one: what the user checks
    /// that need a scenario read.
    pub scenario: Option<UserScenario>,
    /// Whether its user turns were written by a simulated user (tau2-bench,
    /// NeMo Gym's user-simulation rollouts) rather than a person; only then
    /// do the simulated-user checks flag anything.
    pub simulated_user: bool,
    /// The scenario's gold, when the source has it (tau2's
    /// `evaluation_criteria`, tau-bench's `actions` and `outputs`): what
    /// `premature_stop` and the gold-versus-taken view read.
    pub criteria: Option<Criteria>,
    /// The models the source names (tau2's `info`).
    pub models: Models,
    /// Whether its user speaks of its task's identifiers
    /// (`import::pairing`), when the source pairs it with a task that has
    /// some.
    pub pairing: Option<Value>,
}

/// The models that made a conversation, as its source names them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Models {
    /// The agent's.
    pub policy: Option<String>,
    /// The simulated user's.
    pub user: Option<String>,
}

/// Where a source places a conversation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Origin {
    pub scenario_id: Option<String>,
    pub persona_id: Option<String>,
    pub trial: Option<i64>,
}

impl ImportedConversation {
    /// Splits a leading system message off `messages` and checks the rest.
    pub(super) fn new(
        line: usize,
        mut messages: Vec<Message>,
        mut tools: Vec<Value>,
        reward: Option<f64>,
        mut metadata: Map<String, Value>,
    ) -> Result<Self, LineProblem> {
        let system_prompt = match messages.first() {
            Some(m) if m.role == Role::System => Some(messages.remove(0).content.to_string()),
            _ => None,
        };
        check(line, &messages)?;
        infer_tools(&messages, &mut tools, &mut metadata);
        // Where sparring's own exports say it (their metadata's names).
        let text = |key: &str| {
            metadata
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let origin = Origin {
            scenario_id: text("scenario"),
            persona_id: text("persona"),
            trial: metadata.get("sample").and_then(Value::as_i64),
        };
        Ok(ImportedConversation {
            system_prompt,
            messages,
            tools,
            reward,
            metadata,
            origin,
            scenario: None,
            simulated_user: false,
            criteria: None,
            models: Models::default(),
            pairing: None,
        })
    }
}

/// The metadata key naming the tools a source called without defining them.
pub const INFERRED_TOOLS_KEY: &str = "inferred_tools";

/// A tool the agent called that the source does not define (a tau2-bench
/// run whose `tool_defs` were not saved, a log without its tool list) is
/// added as `{name, description: "", parameters: {"type": "object"}}`, so
/// every export lists the tools its calls name, and the names are kept in
/// metadata as [`INFERRED_TOOLS_KEY`]. The user's own calls (dual control)
/// are the user's tools, not the agent's.
fn infer_tools(messages: &[Message], tools: &mut Vec<Value>, metadata: &mut Map<String, Value>) {
    let mut inferred: Vec<String> = Vec::new();
    for call in messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| &m.tool_calls)
    {
        let known = tools
            .iter()
            .any(|t| t.get("name").and_then(Value::as_str) == Some(call.name.as_str()));
        if !known {
            tools.push(serde_json::json!({
                "name": call.name,
                "description": "",
                "parameters": {"type": "object"},
            }));
            inferred.push(call.name.clone());
        }
    }
    if !inferred.is_empty() {
        metadata.insert(INFERRED_TOOLS_KEY.into(), serde_json::json!(inferred));
    }
}

fn check(line: usize, messages: &[Message]) -> Result<(), LineProblem> {
    if !messages.iter().any(|m| m.role != Role::System) {
        return Err(LineProblem::new(
            line,
            "empty conversation: no user, assistant or tool message",
        ));
    }
    let mut calls = HashSet::new();
    for (i, m) in messages.iter().enumerate() {
        calls.extend(m.tool_calls.iter().map(|c| c.id.as_str()));
        if m.role == Role::Tool {
            let id = m.tool_call_id.as_deref().unwrap_or_default();
            if !calls.contains(id) {
                return Err(LineProblem::new(
                    line,
                    format!(
                        "message {}: a tool result answers call `{id}`, which no earlier message made",
                        i + 1
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A tool as `{name, description, parameters}`, from the chat-completion
/// shape (`{"type": "function", "function": {...}}`) or a bare one.
pub(super) fn tool_spec(line: usize, tool: &Value) -> Result<Value, LineProblem> {
    let spec = tool.get("function").unwrap_or(tool);
    let name = spec.get("name").and_then(Value::as_str).ok_or_else(|| {
        LineProblem::new(
            line,
            "a tool has no `name` (expected `{name, description, parameters}`)",
        )
    })?;
    let mut out = Map::new();
    out.insert("name".into(), Value::String(name.to_string()));
    out.insert(
        "description".into(),
        spec.get("description")
            .cloned()
            .filter(|d| !d.is_null())
            .unwrap_or(Value::String(String::new())),
    );
    out.insert(
        "parameters".into(),
        spec.get("parameters").cloned().unwrap_or(Value::Null),
    );
    Ok(Value::Object(out))
}

/// [`tool_spec`] of each element of `tools`, which must be an array.
pub(super) fn tool_specs(line: usize, tools: Option<&Value>) -> Result<Vec<Value>, LineProblem> {
    match tools {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(tools)) => tools.iter().map(|t| tool_spec(line, t)).collect(),
        Some(_) => Err(LineProblem::new(line, "`tools` is not a list")),
    }
}

/// The text of a message's `content`: a string, `null` (empty), or a list of
/// parts each with a `text`.
pub(super) fn text(line: usize, content: Option<&Value>) -> Result<String, LineProblem> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut out = String::new();
            for part in parts {
                let text = match part {
                    Value::String(s) => s.as_str(),
                    _ => part
                        .get("text")
                        .and_then(Value::as_str)
                        .ok_or_else(|| LineProblem::new(line, "a content part has no `text`"))?,
                };
                out.push_str(text);
            }
            Ok(out)
        }
        Some(_) => Err(LineProblem::new(
            line,
            "`content` is neither text nor a list of text parts",
        )),
    }
}

/// Parses `text` as a JSON object.
pub(super) fn object(line: usize, text: &str) -> Result<Map<String, Value>, LineProblem> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(row)) => Ok(row),
        Ok(_) => Err(LineProblem::new(line, "not a JSON object")),
        Err(e) => Err(LineProblem::new(
            line,
            format!(
                "invalid JSON at column {}: {}",
                e.column(),
                crate::diagnostics::problem::json_message(&e)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Format;

    #[test]
    fn a_tool_called_but_not_defined_is_added_and_named_in_metadata() {
        let line = r#"{"messages": [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "transfer", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}],
            "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]}"#;
        let c = Format::Openai.read_line(line, 1).unwrap();
        let names: Vec<&str> = c
            .tools
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["lookup", "transfer"]);
        assert_eq!(c.tools[1]["parameters"]["type"], "object");
        assert_eq!(
            c.metadata[INFERRED_TOOLS_KEY],
            serde_json::json!(["transfer"])
        );
        let defined = r#"{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}"#;
        let c = Format::Openai.read_line(defined, 1).unwrap();
        assert!(c.tools.is_empty() && !c.metadata.contains_key(INFERRED_TOOLS_KEY));
    }
}
