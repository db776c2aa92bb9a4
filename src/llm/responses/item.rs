//! One item of the Responses API as it travels, in either direction: an
//! input item a client sends (the mock reads them) or an output item a
//! server returns ([`super::output`] reads them). Every field is optional
//! here: what an item of each `type` must hold is its reader's to check.

use serde::Deserialize;

use super::tokens::ItemTokens;

#[derive(Debug, Default, Deserialize)]
pub struct WireItem {
    /// `message`, `function_call`, `function_call_output`, `reasoning`, …;
    /// an input item without one is a message.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub role: Option<String>,
    /// A string, or a list of parts each with its `text`.
    #[serde(default)]
    pub content: Option<serde_json::Value>,
    #[serde(default)]
    pub call_id: Option<String>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    /// A JSON text as OpenAI sends it, or an object as some servers do.
    #[serde(default)]
    pub arguments: Option<serde_json::Value>,
    /// A `function_call_output`'s result.
    #[serde(default)]
    pub output: Option<serde_json::Value>,
    /// NeMo Gym's token fields, on the one output item that carries them.
    #[serde(flatten)]
    pub(super) tokens: ItemTokens,
}
