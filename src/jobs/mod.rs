//! Jobs: planning items, preparing inputs and models, working items with leases
//! and heartbeats, the circuit breaker, and progress.

pub mod bench;
pub mod breaker;
pub mod commit;
pub mod generate;
pub mod hash;
pub mod judging;
pub mod plan;
pub mod progress;
pub mod report;
pub mod runner;
pub mod setup;
pub mod shutdown;
pub mod stats;
pub mod totals;
pub mod work;

pub use runner::{
    check_and_submit, resume, run, serve_worker, submit, work_stored, RunError, RunOptions,
    RunReport,
};
pub use shutdown::{shutdown_signal, Shutdown};
pub use work::WorkEnd;
