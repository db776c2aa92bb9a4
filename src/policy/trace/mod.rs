//! Reading what an agent reports of its own tool use, in the shapes agents
//! and frameworks write it ([`TraceFormat`]): OpenAI chat and LangChain
//! messages ([`chat`]), Responses items ([`responses`]), Google ADK events
//! and parts ([`adk`]), A2A parts, messages and artifacts ([`a2a_parts`]),
//! Bedrock Converse (Strands) and Anthropic content blocks ([`converse`]),
//! pydantic-ai messages ([`pydantic_ai`]), and flat records ([`records`]).
//!
//! Each reader turns an item into [`Piece`]s: a call, an output of a call
//! by its id, or a record holding both. Calls are then paired with their
//! outputs by id, in order; a call without an output is kept with an empty
//! one (the agent did not report it). `auto` tries the readers on each item
//! and looks into lists and `{"messages": [...]}` (a LangGraph state, a data
//! part of messages) down to [`MAX_DEPTH`]. Anything no reader knows is the
//! agent's business, not a trace.

pub mod a2a_parts;
pub mod adk;
pub mod chat;
pub mod converse;
pub mod pydantic_ai;
pub mod records;
pub mod responses;
pub mod unread;

use serde_json::Value;

pub use crate::config::policy::TraceFormat;
use crate::env::ToolCall;
use crate::policy::reply::text_of;
use crate::sim::policy::AgentToolRecord;

/// How deep lists, messages and parts are looked into.
pub const MAX_DEPTH: usize = 6;

/// What one item says of tool use.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// A call whose output may come later, by its id.
    Call(ToolCall),
    /// The output of the call of this id.
    Output { id: String, text: String },
    /// A call with its output.
    Record(AgentToolRecord),
}

/// The tool calls `items` report, read as `format`, in order, each with its
/// output.
pub fn read(items: &[Value], format: TraceFormat) -> Vec<AgentToolRecord> {
    let mut pieces = Vec::new();
    for item in items {
        read_item(item, format, 0, &mut pieces);
    }
    pair(pieces)
}

/// The pieces of one item (a list is its items).
pub fn read_item(item: &Value, format: TraceFormat, depth: usize, out: &mut Vec<Piece>) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Value::Array(items) = item {
        for item in items {
            read_item(item, format, depth + 1, out);
        }
        return;
    }
    let known = match format {
        TraceFormat::Auto => auto(item, depth, out),
        TraceFormat::OpenaiChat => chat::read(item, out),
        TraceFormat::Responses => responses::read(item, out),
        TraceFormat::AdkEvents => adk::read(item, out),
        TraceFormat::A2aParts => a2a_parts::read(item, depth, out),
        TraceFormat::BedrockConverse => converse::read(item, out),
        TraceFormat::PydanticAi => pydantic_ai::read(item, out),
        TraceFormat::Records => records::read(item, out),
    };
    if !known {
        if let Some(messages) = item.get("messages") {
            read_item(messages, format, depth + 1, out);
        }
    }
}

/// The first reader that knows `item`. The order matters where shapes
/// overlap: an ADK function response (`{id, name, response}`) is not a flat
/// record, a Responses item is not a chat message.
fn auto(item: &Value, depth: usize, out: &mut Vec<Piece>) -> bool {
    responses::read(item, out)
        || adk::read(item, out)
        || pydantic_ai::read(item, out)
        || converse::read(item, out)
        || a2a_parts::read(item, depth, out)
        || chat::read(item, out)
        || records::read(item, out)
}

/// Calls paired with their outputs by id: an output goes to the first call
/// of its id that has none yet.
pub fn pair(pieces: Vec<Piece>) -> Vec<AgentToolRecord> {
    let mut records: Vec<AgentToolRecord> = Vec::new();
    let mut outputs: Vec<(String, String)> = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Call(call) => records.push(AgentToolRecord {
                call,
                output: String::new(),
            }),
            Piece::Record(record) => records.push(record),
            Piece::Output { id, text } => outputs.push((id, text)),
        }
    }
    for (id, output) in outputs {
        if let Some(record) = records
            .iter_mut()
            .find(|r| r.call.id == id && r.output.is_empty())
        {
            record.output = output;
        }
    }
    records
}

/// A call from its id, name and arguments (an object or JSON text; none is
/// `{}`); `None` without a name.
pub fn call(
    id: Option<&Value>,
    name: Option<&Value>,
    arguments: Option<&Value>,
) -> Option<ToolCall> {
    let name = name?.as_str()?.to_string();
    let arguments = match arguments {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    Some(ToolCall {
        id: id.map(text_of).unwrap_or_default(),
        name,
        arguments,
    })
}

/// A string field of an object.
pub fn text_field<'a>(item: &'a Value, key: &str) -> Option<&'a str> {
    item.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests;
