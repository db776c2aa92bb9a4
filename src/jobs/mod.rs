//! Jobs: planning items, preparing inputs and models, working items with leases
//! and heartbeats, the circuit breaker, and progress. The store and the way
//! to start the mock come from the edge in a [`Context`]; progress goes to a
//! [`ProgressSink`] the edge renders.

pub mod breaker;
pub mod commit;
pub mod context;
pub mod generate;
pub mod hash;
pub mod judging;
pub mod models;
pub mod plan;
pub mod progress;
pub mod reward_judges;
pub mod runner;
pub mod setup;
pub mod shutdown;
pub mod synthesis;
pub mod totals;
pub mod work;
pub mod worker;

pub use context::Context;
pub use models::{MockStarter, RunningMock};
pub use progress::{Notice, ProgressSink, ProgressSnapshot};
pub use runner::{
    check_and_submit, run, run_prepared, stored_job, submit, work_stored, JobReport, RunError,
    RunOptions, RunReport,
};
pub use shutdown::{shutdown_signal, Shutdown};
pub use work::WorkEnd;
pub use worker::serve_worker;
