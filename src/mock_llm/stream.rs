//! Streamed replies (`"stream": true`), as OpenAI's servers send them: the
//! scripted reply cut into Server-Sent Events, so that an agent framework
//! that streams by default (Strands, ADK with SSE, pydantic-ai's streamed
//! runs) reads the mock as it reads OpenAI.
//!
//! - Chat completions: `chat.completion.chunk` objects, one `data:` line
//!   each: the role first, the text in a few pieces, each tool call's id
//!   and name and then its arguments, a last chunk with the
//!   `finish_reason`, with `stream_options.include_usage` a chunk of
//!   `usage` and no choices, then `data: [DONE]`.
//! - Responses: typed events (`event:` and `data:` lines, each with its
//!   `sequence_number`): `response.created`, `response.in_progress`, per
//!   output item `response.output_item.added`, its text or arguments as
//!   deltas and their `.done`, `response.output_item.done`, and
//!   `response.completed` with the whole response (its `usage` included).
//!
//! The whole reply is known before the first byte goes out (the mock is
//! scripted), so the stream is one body of events rather than a timed
//! trickle: a client reads the same events either way.

use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// At most this many characters of text go in one delta.
const PIECE_CHARS: usize = 24;

/// `text` in pieces of at most [`PIECE_CHARS`] characters (none for no
/// text), cut at character boundaries.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(PIECE_CHARS)
        .map(|c| c.iter().collect())
        .collect()
}

/// One `data:` event of a chat completion stream.
fn data_line(out: &mut String, value: &Value) {
    out.push_str("data: ");
    out.push_str(&value.to_string());
    out.push_str("\n\n");
}

/// A chat completion (`object: "chat.completion"`, one choice) as the
/// chunks of its stream; `include_usage` adds the usage chunk.
pub fn chat_chunks(completion: &Value, include_usage: bool) -> String {
    let id = completion.get("id").cloned().unwrap_or(Value::Null);
    let model = completion.get("model").cloned().unwrap_or(Value::Null);
    let chunk = |choices: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
               "choices": choices})
    };
    let choice = &completion["choices"][0];
    let message = &choice["message"];
    let mut out = String::new();
    data_line(
        &mut out,
        &chunk(
            json!([{"index": 0, "delta": {"role": "assistant", "content": ""},
                        "finish_reason": null}]),
        ),
    );
    if let Some(text) = message.get("content").and_then(Value::as_str) {
        for piece in pieces(text) {
            data_line(
                &mut out,
                &chunk(json!([{"index": 0, "delta": {"content": piece}, "finish_reason": null}])),
            );
        }
    }
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (index, call) in calls.iter().enumerate() {
        let function = &call["function"];
        data_line(
            &mut out,
            &chunk(json!([{"index": 0, "delta": {"tool_calls": [{
                "index": index, "id": call["id"], "type": "function",
                "function": {"name": function["name"], "arguments": ""}}]},
                "finish_reason": null}])),
        );
        let arguments = function["arguments"].as_str().unwrap_or_default();
        for piece in pieces(arguments) {
            data_line(
                &mut out,
                &chunk(json!([{"index": 0, "delta": {"tool_calls": [{
                    "index": index, "function": {"arguments": piece}}]},
                    "finish_reason": null}])),
            );
        }
    }
    let mut last = json!({"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]});
    if let Some(logprobs) = choice.get("logprobs") {
        last["logprobs"] = logprobs.clone();
    }
    data_line(&mut out, &chunk(json!([last])));
    if include_usage {
        let mut usage = chunk(json!([]));
        usage["usage"] = completion["usage"].clone();
        data_line(&mut out, &usage);
    }
    out.push_str("data: [DONE]\n\n");
    out
}

/// Typed events of a Responses stream, numbered as they are written.
struct Events {
    out: String,
    sequence: u64,
}

impl Events {
    fn push(&mut self, kind: &str, mut data: Value) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        self.out.push_str("event: ");
        self.out.push_str(kind);
        self.out.push_str("\ndata: ");
        self.out.push_str(&data.to_string());
        self.out.push_str("\n\n");
    }
}

/// A Responses object (`object: "response"`) as the events of its stream.
pub fn response_events(response: &Value) -> String {
    let mut events = Events {
        out: String::new(),
        sequence: 0,
    };
    let mut opening = response.clone();
    opening["status"] = json!("in_progress");
    opening["output"] = json!([]);
    opening["usage"] = Value::Null;
    events.push("response.created", json!({"response": opening}));
    events.push("response.in_progress", json!({"response": opening}));
    let output = response["output"].as_array().cloned().unwrap_or_default();
    for (index, item) in output.iter().enumerate() {
        let item_id = item.get("id").cloned().unwrap_or(Value::Null);
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        match item["type"].as_str() {
            Some("message") => {
                added["content"] = json!([]);
                events.push(
                    "response.output_item.added",
                    json!({"output_index": index, "item": added}),
                );
                let parts = item["content"].as_array().cloned().unwrap_or_default();
                for (content_index, part) in parts.iter().enumerate() {
                    let at = json!({"item_id": item_id, "output_index": index,
                                    "content_index": content_index});
                    let mut empty = part.clone();
                    empty["text"] = json!("");
                    events.push("response.content_part.added", with(&at, "part", empty));
                    let text = part["text"].as_str().unwrap_or_default();
                    for piece in pieces(text) {
                        let mut delta = with(&at, "delta", json!(piece));
                        delta["logprobs"] = json!([]);
                        events.push("response.output_text.delta", delta);
                    }
                    let mut done = with(&at, "text", json!(text));
                    done["logprobs"] = json!([]);
                    events.push("response.output_text.done", done);
                    events.push(
                        "response.content_part.done",
                        with(&at, "part", part.clone()),
                    );
                }
            }
            Some("function_call") => {
                added["arguments"] = json!("");
                events.push(
                    "response.output_item.added",
                    json!({"output_index": index, "item": added}),
                );
                let at = json!({"item_id": item_id, "output_index": index});
                let arguments = item["arguments"].as_str().unwrap_or_default();
                for piece in pieces(arguments) {
                    events.push(
                        "response.function_call_arguments.delta",
                        with(&at, "delta", json!(piece)),
                    );
                }
                events.push(
                    "response.function_call_arguments.done",
                    with(&at, "arguments", json!(arguments)),
                );
            }
            _ => events.push(
                "response.output_item.added",
                json!({"output_index": index, "item": item}),
            ),
        }
        events.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
    }
    events.push("response.completed", json!({"response": response}));
    events.out
}

/// `base` (an object) with `key` set to `value`.
fn with(base: &Value, key: &str, value: Value) -> Value {
    let mut out = base.clone();
    out[key] = value;
    out
}

/// A stream's body as the response, `text/event-stream`.
pub fn sse(body: String) -> Response {
    (
        [
            (CONTENT_TYPE, "text/event-stream"),
            (CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON of each `data:` line, `[DONE]` left out.
    fn data_of(body: &str) -> Vec<Value> {
        body.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    #[test]
    fn a_chat_stream_carries_the_text_and_the_calls_to_be_put_together_again() {
        let completion = json!({"id": "c1", "model": "m", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Let me look that up for you, one moment.",
                "tool_calls": [{"id": "call_0", "type": "function", "function": {
                    "name": "get_order_status",
                    "arguments": "{\"order_id\": \"#A1002\", \"verbose\": true}"}}]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
        let body = chat_chunks(&completion, true);
        assert!(body.ends_with("data: [DONE]\n\n"), "{body}");
        let chunks = data_of(&body);
        assert!(chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk"));
        let mut text = String::new();
        let mut arguments = String::new();
        for chunk in &chunks {
            if let Some(delta) = chunk["choices"].get(0).map(|c| &c["delta"]) {
                text.push_str(delta["content"].as_str().unwrap_or_default());
                if let Some(calls) = delta["tool_calls"].as_array() {
                    arguments.push_str(calls[0]["function"]["arguments"].as_str().unwrap());
                }
            }
        }
        assert_eq!(text, "Let me look that up for you, one moment.");
        assert_eq!(arguments, "{\"order_id\": \"#A1002\", \"verbose\": true}");
        assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
        let last_choice = &chunks[chunks.len() - 2]["choices"][0];
        assert_eq!(last_choice["finish_reason"], "tool_calls");
        let usage = chunks.last().unwrap();
        assert_eq!(usage["choices"], json!([]));
        assert_eq!(usage["usage"]["total_tokens"], 15);
        assert!(!data_of(&chat_chunks(&completion, false))
            .iter()
            .any(|c| c.get("usage").is_some()));
    }

    #[test]
    fn a_responses_stream_numbers_its_events_and_ends_with_the_whole_response() {
        let response = json!({"id": "resp_1", "object": "response", "status": "completed",
            "output": [
                {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": "All done. PL4471902.", "annotations": []}]},
                {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "get",
                 "arguments": "{}", "status": "completed"}],
            "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}});
        let body = response_events(&response);
        let events = data_of(&body);
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(kinds[0], "response.created");
        assert_eq!(*kinds.last().unwrap(), "response.completed");
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e["sequence_number"], i as u64);
        }
        let text: String = events
            .iter()
            .filter(|e| e["type"] == "response.output_text.delta")
            .map(|e| e["delta"].as_str().unwrap())
            .collect();
        assert_eq!(text, "All done. PL4471902.");
        assert!(kinds.contains(&"response.function_call_arguments.done"));
        assert_eq!(events.last().unwrap()["response"], response);
        assert_eq!(events[0]["response"]["output"], json!([]));
        let event_lines = body.lines().filter(|l| l.starts_with("event: ")).count();
        assert_eq!(event_lines, events.len());
    }

    #[test]
    fn text_is_cut_at_character_boundaries() {
        let text = "é".repeat(30);
        let got = pieces(&text);
        assert_eq!(got.len(), 2);
        assert_eq!(got.concat(), text);
        assert!(pieces("").is_empty());
    }
}
