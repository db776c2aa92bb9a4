//! Everything that talks to a model: the `ChatModel` trait, the `Endpoint`
//! implementation on async-openai, its limits, the one retry policy, and the
//! wire format.

pub mod chat;
pub mod endpoint;
pub mod error;
pub mod limiter;
pub mod message;
pub mod retry;
pub mod telemetry;
pub mod wire;

pub use chat::{ChatModel, ChatRequest, ChatResponse, Role, Usage};
pub use endpoint::Endpoint;
pub use error::LlmError;
pub use limiter::LimitStats;
