//! Everything that talks to a model: the `ChatModel` trait, the `Endpoint`
//! implementation, its limits, the one retry policy, the transports that
//! carry its requests, and the wire formats (chat completions and the
//! Responses API).

pub mod batch;
pub mod chat;
pub mod chat_tokens;
pub mod endpoint;
pub mod error;
pub mod limiter;
pub mod message;
pub mod rate_headers;
pub mod raw;
pub mod reasoning;
pub mod responses;
pub mod retry;
pub mod telemetry;
pub mod token_budget;
pub mod token_estimate;
pub mod token_fields;
pub mod tokens;
pub mod transport;
pub mod wire;

pub use chat::{ChatModel, ChatRequest, ChatResponse, Role, Usage};
pub use endpoint::Endpoint;
pub use error::LlmError;
pub use limiter::LimitStats;
pub use tokens::TokenIds;
pub use transport::MAX_BODY_BYTES;
