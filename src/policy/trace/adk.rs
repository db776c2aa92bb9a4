//! Google ADK events (`adk api_server`'s `/run` answer, `/run_sse`'s events,
//! a session's `events`): `{"content": {"parts": [...]}, "partial": ...}`,
//! whose parts are `{"functionCall": {"id", "name", "args"}}` and
//! `{"functionResponse": {"id", "name", "response"}}` (the genai `Part`).
//! A partial event (streamed, `"partial": true`) is left out: the same call
//! comes again whole. A bare part reads the same. ADK wraps a tool's return
//! value that is not an object as `{"result": value}`: the output is that
//! value; any other response is its JSON.

use serde_json::Value;

use super::{call, Piece};
use crate::policy::reply::text_of;

pub fn read(item: &Value, out: &mut Vec<Piece>) -> bool {
    if let Some(parts) = item
        .get("content")
        .and_then(|c| c.get("parts"))
        .and_then(Value::as_array)
    {
        if item.get("partial").and_then(Value::as_bool) == Some(true) {
            return true;
        }
        let mut known = false;
        for part in parts {
            known |= read_part(part, out);
        }
        return known || item.get("invocationId").is_some();
    }
    // A genai `Content` without its event: known only by its parts, so
    // that an A2A message (also `parts`) is left to its own reader.
    if let Some(parts) = item.get("parts").and_then(Value::as_array) {
        let mut pieces = Vec::new();
        for part in parts {
            read_part(part, &mut pieces);
        }
        let known = !pieces.is_empty();
        out.extend(pieces);
        return known;
    }
    read_part(item, out)
}

/// One genai part: a function call or a function response.
fn read_part(part: &Value, out: &mut Vec<Piece>) -> bool {
    let calls = part
        .get("functionCall")
        .or_else(|| part.get("function_call"));
    if let Some(c) = calls.filter(|c| c.is_object()) {
        out.extend(call(c.get("id"), c.get("name"), c.get("args")).map(Piece::Call));
        return true;
    }
    let responses = part
        .get("functionResponse")
        .or_else(|| part.get("function_response"));
    if let Some(r) = responses.filter(|r| r.is_object()) {
        out.push(Piece::Output {
            id: r.get("id").map(text_of).unwrap_or_default(),
            text: response_text(r.get("response")),
        });
        return true;
    }
    false
}

/// A function response's output: the `result` ADK wrapped, else the JSON.
pub fn response_text(response: Option<&Value>) -> String {
    match response {
        Some(Value::Object(fields)) if fields.len() == 1 && fields.contains_key("result") => {
            text_of(&fields["result"])
        }
        Some(other) => text_of(other),
        None => String::new(),
    }
}
