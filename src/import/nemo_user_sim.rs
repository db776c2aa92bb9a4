//! NeMo Gym's `nemo_user_sim` rollouts (NVIDIA's NeMo User Sim run as a
//! NeMo Gym environment): no `responses_create_params`; the conversation is
//! `usersim_result.conversation_messages`, chat messages (`role`,
//! `content`, `tool_calls`, and `reasoning_content`, kept in metadata
//! under `reasoning` with the index of its message). The tools and the
//! system prompt are those of the first `assistant` call in `invocations`
//! (its request's `tools` and `instructions`). `reward` is the reward, and
//! every other field (`verification`, `invocations`, the rest of
//! `usersim_result`: persona, probe, theme ...) is kept in metadata. The
//! persona is `usersim_result.persona.uuid`; the user is simulated when a
//! `user` call wrote a turn (`invocations`) or there is more than one user
//! turn: a lone opening taken verbatim from the probe bank is not.

use serde_json::{json, Map, Value};

use crate::llm::message::Role;

use super::chat;
use super::conversation::tool_specs;
use super::nemo_gym_row::{origin, user_turns};
use super::{ImportedConversation, LineProblem, Origin};

pub(super) fn read(
    mut row: Map<String, Value>,
    line: usize,
) -> Result<ImportedConversation, LineProblem> {
    let mut result = match row.remove("usersim_result") {
        Some(Value::Object(r)) => r,
        _ => return Err(LineProblem::new(line, "`usersim_result` is not an object")),
    };
    let conversation = match result.remove("conversation_messages") {
        Some(Value::Array(list)) => list,
        _ => {
            return Err(LineProblem::new(
                line,
                "`usersim_result.conversation_messages` is not a list",
            ))
        }
    };
    let wrapped = json!(conversation);
    let (mut messages, _) = chat::messages(line, Some(&wrapped)).map_err(|p| {
        LineProblem::new(
            line,
            format!("usersim_result.conversation_messages: {}", p.why),
        )
    })?;
    let offset = usize::from(messages.first().map(|m| m.role) == Some(Role::System));
    let reasoning: Vec<Value> = conversation
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let text = m
                .get("reasoning_content")?
                .as_str()
                .filter(|t| !t.is_empty())?;
            Some(json!({"message": i.checked_sub(offset)?, "reasoning_content": text}))
        })
        .collect();
    let invocations = row.get("invocations").and_then(Value::as_array);
    let assistant = invocations
        .into_iter()
        .flatten()
        .find(|i| i.get("role").and_then(Value::as_str) == Some("assistant"))
        .and_then(|i| i.get("request"));
    let tools = tool_specs(line, assistant.and_then(|r| r.get("tools")))?;
    let instructions = assistant
        .and_then(|r| r.get("instructions"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    if let (Some(instructions), 0) = (instructions, offset) {
        messages.insert(0, crate::llm::message::Message::system(instructions));
    }
    let user_call = invocations
        .into_iter()
        .flatten()
        .any(|i| i.get("role").and_then(Value::as_str) == Some("user"));
    let persona_id = result
        .get("persona")
        .and_then(|p| p.get("uuid"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let reward = row.get("reward").and_then(Value::as_f64);
    row.insert("usersim_result".into(), Value::Object(result));
    if !reasoning.is_empty() {
        row.insert("reasoning".into(), Value::Array(reasoning));
    }
    let mut c = ImportedConversation::new(line, messages, tools, reward, row)?;
    c.origin = Origin {
        persona_id,
        ..origin(&c.metadata)
    };
    c.simulated_user = user_call || user_turns(&c.messages) > 1;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::super::nemo_gym::read_line;
    use super::*;

    const ROW: &str = r#"{"reward": 0.6, "verification": {"reward": 0.6},
      "usersim_result": {"conversation_messages": [
          {"role": "user", "content": "Move $500 to checking."},
          {"role": "assistant", "content": "Your name?", "tool_calls": null, "reasoning_content": "verify first"}],
        "persona": {"uuid": "p-1", "first_name": "Ex"}, "probe_type": "financial_services"},
      "invocations": [
        {"role": "user", "request": {"input": []}},
        {"role": "assistant", "request": {"instructions": "You are a bank.",
          "tools": [{"type": "function", "name": "kb_search", "description": "d", "parameters": {}}]}}],
      "_ng_task_id": {"taskset": "nemo_user_sim:example", "task_id": "ex-5"}, "_ng_rollout_index": 2}"#;

    #[test]
    fn the_conversation_messages_with_the_assistants_tools_persona_and_task() {
        let c = read_line(ROW, 1).unwrap();
        assert_eq!(c.system_prompt.as_deref(), Some("You are a bank."));
        let roles: Vec<_> = c.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant]);
        assert_eq!(c.tools[0]["name"], "kb_search");
        assert_eq!(c.reward, Some(0.6));
        assert_eq!(c.metadata["verification"]["reward"], 0.6);
        assert_eq!(
            c.metadata["usersim_result"]["probe_type"],
            "financial_services"
        );
        assert!(c.metadata["usersim_result"]
            .get("conversation_messages")
            .is_none());
        assert_eq!(
            c.metadata["reasoning"][0],
            json!({"message": 1, "reasoning_content": "verify first"})
        );
        assert_eq!(c.origin.scenario_id.as_deref(), Some("ex-5"));
        assert_eq!(c.origin.persona_id.as_deref(), Some("p-1"));
        assert_eq!(c.origin.trial, Some(2));
        assert!(c.simulated_user);
    }

    #[test]
    fn a_lone_opening_from_the_bank_is_no_simulated_user() {
        let row = ROW.replace(r#"{"role": "user", "request": {"input": []}},"#, "");
        assert!(!read_line(&row, 1).unwrap().simulated_user);
    }

    #[test]
    fn a_conversation_that_does_not_fit_says_why() {
        let why = |t: &str| read_line(t, 3).unwrap_err().to_string();
        assert!(why(r#"{"usersim_result": 1}"#).contains("`usersim_result` is not an object"));
        assert!(why(r#"{"usersim_result": {}}"#).contains("conversation_messages` is not a list"));
        assert!(
            why(r#"{"usersim_result": {"conversation_messages": [{"role": "judge"}]}}"#)
                .contains("message 1: role `judge`")
        );
        assert!(why(r#"{"usersim_result": {"conversation_messages": []}}"#)
            .contains("empty conversation"));
    }
}
