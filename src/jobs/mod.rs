//! Jobs: planning items, preparing inputs and models, running items with leases,
//! and reporting progress.

pub mod hash;
pub mod plan;
pub mod progress;
pub mod runner;
pub mod setup;

pub use runner::{run, RunError, RunOptions, RunReport};
