//! Flat records a hand-written agent reports, each call with its own output:
//! `{"name", "arguments" (or "args"), "output", "id"}`, neither a message
//! (no `role`, no `tool_calls`) nor an item of another type (`type` absent
//! or `tool_call`).

use serde_json::Value;

use super::{call, text_field, Piece};
use crate::policy::reply::text_of;
use crate::sim::policy::AgentToolRecord;

pub fn read(item: &Value, out: &mut Vec<Piece>) -> bool {
    if !item.is_object()
        || item.get("role").is_some()
        || item.get("tool_calls").is_some()
        || !matches!(text_field(item, "type"), None | Some("tool_call"))
    {
        return false;
    }
    let Some(made) = call(
        item.get("id").or_else(|| item.get("call_id")),
        item.get("name"),
        item.get("arguments").or_else(|| item.get("args")),
    ) else {
        return false;
    };
    out.push(Piece::Record(AgentToolRecord {
        call: made,
        output: item.get("output").map(text_of).unwrap_or_default(),
    }));
    true
}
