//! pydantic-ai's messages as `ModelMessagesTypeAdapter` writes them: a
//! `{"kind": "response", "parts": [...]}` with `{"part_kind": "tool-call",
//! "tool_name", "args", "tool_call_id"}` parts, then a `{"kind": "request"}`
//! with `{"part_kind": "tool-return", "tool_name", "content",
//! "tool_call_id"}`. A bare part reads the same.

use serde_json::Value;

use super::{call, text_field, Piece};
use crate::policy::reply::text_of;

pub fn read(item: &Value, out: &mut Vec<Piece>) -> bool {
    let is_message = matches!(text_field(item, "kind"), Some("request" | "response"));
    if let (true, Some(parts)) = (is_message, item.get("parts").and_then(Value::as_array)) {
        for part in parts {
            read_part(part, out);
        }
        return true;
    }
    read_part(item, out)
}

fn read_part(part: &Value, out: &mut Vec<Piece>) -> bool {
    match text_field(part, "part_kind") {
        Some("tool-call") => {
            out.extend(
                call(
                    part.get("tool_call_id"),
                    part.get("tool_name"),
                    part.get("args"),
                )
                .map(Piece::Call),
            );
            true
        }
        Some("tool-return" | "retry-prompt") => {
            if let Some(id) = part.get("tool_call_id") {
                out.push(Piece::Output {
                    id: text_of(id),
                    text: part.get("content").map(text_of).unwrap_or_default(),
                });
            }
            true
        }
        Some(_) => true,
        None => false,
    }
}
