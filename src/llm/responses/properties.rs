//! Properties of the Responses wire format: an assistant turn written as
//! output items reads back as the same message, and token fields are read
//! exactly when they are whole and consistent.

use proptest::prelude::*;

use super::{from_reply, to_request, WireReply};
use crate::llm::chat::ChatRequest;
use crate::llm::message::{Message, Role, ToolCall};
use crate::llm::wire::Sampling;

fn text() -> impl Strategy<Value = String> {
    "[ -~\u{e9}\u{4e2d}\n\"\\\\]{0,40}"
}

fn call() -> impl Strategy<Value = ToolCall> {
    ("[a-z0-9_]{1,12}", "[a-z_]{1,16}", text()).prop_map(|(id, name, arguments)| ToolCall {
        id: format!("call_{id}"),
        name,
        arguments,
    })
}

/// The output items a server would write for `content` and `calls`.
fn output_items(content: &str, calls: &[ToolCall]) -> Vec<serde_json::Value> {
    let mut items = Vec::new();
    if !content.is_empty() {
        items.push(
            serde_json::json!({"type": "message", "role": "assistant", "id": "msg_1",
            "content": [{"type": "output_text", "text": content, "annotations": []}]}),
        );
    }
    for c in calls {
        items.push(
            serde_json::json!({"type": "function_call", "id": format!("fc_{}", c.id),
            "call_id": c.id, "name": c.name, "arguments": c.arguments}),
        );
    }
    items
}

fn reply(items: Vec<serde_json::Value>) -> WireReply {
    serde_json::from_value(serde_json::json!({"status": "completed", "output": items})).unwrap()
}

proptest! {
    #[test]
    fn an_assistant_turn_written_as_output_items_reads_back_the_same(
        content in text(),
        calls in prop::collection::vec(call(), 0..4),
    ) {
        let read = from_reply(reply(output_items(&content, &calls)), "x").unwrap();
        prop_assert_eq!(&*read.message.content, content.as_str());
        prop_assert_eq!(&read.message.tool_calls, &calls);
        prop_assert_eq!(read.message.role, Role::Assistant);
        prop_assert!(read.tokens.is_none());
    }

    #[test]
    fn token_fields_are_read_exactly_when_ids_and_log_probs_agree_in_length(
        prompt in prop::collection::vec(any::<u32>(), 0..50),
        generation in prop::collection::vec(any::<u32>(), 0..30),
        log_probs in prop::collection::vec(-100.0f64..=0.0, 0..30),
    ) {
        let mut items = output_items("ok", &[]);
        items[0]["prompt_token_ids"] = serde_json::json!(prompt);
        items[0]["generation_token_ids"] = serde_json::json!(generation);
        items[0]["generation_log_probs"] = serde_json::json!(log_probs);
        match from_reply(reply(items), "x") {
            Ok(read) => {
                prop_assert_eq!(generation.len(), log_probs.len());
                let tokens = read.tokens.unwrap();
                prop_assert_eq!(&tokens.prompt_token_ids, &prompt);
                prop_assert_eq!(&tokens.generation_token_ids, &generation);
                prop_assert_eq!(&tokens.generation_log_probs, &log_probs);
            }
            Err(e) => {
                prop_assert_ne!(generation.len(), log_probs.len());
                prop_assert_eq!(e.class(), "malformed_response");
            }
        }
    }

    #[test]
    fn every_call_and_result_of_a_conversation_is_sent_as_an_item_naming_its_call_id(
        turns in prop::collection::vec((text(), prop::collection::vec(call(), 0..3)), 1..5),
    ) {
        let mut messages = vec![Message::system("rules"), Message::user("hello")];
        for (content, calls) in &turns {
            let mut m = Message::assistant(content.as_str());
            m.tool_calls = calls.clone();
            messages.push(m);
            for c in calls {
                messages.push(Message::tool_result(c.id.clone(), "{}"));
            }
        }
        let req = ChatRequest { messages, ..ChatRequest::default() };
        let body = serde_json::to_value(to_request("m", &Sampling::default(), &req)).unwrap();
        let input = body["input"].as_array().unwrap();
        let calls: Vec<&ToolCall> = turns.iter().flat_map(|(_, c)| c).collect();
        let sent_calls: Vec<&str> = input.iter()
            .filter(|i| i["type"] == "function_call")
            .map(|i| i["call_id"].as_str().unwrap())
            .collect();
        let sent_outputs: Vec<&str> = input.iter()
            .filter(|i| i["type"] == "function_call_output")
            .map(|i| i["call_id"].as_str().unwrap())
            .collect();
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        prop_assert_eq!(&sent_calls, &ids);
        prop_assert_eq!(&sent_outputs, &ids);
        prop_assert_eq!(&body["instructions"], "rules");
    }
}
