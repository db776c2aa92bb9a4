//! Stepped sessions (docs/sessions.md): episodes whose policy is the
//! caller, one assistant message a step, for trainers and harnesses that
//! own the loop (OpenEnv's clients, verl, verifiers, evaluation SDKs).
//! Built from the same parts as a batch episode (`sim::SteppedEpisode`, the
//! job's simulated user, environment, limits, verification, user checks and
//! judge rewards) and stored as a conversation of a job, one job per config
//! hash. No printing and no HTTP: `server::openenv` and the service's
//! `/v1/sessions` serve it.
//!
//! `host` opens a job config for sessions, `request` reads what opens one,
//! `action` reads a step, `live` runs one session's episode to its stored
//! conversation, `observation` is what it answers, `registry` keeps a
//! server's open sessions within their bounds (capacity, idle expiry).

pub mod action;
mod error;
mod host;
mod live;
mod observation;
pub mod registry;
pub mod request;
pub mod schema;

pub use action::{too_large, MAX_ACTION_BYTES};
pub use error::{Invalid, SessionError, WsCode};
pub use host::{stepped_job_hash, Host};
pub use live::Live;
pub use observation::{End, Observation};
pub use registry::{Limits, Sessions, Slot};
pub use request::OpenRequest;
