//! Responses API items: a `function_call` (`call_id`, `name`, `arguments`)
//! and its `function_call_output` (`call_id`, `output`).

use serde_json::Value;

use super::{call, text_field, Piece};
use crate::policy::reply::text_of;

pub fn read(item: &Value, out: &mut Vec<Piece>) -> bool {
    match text_field(item, "type") {
        Some("function_call") => {
            out.extend(
                call(
                    item.get("call_id").or_else(|| item.get("id")),
                    item.get("name"),
                    item.get("arguments"),
                )
                .map(Piece::Call),
            );
            true
        }
        Some("function_call_output") => {
            if let Some(id) = item.get("call_id") {
                out.push(Piece::Output {
                    id: text_of(id),
                    text: item.get("output").map(text_of).unwrap_or_default(),
                });
            }
            true
        }
        _ => false,
    }
}
