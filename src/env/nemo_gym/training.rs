//! A conversation's turns as NeMo Gym rollout items with the policy's token
//! information (`prompt_token_ids`, `generation_token_ids`,
//! `generation_log_probs`: NeMo Gym's `TokenIDLogProbMixin`), for the
//! `nemo_gym` export and the agent server's `/run` answers.
//!
//! Where they go, as NeMo Gym's own converter puts them
//! (`VLLMConverter.postprocess_assistant_message_dict`): one generation may
//! make a `message` item and `function_call` items; its token information is
//! on the **last** of them only, so a trainer counts each generation once. A
//! generation with neither text nor calls is an empty `output_text` message
//! carrying them. Turns without token information (the simulated user's, the
//! environment's, a policy server that returned none) carry none: nothing is
//! invented, not even empty lists.

use serde_json::{json, Map, Value};

use crate::llm::message::{Message, Role};
use crate::persona::nemo_gym::REQUEST_FIELD;
use crate::token_ids::TokenIds;

use super::rollout::{input_items, output_items_of, Parts};

/// One message of a conversation (the policy's view) with the token
/// information of the policy generation that produced it, if any.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    pub message: &'a Message,
    pub tokens: Option<&'a TokenIds>,
}

/// Put `tokens`' three fields on `item` (a JSON object), untouched.
pub fn attach(item: &mut Value, tokens: &TokenIds) {
    if let Some(map) = item.as_object_mut() {
        map.insert("prompt_token_ids".into(), json!(tokens.prompt_token_ids));
        map.insert(
            "generation_token_ids".into(),
            json!(tokens.generation_token_ids),
        );
        map.insert(
            "generation_log_probs".into(),
            json!(tokens.generation_log_probs),
        );
    }
}

/// `turns` as Responses output items, the way NeMo Gym's multi-turn agents
/// (its `tau2` agent) write a conversation into `response.output`: the
/// policy's messages as `message` and `function_call` items, each
/// generation's token information on its last item; the environment's
/// answers as `function_call_output` items; the simulated user's words as
/// `message` items with role `user` (never with token information); system
/// prompts left out (they belong to the request's input).
pub fn output_items(turns: &[Turn<'_>]) -> Vec<Value> {
    let mut items = Vec::new();
    for (index, turn) in turns.iter().enumerate() {
        match turn.message.role {
            Role::System => {}
            Role::User => items.push(json!({
                "type": "message",
                "role": "user",
                "content": &*turn.message.content,
            })),
            Role::Assistant | Role::Tool => {
                let mut made = output_items_of(turn.message, index);
                if let Some(tokens) = turn.tokens.filter(|_| turn.message.role == Role::Assistant) {
                    if made.is_empty() {
                        made.push(empty_output_message(index));
                    }
                    if let Some(last) = made.last_mut() {
                        attach(last, tokens);
                    }
                }
                items.extend(made);
            }
        }
    }
    items
}

/// What an empty generation is in NeMo Gym's output: a message with one
/// empty `output_text`.
fn empty_output_message(index: usize) -> Value {
    json!({
        "type": "message",
        "id": format!("msg_{index}"),
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "", "annotations": []}],
    })
}

/// Why a stored rollout's items do not match the messages stored with it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Mismatch(String);

/// Put each policy generation's token information on the items of
/// `rollout` it produced: a rollout sparring wrote for `/verify`
/// ([`super::rollout::verify_request`], stored with the verifier's reply)
/// from `turns` (the conversation's messages in the policy's view, the
/// row's `prelude` of input items first). The policy's turns before the last
/// user message are items of `responses_create_params.input` (as
/// `verify_request` puts them), its last turn those of `response.output`.
/// Nothing else of the rollout changes; turns without tokens change nothing.
pub fn put_on_rollout(
    rollout: &mut Value,
    prelude: usize,
    turns: &[Turn<'_>],
) -> Result<(), Mismatch> {
    if turns.iter().all(|t| t.tokens.is_none()) {
        return Ok(());
    }
    let messages: Vec<Message> = turns.iter().map(|t| t.message.clone()).collect();
    let parts = Parts::of(prelude, &messages);
    if !parts.more_input.is_empty() {
        let input = items_at(rollout, &[REQUEST_FIELD, "input"])?;
        let mut at = prelude;
        for turn in &turns[parts.more_input.clone()] {
            let made = input_items(turn.message);
            at += place(
                input,
                at,
                &made,
                turn,
                || json!({"role": "assistant", "content": ""}),
            )?;
        }
    }
    let output = items_at(rollout, &["response", "output"])?;
    let mut at = 0;
    for (index, turn) in turns[parts.output].iter().enumerate() {
        let made = output_items_of(turn.message, index);
        at += place(output, at, &made, turn, || empty_output_message(index))?;
    }
    Ok(())
}

/// The array at `path` in `rollout`.
fn items_at<'v>(rollout: &'v mut Value, path: &[&str]) -> Result<&'v mut Vec<Value>, Mismatch> {
    let mut at = rollout;
    for key in path {
        at = at
            .get_mut(*key)
            .ok_or_else(|| Mismatch(format!("the rollout has no `{}`", path.join("."))))?;
    }
    at.as_array_mut()
        .ok_or_else(|| Mismatch(format!("the rollout's `{}` is not a list", path.join("."))))
}

/// The turn's `made` items stand at `at` in `items`: put its tokens on the
/// last of them (inserting `empty` where a generation made none). Returns
/// how many items the turn has there.
fn place(
    items: &mut Vec<Value>,
    at: usize,
    made: &[Value],
    turn: &Turn<'_>,
    empty: impl FnOnce() -> Value,
) -> Result<usize, Mismatch> {
    let Some(tokens) = turn.tokens.filter(|_| turn.message.role == Role::Assistant) else {
        return Ok(made.len());
    };
    if made.is_empty() {
        if at > items.len() {
            return Err(Mismatch(format!(
                "the rollout has {} items where the messages make at least {at}",
                items.len()
            )));
        }
        let mut item = empty();
        attach(&mut item, tokens);
        items.insert(at, item);
        return Ok(1);
    }
    let last = at + made.len() - 1;
    let (Some(stored), Some(expected)) = (items.get_mut(last), made.last()) else {
        return Err(Mismatch(format!(
            "the rollout has {} items where the messages make {}",
            items.len(),
            last + 1
        )));
    };
    if !same_item(stored, expected) {
        return Err(Mismatch(format!(
            "item {last} of the rollout is {}, where the messages make {}",
            describe(stored),
            describe(expected)
        )));
    }
    attach(stored, tokens);
    Ok(made.len())
}

/// Whether a stored item is the one a message makes: the same type, role
/// and call id (the text was written by the same function).
fn same_item(stored: &Value, expected: &Value) -> bool {
    let field = |v: &Value, key: &str| v.get(key).cloned();
    let kind = |v: &Value| {
        v.get("type")
            .and_then(Value::as_str)
            .unwrap_or("message")
            .to_string()
    };
    kind(stored) == kind(expected)
        && field(stored, "role") == field(expected, "role")
        && field(stored, "call_id") == field(expected, "call_id")
}

fn describe(item: &Value) -> String {
    let map = item.as_object().cloned().unwrap_or_else(Map::new);
    let text = |key: &str| map.get(key).and_then(Value::as_str).unwrap_or("");
    match (text("type"), text("role"), text("call_id")) {
        ("function_call", _, call) => format!("a function_call with call_id '{call}'"),
        (kind, role, _) => format!(
            "a {} with role '{role}'",
            if kind.is_empty() { "message" } else { kind }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::nemo_gym::rollout::verify_request;
    use crate::llm::message::ToolCall;

    fn tokens(seed: u32) -> TokenIds {
        TokenIds {
            prompt_token_ids: vec![seed, seed + 1, seed + 2],
            generation_token_ids: vec![seed + 10],
            generation_log_probs: vec![-0.25 - f64::from(seed)],
        }
    }

    fn calling(text: &str, calls: &[&str]) -> Message {
        Message {
            tool_calls: calls
                .iter()
                .map(|id| ToolCall {
                    id: (*id).into(),
                    name: "lookup".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            ..Message::assistant(text)
        }
    }

    fn has_tokens(item: &Value) -> bool {
        item.get("generation_token_ids").is_some()
    }

    #[test]
    fn a_generation_s_tokens_go_on_its_last_item_and_other_turns_carry_none() {
        let (a, b) = (tokens(1), tokens(100));
        let messages = [
            Message::user("find it"),
            calling("Looking.", &["c1", "c2"]),
            Message::tool_result("c1", "x"),
            Message::tool_result("c2", "y"),
            Message::assistant("Found."),
            Message::user("thanks"),
        ];
        let with = [None, Some(&a), None, None, Some(&b), None];
        let turns: Vec<Turn> = messages
            .iter()
            .zip(with)
            .map(|(message, tokens)| Turn { message, tokens })
            .collect();
        let items = output_items(&turns);
        let kinds: Vec<(&str, bool)> = items
            .iter()
            .map(|i| (i["type"].as_str().unwrap(), has_tokens(i)))
            .collect();
        assert_eq!(
            kinds,
            [
                ("message", false),
                ("message", false),
                ("function_call", false),
                ("function_call", true),
                ("function_call_output", false),
                ("function_call_output", false),
                ("message", true),
                ("message", false),
            ]
        );
        assert_eq!(items[0]["role"], "user");
        assert_eq!(items[3]["call_id"], "c2");
        assert_eq!(items[3]["prompt_token_ids"], json!([1, 2, 3]));
        assert_eq!(items[3]["generation_log_probs"], json!([-1.25]));
        assert_eq!(items[6]["generation_token_ids"], json!([110]));
        assert_eq!(items[7]["role"], "user");
    }

    #[test]
    fn without_token_information_nothing_is_invented() {
        let messages = [
            Message::user("hi"),
            calling("", &["c1"]),
            Message::assistant("ok"),
        ];
        let turns: Vec<Turn> = messages
            .iter()
            .map(|message| Turn {
                message,
                tokens: None,
            })
            .collect();
        let items = output_items(&turns);
        assert_eq!(items.len(), 3);
        assert!(items.iter().all(|i| !has_tokens(i)
            && i.get("prompt_token_ids").is_none()
            && i.get("generation_log_probs").is_none()));
    }

    #[test]
    fn an_empty_generation_with_tokens_is_an_empty_message_carrying_them() {
        let t = tokens(5);
        let empty = Message::assistant("");
        let items = output_items(&[Turn {
            message: &empty,
            tokens: Some(&t),
        }]);
        assert_eq!(items.len(), 1);
        assert_eq!(items[0]["content"][0]["text"], "");
        assert!(has_tokens(&items[0]));
    }

    fn row() -> Map<String, Value> {
        json!({"id": 1, REQUEST_FIELD: {"input": [{"role": "system", "content": "S"}, {"role": "user", "content": "book"}]}})
            .as_object()
            .cloned()
            .unwrap()
    }

    /// A row's prelude (system, user), then one policy turn with a call.
    fn booking() -> Vec<Message> {
        vec![
            Message::system("S"),
            Message::user("book"),
            calling("", &["c1"]),
            Message::tool_result("c1", "booked"),
            Message::assistant("Booked."),
        ]
    }

    #[test]
    fn a_stored_rollout_gets_each_generation_s_tokens_on_the_items_it_made() {
        let mut messages = booking();
        messages.extend([
            Message::user("and a taxi?"),
            calling("Sure.", &["c2"]),
            Message::tool_result("c2", "taxi"),
            Message::assistant("Taxi too."),
            Message::user("bye"),
        ]);
        let mut rollout = verify_request(&row(), &messages, "m");
        let before = rollout.clone();
        let all: Vec<TokenIds> = (0..messages.len() as u32).map(|i| tokens(i * 10)).collect();
        let turns: Vec<Turn> = messages
            .iter()
            .zip(&all)
            .map(|(message, t)| Turn {
                message,
                tokens: (message.role == Role::Assistant).then_some(t),
            })
            .collect();
        put_on_rollout(&mut rollout, 2, &turns).unwrap();

        let input = rollout[REQUEST_FIELD]["input"].as_array().unwrap();
        let carried: Vec<usize> = (0..input.len())
            .filter(|&i| has_tokens(&input[i]))
            .collect();
        // The first turn's call (message 2) and reply (message 4), before the user's second message.
        assert_eq!(carried, [2, 4]);
        assert_eq!(input[2]["generation_token_ids"], json!([30]));
        assert_eq!(input[4]["generation_token_ids"], json!([50]));
        let output = rollout["response"]["output"].as_array().unwrap();
        let carried: Vec<usize> = (0..output.len())
            .filter(|&i| has_tokens(&output[i]))
            .collect();
        // "Sure." + call c2 (message 6): the call carries them; the reply (message 8) its own.
        assert_eq!(carried, [1, 3]);
        assert_eq!(output[1]["call_id"], "c2");
        assert_eq!(output[1]["generation_log_probs"], json!([-60.25]));
        assert_eq!(output[3]["generation_token_ids"], json!([90]));

        // Take the token fields off again: the rest is as it was.
        let mut stripped = rollout.clone();
        for path in [[REQUEST_FIELD, "input"], ["response", "output"]] {
            for item in items_at(&mut stripped, &path).unwrap() {
                let map = item.as_object_mut().unwrap();
                for key in [
                    "prompt_token_ids",
                    "generation_token_ids",
                    "generation_log_probs",
                ] {
                    map.remove(key);
                }
            }
        }
        assert_eq!(stripped, before);
    }

    #[test]
    fn a_rollout_that_does_not_match_its_messages_is_refused_naming_the_item() {
        let messages = booking();
        let mut rollout = verify_request(&row(), &messages, "m");
        rollout["response"]["output"][0]["call_id"] = json!("other");
        let t = tokens(1);
        let turns: Vec<Turn> = messages
            .iter()
            .map(|message| Turn {
                message,
                tokens: (message.role == Role::Assistant).then_some(&t),
            })
            .collect();
        let err = put_on_rollout(&mut rollout, 2, &turns)
            .unwrap_err()
            .to_string();
        assert!(err.contains("item 0"), "{err}");
        assert!(err.contains("call_id 'other'"), "{err}");
        assert!(err.contains("call_id 'c1'"), "{err}");
    }
}
