//! The Responses API (`POST {base_url}/responses`) as a second wire format
//! behind the same `Endpoint` (its limits, the one retry policy, its error
//! classes, both transports): OpenAI, vLLM, and NeMo Gym's model servers
//! (`vllm_model`, `openai_model`), which is how NeMo RL serves its policy.
//!
//! - [`item`]: one input or output item as it travels, the one type both
//!   this client and the mock read;
//! - [`request`]: our messages as `input` items (messages, `function_call`,
//!   `function_call_output`, the reasoning items a reply brought), the leading
//!   system message as `instructions`, tools in the Responses shape;
//! - [`reply`]: the body as read, and a `failed` reply as an error class
//!   (inside the retry loop, so a failed generation is tried again);
//! - [`output`]: `output` items to our assistant message (text, tool calls by
//!   `call_id`, reasoning kept aside), `usage`, and the token fields of NeMo
//!   Gym's `TokenIDLogProbMixin` where an item carries them (`tokens`).

pub mod item;
pub mod output;
pub mod reply;
pub mod request;
mod tokens;

#[cfg(test)]
mod properties;

pub use item::WireItem;
pub use output::{from_reply, Converted};
pub use reply::WireReply;
pub use request::to_request;
