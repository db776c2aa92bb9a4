//! A2A parts, and the messages and artifacts that hold them. A2A has no
//! tool-call part: an agent that reports what it ran puts it in a data part
//! (0.3: `{"kind": "data", "data"}`; 1.0: `{"data"}`), whose data is read as
//! `auto`. Google ADK's A2A server tags its data parts: metadata `adk_type`
//! `function_call` (data `{"id", "name", "args"}`) or `function_response`
//! (data `{"id", "name", "response"}`). Text and file parts say nothing of
//! tools.

use serde_json::Value;

use super::{adk, call, read_item, text_field, Piece, TraceFormat};
use crate::policy::reply::text_of;

/// ADK's metadata key for what a data part holds.
pub const ADK_TYPE: &str = "adk_type";

pub fn read(item: &Value, depth: usize, out: &mut Vec<Piece>) -> bool {
    if let Some(parts) = item.get("parts").and_then(Value::as_array) {
        // A message or an artifact.
        for part in parts {
            read_part(part, depth + 1, out);
        }
        return true;
    }
    read_part(item, depth, out)
}

/// One part; `false` when it is not a part with data.
fn read_part(part: &Value, depth: usize, out: &mut Vec<Piece>) -> bool {
    let kind = text_field(part, "kind");
    if !matches!(kind, None | Some("data")) {
        return kind == Some("text") || kind == Some("file");
    }
    let Some(data) = part.get("data").filter(|d| !d.is_null()) else {
        return false;
    };
    let tag = part.get("metadata").and_then(|m| text_field(m, ADK_TYPE));
    match tag {
        Some("function_call") => {
            out.extend(call(data.get("id"), data.get("name"), data.get("args")).map(Piece::Call));
        }
        Some("function_response") => out.push(Piece::Output {
            id: data.get("id").map(text_of).unwrap_or_default(),
            text: adk::response_text(data.get("response")),
        }),
        _ => read_item(data, TraceFormat::Auto, depth + 1, out),
    }
    true
}
