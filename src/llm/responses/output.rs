//! A Responses API reply's `output` items as our assistant message:
//! `message` items give its text (output text, and refusals, which are what
//! the model said), `function_call` items its tool calls (by `call_id`),
//! `reasoning` items are kept aside to be sent back (see
//! `llm::reasoning`), and the one item carrying token fields gives the
//! generation's tokens. An item of another type (a hosted tool's call,
//! which sparring never offers) is a malformed response.

use serde_json::value::RawValue;

use super::item::WireItem;
use super::reply::WireReply;
use super::tokens;
use crate::llm::chat::Usage;
use crate::llm::error::LlmError;
use crate::llm::message::{Message, Role, ToolCall};
use crate::llm::reasoning::Reasoning;
use crate::llm::tokens::TokenIds;

/// What a reply says, in our vocabulary.
#[derive(Debug)]
pub struct Converted {
    pub message: Message,
    /// `stop` or `tool_calls` when completed; `length` when cut at
    /// `max_output_tokens`; else the incomplete reason as the server said it.
    pub finish_reason: Option<String>,
    pub usage: Usage,
    pub tokens: Option<Box<TokenIds>>,
}

/// Read `reply`; tool calls without a `call_id` (nor an `id`) are named
/// `{call_id_prefix}_{n}`.
pub fn from_reply(reply: WireReply, call_id_prefix: &str) -> Result<Converted, LlmError> {
    let Some(output) = reply.output else {
        return Err(LlmError::Malformed("the response has no output".into()));
    };
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let mut reasoning = Vec::new();
    let mut found_tokens = None;
    for (index, raw) in output.into_iter().enumerate() {
        let item: WireItem = serde_json::from_str(raw.get()).map_err(|e| {
            LlmError::Malformed(format!("output item {index} cannot be read ({e})"))
        })?;
        tokens::keep_one(&mut found_tokens, index, item.tokens.into_token_ids(index)?)?;
        match item.kind.as_deref() {
            Some("message") => {
                if item.role.as_deref().is_some_and(|r| r != "assistant") {
                    return Err(LlmError::Malformed(format!(
                        "output item {index} is a message with role {:?}, not the assistant's",
                        item.role.unwrap_or_default()
                    )));
                }
                push_text(&mut text, item.content, index)?;
            }
            Some("function_call") => {
                let name = item.name.unwrap_or_default();
                if name.is_empty() {
                    return Err(LlmError::Malformed(format!(
                        "output item {index} is a function_call without a name"
                    )));
                }
                let arguments = crate::llm::wire::arguments_text(item.arguments);
                let id = item
                    .call_id
                    .filter(|id| !id.is_empty())
                    .or(item.id.filter(|id| !id.is_empty()))
                    .unwrap_or_else(|| format!("{call_id_prefix}_{}", tool_calls.len()));
                tool_calls.push(ToolCall {
                    id,
                    name,
                    arguments,
                });
            }
            Some("reasoning") => reasoning.push(kept(raw, index)?),
            other => {
                return Err(LlmError::Malformed(format!(
                    "output item {index} has type {:?}; sparring offers only function tools and \
                     reads message, function_call and reasoning items",
                    other.unwrap_or("(none)")
                )))
            }
        }
    }
    let finish_reason = match reply.status.as_deref() {
        Some("incomplete") => Some(
            match reply.incomplete_details.and_then(|d| d.reason).as_deref() {
                Some("max_output_tokens") => "length".to_string(),
                Some(reason) => reason.to_string(),
                None => "incomplete".to_string(),
            },
        ),
        Some("completed") | None => Some(
            if tool_calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            }
            .to_string(),
        ),
        Some(other) => {
            return Err(LlmError::Malformed(format!(
                "the response's status is {other:?}; sparring sends no background requests and \
                 reads completed or incomplete ones"
            )))
        }
    };
    let usage = reply.usage.map_or(Usage::default(), |u| Usage {
        prompt_tokens: u.input_tokens.unwrap_or(0),
        completion_tokens: u.output_tokens.unwrap_or(0),
    });
    let message = Message {
        role: Role::Assistant,
        content: text.into(),
        tool_calls,
        tool_call_id: None,
        reasoning: (!reasoning.is_empty()).then(|| Reasoning::new(reasoning)),
    };
    Ok(Converted {
        message,
        finish_reason,
        usage,
        tokens: found_tokens.map(|(_, tokens)| Box::new(tokens)),
    })
}

/// A message item's text: its `output_text` parts and refusals, in order.
fn push_text(
    text: &mut String,
    content: Option<serde_json::Value>,
    index: usize,
) -> Result<(), LlmError> {
    match content {
        None | Some(serde_json::Value::Null) => Ok(()),
        Some(serde_json::Value::String(s)) => {
            text.push_str(&s);
            Ok(())
        }
        Some(serde_json::Value::Array(parts)) => {
            for part in &parts {
                let piece = part
                    .get("text")
                    .or_else(|| part.get("refusal"))
                    .and_then(|t| t.as_str());
                text.push_str(piece.unwrap_or_default());
            }
            Ok(())
        }
        Some(_) => Err(LlmError::Malformed(format!(
            "output item {index} is a message whose content is neither text nor parts"
        ))),
    }
}

/// A reasoning item to send back: as written, less `status` (which OpenAI
/// refuses in input) and token fields (the generation's, kept elsewhere).
fn kept(raw: Box<RawValue>, index: usize) -> Result<Box<RawValue>, LlmError> {
    let mut item: serde_json::Map<String, serde_json::Value> = serde_json::from_str(raw.get())
        .map_err(|e| LlmError::Malformed(format!("output item {index} is not an object ({e})")))?;
    let before = item.len();
    item.remove("status");
    for field in tokens::FIELDS {
        item.remove(field);
    }
    if item.len() == before {
        return Ok(raw);
    }
    serde_json::value::to_raw_value(&item)
        .map_err(|e| LlmError::Malformed(format!("output item {index}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<Converted, LlmError> {
        from_reply(serde_json::from_str(json).unwrap(), "call")
    }

    #[test]
    fn text_tool_calls_usage_and_the_finish_reason_are_read_from_output_items() {
        let c = read(
            r##"{"status":"completed","output":[
                {"type":"message","id":"m1","role":"assistant","status":"completed",
                 "content":[{"type":"output_text","text":"Let me look.","annotations":[]}]},
                {"type":"function_call","id":"fc_1","call_id":"call_9","name":"get_order",
                 "arguments":"{\"order_id\":\"#1\"}","status":"completed"}],
              "usage":{"input_tokens":12,"output_tokens":5,"total_tokens":17}}"##,
        )
        .unwrap();
        assert_eq!(&*c.message.content, "Let me look.");
        assert_eq!(c.message.tool_calls[0].id, "call_9");
        assert_eq!(c.message.tool_calls[0].name, "get_order");
        assert_eq!(c.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            c.usage,
            Usage {
                prompt_tokens: 12,
                completion_tokens: 5
            }
        );
        assert!(c.message.reasoning.is_none());
        assert!(c.tokens.is_none(), "no token fields: none invented");
    }

    #[test]
    fn reasoning_is_kept_aside_without_its_status_and_never_in_the_text() {
        let c = read(
            r#"{"status":"completed","output":[
                {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"think"}],
                 "status":"completed"},
                {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}]}"#,
        )
        .unwrap();
        assert_eq!(&*c.message.content, "Hi");
        let reasoning = c.message.reasoning.unwrap();
        let item: serde_json::Value = serde_json::from_str(reasoning.items()[0].get()).unwrap();
        assert_eq!(
            item,
            serde_json::json!({"type":"reasoning","id":"rs_1",
                "summary":[{"type":"summary_text","text":"think"}]})
        );
        assert_eq!(c.finish_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn token_fields_of_the_last_item_are_the_generations() {
        let c = read(
            r#"{"status":"completed","output":[
                {"type":"function_call","call_id":"c","name":"f","arguments":"{}",
                 "prompt_token_ids":[1,2,3],"generation_token_ids":[7,8],
                 "generation_log_probs":[-0.5,-0.25]}]}"#,
        )
        .unwrap();
        let tokens = c.tokens.unwrap();
        assert_eq!(tokens.prompt_token_ids, [1, 2, 3]);
        assert_eq!(tokens.generation_token_ids, [7, 8]);
        assert_eq!(tokens.generation_log_probs, [-0.5, -0.25]);
    }

    #[test]
    fn inconsistent_token_fields_are_a_malformed_response() {
        for (json, says) in [
            (
                r#"{"output":[{"type":"message","content":"x","prompt_token_ids":[1],
                  "generation_token_ids":[2,3],"generation_log_probs":[-1.0]}]}"#,
                "2 generation_token_ids but 1 generation_log_probs",
            ),
            (
                r#"{"output":[{"type":"message","content":"x","prompt_token_ids":[1]}]}"#,
                "generation_token_ids, generation_log_probs missing",
            ),
            (
                r#"{"output":[{"type":"message","content":"x","prompt_token_ids":[-1],
                  "generation_token_ids":[],"generation_log_probs":[]}]}"#,
                "output item 0 cannot be read",
            ),
            (
                r#"{"output":[
                  {"type":"message","content":"x","prompt_token_ids":[1],"generation_token_ids":[],"generation_log_probs":[]},
                  {"type":"message","content":"y","prompt_token_ids":[1],"generation_token_ids":[],"generation_log_probs":[]}]}"#,
                "both carry token fields",
            ),
        ] {
            let e = read(json).unwrap_err();
            assert_eq!(e.class(), "malformed_response");
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    #[test]
    fn an_incomplete_reply_says_why_and_keeps_what_was_generated() {
        let c = read(
            r#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},
               "output":[{"type":"message","content":[{"type":"output_text","text":"Hal"}]}]}"#,
        )
        .unwrap();
        assert_eq!(c.finish_reason.as_deref(), Some("length"));
        assert_eq!(&*c.message.content, "Hal");
    }

    #[test]
    fn unknown_items_and_statuses_and_a_missing_output_are_malformed() {
        for json in [
            r#"{"output":[{"type":"web_search_call","id":"w"}]}"#,
            r#"{"status":"in_progress","output":[]}"#,
            r#"{"status":"completed"}"#,
            r#"{"output":[{"type":"message","role":"user","content":"x"}]}"#,
        ] {
            assert_eq!(
                read(json).unwrap_err().class(),
                "malformed_response",
                "{json}"
            );
        }
    }
}
