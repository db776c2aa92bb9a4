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
//! Where the row places the conversation (`origin`): the task
//! (`_ng_task_id.task_id`, the `tau2` agent's `task.id`, the row's `id`, or
//! `_ng_task_index`) and the trial (`_ng_rollout_index`). The hidden
//! scenario its simulated user played: the `tau2` agent's
//! `task.user_scenario` (as in a tau2-bench results file), or
//! `conversational_tool_use_simulation`'s `customer_scenario`
//! (`reason_for_contact`, `customer_details` as the known info,
//! `unknown_info`, `task_instructions`; `customer_persona` is the persona).
//! Its user is simulated when it has such a scenario or more than one user
//! turn; then its control tokens are cut from its text (`user_outputs`, see
//! `import::control_tokens`).
//!
//! `nemo_user_sim`'s rollouts hold their conversation elsewhere
//! (`usersim_result.conversation_messages`, chat messages): a row with
//! `usersim_result` and no `responses_create_params` is read by
//! `nemo_user_sim`.

use serde_json::{json, Map, Value};

use crate::llm::message::{Message, Role, ToolCall};
use crate::persona::UserScenario;

use super::conversation::{object, text, tool_specs};
use super::nemo_gym_row::{origin, user_turns};
use super::tau2::{instruction_field, user_scenario};
use super::{control_tokens, nemo_user_sim, ImportedConversation, LineProblem, Origin};

pub fn read_line(text: &str, line: usize) -> Result<ImportedConversation, LineProblem> {
    let mut row = object(line, text)?;
    if !row.contains_key("responses_create_params") && row.contains_key("usersim_result") {
        return nemo_user_sim::read(row, line);
    }
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
    let (scenario, persona_id) = scenario(&row).map_err(|why| LineProblem::new(line, why))?;
    let mut conversation = ImportedConversation::new(line, messages, tools, reward, row)?;
    conversation.origin = Origin {
        persona_id,
        ..origin(&conversation.metadata)
    };
    conversation.simulated_user = scenario.is_some() || user_turns(&conversation.messages) > 1;
    conversation.scenario = scenario;
    if conversation.simulated_user {
        cut_control_tokens(&mut conversation);
    }
    Ok(conversation)
}

/// A simulated user's control tokens cut as sparring cuts its own user's
/// (see `import::control_tokens`), the reasoning's places moved with them.
fn cut_control_tokens(conversation: &mut ImportedConversation) {
    let cut = control_tokens::cut(&mut conversation.messages);
    if cut.outputs.is_empty() {
        return;
    }
    if let Some(Value::Array(reasoning)) = conversation.metadata.get_mut("reasoning") {
        for r in reasoning {
            if let Some(at) = r["before_message"]
                .as_u64()
                .and_then(|a| usize::try_from(a).ok())
            {
                r["before_message"] = json!(control_tokens::shifted(at, &cut.dropped));
            }
        }
    }
    conversation
        .metadata
        .insert("user_outputs".into(), Value::Array(cut.outputs));
}

/// The scenario the row's simulated user played, and its persona's name.
fn scenario(row: &Map<String, Value>) -> Result<(Option<UserScenario>, Option<String>), String> {
    if let Some(task) = row.get("task").filter(|t| t.get("user_scenario").is_some()) {
        let (scenario, _persona) =
            user_scenario(task.get("user_scenario")).map_err(|why| format!("`task`: {why}"))?;
        return Ok((scenario, None));
    }
    let Some(customer) = row.get("customer_scenario").filter(|c| !c.is_null()) else {
        return Ok((None, None));
    };
    let fields = customer
        .as_object()
        .ok_or("`customer_scenario` is not an object")?;
    let at = |why: String| format!("`customer_scenario`: {why}");
    let scenario = UserScenario {
        reason_for_contact: instruction_field(fields, "reason_for_contact").map_err(at)?,
        known_info: instruction_field(fields, "customer_details").map_err(at)?,
        unknown_info: instruction_field(fields, "unknown_info").map_err(at)?,
        task_instructions: instruction_field(fields, "task_instructions").map_err(at)?,
        opening: None,
        turns: Vec::new(),
    };
    let persona = fields
        .get("customer_persona")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
        .map(str::to_string);
    Ok((Some(scenario), persona))
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
        assert_eq!(c.origin.scenario_id.as_deref(), Some("3"));
        assert!(!c.simulated_user, "one user turn and no scenario");
    }

    #[test]
    fn a_tau2_task_or_a_customer_scenario_is_the_simulated_users_scenario() {
        let tau2 = ROW.replace(
            r#""task": {"id": 3}"#,
            r#""task": {"id": "50", "user_scenario": {"persona": null, "instructions": {
                "domain": "retail", "reason_for_call": "undo", "known_info": "Chen",
                "unknown_info": "email", "task_instructions": "."}}},
               "_ng_task_index": 192, "_ng_rollout_index": 3"#,
        );
        let c = read_line(&tau2, 1).unwrap();
        assert_eq!(c.origin.scenario_id.as_deref(), Some("50"));
        assert_eq!(c.origin.trial, Some(3));
        assert_eq!(c.scenario.as_ref().unwrap().reason_for_contact, "undo");
        assert!(c.simulated_user);
        let customer = ROW.replace(
            r#""task": {"id": 3}"#,
            r#""id": "s_5", "customer_scenario": {"customer_persona": "Accessibility advocate",
                "reason_for_contact": "ASL", "customer_details": "ACC123",
                "unknown_info": "notice", "task_instructions": "ask"}"#,
        );
        let c = read_line(&customer, 1).unwrap();
        assert_eq!(c.origin.scenario_id.as_deref(), Some("s_5"));
        assert_eq!(
            c.origin.persona_id.as_deref(),
            Some("Accessibility advocate")
        );
        assert_eq!(c.scenario.as_ref().unwrap().known_info, "ACC123");
        assert!(c.simulated_user);
        let broken = ROW.replace(
            r#""task": {"id": 3}"#,
            r#""customer_scenario": {"unknown_info": 1}"#,
        );
        assert!(read_line(&broken, 2)
            .unwrap_err()
            .to_string()
            .contains("`customer_scenario`: `unknown_info`"));
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
