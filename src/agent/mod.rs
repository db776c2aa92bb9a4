//! sparring as a NeMo Gym agent server, over one job config: a run request
//! (`BaseRunRequest`: `responses_create_params` plus a row's fields) becomes
//! one episode of the job (its simulated user, environment, limits and
//! checks), verified, stored as an item of the agent's job, and answered as
//! NeMo Gym's `BaseVerifyResponse` with the whole conversation in
//! `response.output` (the simulated user's turns as `message` items with
//! role `user`, as NeMo Gym's `tau2` agent writes them).
//!
//! `open` finds or makes the agent's job; `request` reads a run request,
//! `row` turns it into a scenario, `run` works it, `output` writes the
//! conversation as Responses output items, `metrics` answers
//! `/aggregate_metrics`. No printing: the edge (`sparring agent`) does that.

mod error;
pub mod metrics;
mod open;
pub mod output;
pub mod request;
pub mod responses;
mod row;
mod run;

pub use error::{Invalid, OpenError, RunFailure};
pub use open::{agent_job_hash, Agent};
pub use request::RunRequest;
