//! Reporting on jobs: statistics gathered from the store ([`gather`]) into
//! report types ([`stats`]), rendered as text ([`render`]) or JSON (serde);
//! and what a job's roles used and cost ([`usage`], [`judging_usage`]).

pub mod compare_users;
mod compare_users_render;
pub mod gather;
pub use crate::interval;
pub mod judge_prices;
pub mod judging_usage;
pub mod realism;
pub mod render;
pub mod stats;
pub mod strata;
mod strata_bins;
pub mod strata_probe;
mod strata_render;
pub mod synthesis;
pub mod synthesized;
pub mod usage;
pub mod users;
mod users_render;

pub use gather::job_stats;
pub use stats::{StatsError, StatsReport, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, DEFAULT_KS};
