//! OpenAI chat messages (an assistant message's `tool_calls`, each
//! `{id, type: "function", function: {name, arguments}}`, then `tool`
//! messages with `tool_call_id`) and LangChain's (`type: "ai"` with
//! `tool_calls: [{id, name, args}]`, then `type: "tool"`). A `tool_calls`
//! entry that carries its own `output` (or `result`) is a whole record (the
//! data part of `tests/agents/a2a_agent.py`).

use serde_json::Value;

use super::{call, text_field, Piece};
use crate::policy::reply::text_of;
use crate::sim::policy::AgentToolRecord;

pub fn read(item: &Value, out: &mut Vec<Piece>) -> bool {
    if let Some(calls) = item.get("tool_calls").and_then(Value::as_array) {
        for c in calls {
            let made = match c.get("function") {
                Some(function) => {
                    call(c.get("id"), function.get("name"), function.get("arguments"))
                }
                None => call(
                    c.get("id"),
                    c.get("name"),
                    c.get("args").or_else(|| c.get("arguments")),
                ),
            };
            let Some(made) = made else { continue };
            match c
                .get("output")
                .or_else(|| c.get("result"))
                .filter(|o| !o.is_null())
            {
                Some(output) => out.push(Piece::Record(AgentToolRecord {
                    call: made,
                    output: text_of(output),
                })),
                None => out.push(Piece::Call(made)),
            }
        }
        return true;
    }
    let is_tool =
        text_field(item, "role") == Some("tool") || text_field(item, "type") == Some("tool");
    if is_tool {
        if let Some(id) = item.get("tool_call_id") {
            out.push(Piece::Output {
                id: text_of(id),
                text: item.get("content").map(text_of).unwrap_or_default(),
            });
            return true;
        }
    }
    false
}
