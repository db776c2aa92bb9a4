//! The shapes an agent's report of its own tool use comes in, as a config
//! names them (`[policy.http] trace_format`). The readers are
//! `crate::policy::trace`'s; this is the name a config writes.

use serde::{Deserialize, Serialize};

/// Which shape a trace is read as.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// Any of the shapes below, item by item (the default).
    #[default]
    Auto,
    /// OpenAI chat messages (an assistant message's `tool_calls`, then `tool`
    /// messages) and LangChain's (`type: "ai"` / `"tool"`).
    OpenaiChat,
    /// Responses API items: `function_call` and `function_call_output`.
    Responses,
    /// Google ADK events (`content.parts` with `functionCall` and
    /// `functionResponse`), or their parts; partial (streamed) events are
    /// left out.
    AdkEvents,
    /// A2A parts, messages or artifacts: data parts (ADK's tagged
    /// `adk_type` parts among them), whose data is read as `auto`.
    A2aParts,
    /// Bedrock Converse messages (Strands'): `toolUse` and `toolResult`
    /// content blocks; Anthropic's `tool_use` and `tool_result` blocks too.
    BedrockConverse,
    /// pydantic-ai's messages (`ModelMessagesTypeAdapter`): `tool-call` and
    /// `tool-return` parts.
    PydanticAi,
    /// Flat records, one per call with its output:
    /// `{"name", "arguments" (or "args"), "output", "id"}`.
    Records,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 8] = [
        TraceFormat::Auto,
        TraceFormat::OpenaiChat,
        TraceFormat::Responses,
        TraceFormat::AdkEvents,
        TraceFormat::A2aParts,
        TraceFormat::BedrockConverse,
        TraceFormat::PydanticAi,
        TraceFormat::Records,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TraceFormat::Auto => "auto",
            TraceFormat::OpenaiChat => "openai_chat",
            TraceFormat::Responses => "responses",
            TraceFormat::AdkEvents => "adk_events",
            TraceFormat::A2aParts => "a2a_parts",
            TraceFormat::BedrockConverse => "bedrock_converse",
            TraceFormat::PydanticAi => "pydantic_ai",
            TraceFormat::Records => "records",
        }
    }
}
