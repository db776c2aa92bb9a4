//! A stored conversation as NeMo Gym's multi-turn agents write a rollout:
//! `responses_create_params.input` is what the policy was given before the
//! conversation (the row's input; for a sparring scenario, the policy's
//! system prompt), and `response.output` is everything after it, in order:
//! the policy's messages, its `function_call`s and their
//! `function_call_output`s, and the simulated user's turns as `message`
//! items with role `user` (as NeMo Gym's `tau2` agent writes them). Those
//! user items are not the policy's tokens: trainers that read roles never
//! train on them.

use serde_json::{json, Map, Value};

use crate::env::nemo_gym::rollout::{drop_nulls, response_tools};
use crate::env::nemo_gym::training::{self, Turn};
use crate::llm::message::{Message, Role};
use crate::persona::nemo_gym::REQUEST_FIELD;
use crate::store::{NewConversation, NewMessage};
use crate::token_ids::TokenIds;

/// `responses_create_params` and `response` of a conversation, from the
/// request's `responses_create_params`; `prelude` is how many of its first
/// messages the row's input gave (0: a sparring scenario, whose first
/// message is the policy's system prompt).
pub fn rollout(
    request: &Map<String, Value>,
    conversation: &NewConversation,
    prelude: usize,
    response_id: &str,
) -> (Value, Value) {
    let messages = &conversation.messages;
    let mut request = request.clone();
    let given = if prelude > 0 {
        prelude
    } else {
        // The policy's system prompt, and a greeting the policy did not
        // write (the job's), are what it was given.
        let system: Vec<&NewMessage> = messages
            .iter()
            .take_while(|m| m.author == "system")
            .collect();
        request.insert(
            "input".into(),
            Value::Array(system.iter().map(|m| input_item(m)).collect()),
        );
        system.len()
    };
    let tools = match request.get("tools") {
        Some(Value::Array(tools)) if !tools.is_empty() => Value::Array(tools.clone()),
        _ => {
            let tools = specs_as_responses_tools(&conversation.tools);
            request.insert("tools".into(), tools.clone());
            tools
        }
    };
    let output = output_items(&messages[given.min(messages.len())..]);
    let usage = policy_usage(conversation);
    let response = json!({
        "id": response_id,
        "object": "response",
        "created_at": conversation.finished_at / 1000,
        "model": conversation.policy_model,
        "output": output,
        "parallel_tool_calls": request.get("parallel_tool_calls").and_then(Value::as_bool).unwrap_or(true),
        "tool_choice": "auto",
        "tools": response_tools(&tools),
        "status": "completed",
        "usage": usage,
    });
    (drop_nulls(Value::Object(request)), response)
}

/// The job's tools (`[{name, description, parameters}]`) as Responses tools.
fn specs_as_responses_tools(specs: &Value) -> Value {
    let list = specs.as_array().map(Vec::as_slice).unwrap_or_default();
    Value::Array(
        list.iter()
            .map(|spec| {
                json!({
                    "type": "function",
                    "name": spec.get("name").cloned().unwrap_or(Value::Null),
                    "description": spec.get("description").cloned().unwrap_or(Value::Null),
                    "parameters": spec.get("parameters").cloned().unwrap_or_else(|| json!({})),
                    "strict": false,
                })
            })
            .collect(),
    )
}

/// A message the policy was given, as a Responses input item.
fn input_item(message: &NewMessage) -> Value {
    let role = match message.role.as_str() {
        "system" => "system",
        "assistant" => "assistant",
        _ => "user",
    };
    json!({"type": "message", "role": role, "content": &*message.content})
}

/// A stored message as the transcript held it (`None`: a role sparring
/// does not write).
fn message_of(message: &NewMessage) -> Option<Message> {
    Some(Message {
        role: Role::parse(&message.role)?,
        content: message.content.clone(),
        tool_calls: message
            .tool_calls
            .as_ref()
            .and_then(|calls| serde_json::from_value(calls.clone()).ok())
            .unwrap_or_default(),
        tool_call_id: message.tool_call_id.clone(),
        reasoning: None,
    })
}

/// Stored messages as output items, each policy generation's token
/// information (where its server returned it) on its last item.
pub fn output_items(stored: &[NewMessage]) -> Vec<Value> {
    let messages: Vec<(Message, Option<&TokenIds>)> = stored
        .iter()
        .filter_map(|m| Some((message_of(m)?, m.tokens.as_deref())))
        .collect();
    let turns: Vec<Turn<'_>> = messages
        .iter()
        .map(|(message, tokens)| Turn {
            message,
            tokens: *tokens,
        })
        .collect();
    training::output_items(&turns)
}

/// The policy's token usage, in the Responses shape.
fn policy_usage(conversation: &NewConversation) -> Value {
    let (input, output) = conversation
        .usage
        .iter()
        .filter(|u| u.role == "policy")
        .fold((0, 0), |(i, o), u| {
            (i + u.prompt_tokens, o + u.completion_tokens)
        });
    json!({
        "input_tokens": input,
        "output_tokens": output,
        "total_tokens": input + output,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    })
}

/// The row's request as the rollout keeps it: the row's.
pub fn row_request(row: &Map<String, Value>) -> Map<String, Value> {
    row.get(REQUEST_FIELD)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn message(role: &str, author: &str, content: &str) -> NewMessage {
        NewMessage {
            role: role.into(),
            content: content.into(),
            tool_calls: None,
            tool_call_id: None,
            author: author.into(),
            prompt_tokens: None,
            completion_tokens: None,
            latency_ms: None,
            tokens: None,
        }
    }

    fn conversation(messages: Vec<NewMessage>) -> NewConversation {
        NewConversation {
            job_id: 1,
            item_id: 1,
            item_key: "s/p/0".into(),
            scenario_id: "s".into(),
            persona_id: "p".into(),
            sample: 0,
            seed: 1,
            policy_model: "mock-policy".into(),
            user_model: "mock-user".into(),
            termination: "user_stop".into(),
            reward: Some(1.0),
            reward_breakdown: Value::Null,
            metadata: Value::Null,
            tools: Arc::new(
                json!([{"name": "find", "description": "d", "parameters": {"type": "object"}}]),
            ),
            usage: vec![],
            started_at: 0,
            finished_at: 5000,
            user_checks: None,
            messages,
        }
    }

    #[test]
    fn a_scenario_conversation_puts_the_system_prompt_in_the_input_and_every_turn_after_it_in_the_output(
    ) {
        let mut call = message("assistant", "policy", "");
        call.tool_calls = Some(json!([{"id": "c1", "name": "find", "arguments": "{}"}]));
        let mut result = message("tool", "env", "{\"found\": true}");
        result.tool_call_id = Some("c1".into());
        let c = conversation(vec![
            message("system", "system", "You are support."),
            message("user", "user", "Where is my order?"),
            call,
            result,
            message("assistant", "policy", "It ships today."),
            message("user", "user", "Thanks!"),
        ]);
        let (request, response) = rollout(&Map::new(), &c, 0, "resp_1");
        assert_eq!(request["input"][0]["role"], "system");
        assert_eq!(request["tools"][0]["name"], "find");
        let output = response["output"].as_array().unwrap();
        let kinds: Vec<(String, String)> = output
            .iter()
            .map(|o| {
                (
                    o["type"].as_str().unwrap().to_string(),
                    o["role"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("message".to_string(), "user".to_string()),
                ("function_call".into(), "".into()),
                ("function_call_output".into(), "".into()),
                ("message".into(), "assistant".into()),
                ("message".into(), "user".into()),
            ]
        );
        assert_eq!(output[4]["content"], "Thanks!");
        assert_eq!(response["created_at"], 5);
    }

    #[test]
    fn a_rows_input_stays_as_written_and_only_what_follows_is_output() {
        let request = json!({"input": [{"role": "user", "content": "hi"}], "tool_choice": null})
            .as_object()
            .cloned()
            .unwrap();
        let c = conversation(vec![
            message("user", "system", "hi"),
            message("assistant", "policy", "hello"),
        ]);
        let (request, response) = rollout(&request, &c, 1, "r");
        assert_eq!(request["input"][0]["content"], "hi");
        assert!(request.get("tool_choice").is_none(), "nulls dropped");
        assert_eq!(response["output"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn a_policy_generations_token_ids_ride_its_last_output_item_and_the_users_turns_carry_none() {
        let tokens = crate::token_ids::TokenIds {
            prompt_token_ids: vec![1, 2],
            generation_token_ids: vec![3],
            generation_log_probs: vec![-0.5],
        };
        let mut reply = message("assistant", "policy", "hello");
        reply.tokens = Some(Arc::new(tokens));
        let c = conversation(vec![
            message("system", "system", "S"),
            message("user", "user", "hi"),
            reply,
            message("user", "user", "bye"),
        ]);
        let (_, response) = rollout(&Map::new(), &c, 0, "r");
        let output = response["output"].as_array().unwrap();
        assert_eq!(output[1]["generation_token_ids"], json!([3]));
        assert_eq!(output[1]["prompt_token_ids"], json!([1, 2]));
        assert_eq!(output[1]["generation_log_probs"], json!([-0.5]));
        for user in [&output[0], &output[2]] {
            assert_eq!(user["role"], "user");
            assert!(
                user.get("generation_token_ids").is_none(),
                "never trainable"
            );
        }
    }
}
