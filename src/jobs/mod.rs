//! Jobs: planning items, preparing inputs and models, working items with leases
//! and heartbeats, the circuit breaker, and progress. The store and the way
//! to start the mock come from the edge in a [`Context`]; progress goes to a
//! [`ProgressSink`] the edge renders.

pub mod breaker;
pub mod commit;
pub mod context;
pub mod error;
pub mod generate;
pub mod hash;
pub mod judge_calls;
pub mod judging;
pub mod models;
pub mod options;
pub mod plan;
pub mod progress;
pub mod report;
pub mod reward_judges;
pub mod runner;
pub mod seed;
pub mod setup;
pub mod shutdown;
pub mod stored;
pub mod synthesis;
pub mod totals;
pub mod work;
pub mod worker;

pub use context::Context;
pub use error::RunError;
pub use models::{MockStarter, RunningMock};
pub use options::RunOptions;
pub use progress::{Notice, ProgressSink, ProgressSnapshot};
pub use report::{JobReport, RunReport};
pub use runner::{check_and_submit, run, run_prepared, submit, work_stored};
pub use shutdown::{shutdown_signal, Shutdown};
pub use stored::stored_job;
pub use work::WorkEnd;
pub use worker::serve_worker;
