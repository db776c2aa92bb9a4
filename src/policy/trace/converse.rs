//! Content blocks of Bedrock's Converse API, as Strands keeps its messages
//! (`{"role", "content": [{"toolUse": {"toolUseId", "name", "input"}}]}`,
//! then `{"toolResult": {"toolUseId", "status", "content": [{"text"} or
//! {"json"}]}}`), and Anthropic's (`{"type": "tool_use", "id", "name",
//! "input"}`, `{"type": "tool_result", "tool_use_id", "content"}`). A message
//! is read by its blocks; a bare block reads the same.

use serde_json::Value;

use super::{call, text_field, Piece};
use crate::policy::reply::text_of;

pub fn read(item: &Value, out: &mut Vec<Piece>) -> bool {
    if let Some(blocks) = item.get("content").and_then(Value::as_array) {
        let mut known = false;
        for block in blocks {
            known |= read_block(block, out);
        }
        return known;
    }
    read_block(item, out)
}

fn read_block(block: &Value, out: &mut Vec<Piece>) -> bool {
    if let Some(used) = block.get("toolUse").filter(|u| u.is_object()) {
        out.extend(
            call(used.get("toolUseId"), used.get("name"), used.get("input")).map(Piece::Call),
        );
        return true;
    }
    if let Some(result) = block.get("toolResult").filter(|r| r.is_object()) {
        out.push(Piece::Output {
            id: result.get("toolUseId").map(text_of).unwrap_or_default(),
            text: blocks_text(result.get("content")),
        });
        return true;
    }
    match text_field(block, "type") {
        Some("tool_use") => {
            out.extend(
                call(block.get("id"), block.get("name"), block.get("input")).map(Piece::Call),
            );
            true
        }
        Some("tool_result") => {
            out.push(Piece::Output {
                id: block.get("tool_use_id").map(text_of).unwrap_or_default(),
                text: blocks_text(block.get("content")),
            });
            true
        }
        _ => false,
    }
}

/// A tool result's content: its text blocks joined, a `json` block as JSON.
fn blocks_text(content: Option<&Value>) -> String {
    let Some(Value::Array(blocks)) = content else {
        return content.map(text_of).unwrap_or_default();
    };
    blocks
        .iter()
        .map(|b| match (b.get("text"), b.get("json")) {
            (Some(text), _) => text_of(text),
            (None, Some(json)) => json.to_string(),
            (None, None) => text_of(b),
        })
        .collect::<Vec<_>>()
        .join("")
}
