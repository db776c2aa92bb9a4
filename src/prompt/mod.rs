//! The prompt templates (tera) of the simulated user and the policy: a registry
//! that loads them with precise problems, renders them with the full cause of any
//! failure, and checks them against sample contexts for `sparring validate`.

mod ast_walk;
mod call_depth;
mod context;
mod error;
pub mod nesting;
mod registry;
mod sandbox;
pub mod shipped;

pub use call_depth::check_calls;
pub use context::{
    policy_context, user_simulator_context, with_user_tools, OUT_OF_SCOPE_TOKEN, STOP_TOKEN,
    TRANSFER_TOKEN,
};
pub use error::PromptError;
pub use nesting::check_nesting;
pub use registry::PromptRegistry;
pub use sandbox::{outside_calls, sandboxed_tera};
pub use shipped::ShippedTemplate;

/// Name of the template that is the simulated user's system prompt.
pub const USER_SIMULATOR: &str = "user_simulator";
/// Name of the template that is the policy's system prompt.
pub const POLICY: &str = "policy";

/// The built-in templates a generation job renders, by the names it renders
/// them by, for a job whose config names no file of its own.
pub fn shipped_templates() -> [(&'static str, ShippedTemplate); 2] {
    [
        (USER_SIMULATOR, shipped::USER_SIMULATOR_TEMPLATE),
        (POLICY, shipped::POLICY_TEMPLATE),
    ]
}
