//! The mock model server: an OpenAI-compatible HTTP test double.
//!
//! It is deterministic and scripted: behaviour is chosen by the model name
//! (`mock-user`, `mock-policy`, `mock-judge`) and the scenario the engine names in
//! the `X-Sparring-Scenario` header, which real servers ignore (or, from a caller
//! that cannot name it, such as an agent framework, by its opening: see
//! [`openings`]). The mock policy
//! replays the scenario's gold actions (with deliberate flaws on some seeds, so
//! rewards vary), holds or breaks a probe's line (see [`probe_policy`]), and
//! answers single-step questions right on most seeds and wrong on some (see
//! [`answer`]); the mock user states the scenario's need and answers from its
//! known info; the mock judge answers each built-in judge template in its format,
//! deterministically from the prompt (see [`judge`]). Model-name modifiers inject
//! faults, e.g. `mock-policy+ratelimit-once` or `mock-judge+garbled`;
//! a [`crate::config::MockConfig`] adds latency and faults at a rate, reproducibly.
//! It proves plumbing, not model quality.

pub mod answer;
mod batch;
pub mod behaviour;
pub mod faults;
pub mod judge;
mod listen;
pub mod mine;
pub mod openings;
pub mod policy;
pub mod policy_lines;
pub mod probe_policy;
pub mod replay;
mod responses;
mod review;
pub mod server;
pub mod starter;
pub mod stats;
mod stream;
pub mod synth;
pub mod synth_generic;
pub mod tokens;
pub mod tools;
pub mod user;
pub mod user_tools;

pub use server::MockServer;
pub use starter::InProcessMock;
pub use stats::MockStats;
