//! Judging jobs: judges × stored conversations (or matched pairs of
//! conversations from two jobs) as items, worked like any other job (leases,
//! limits, retries, resume, workers, progress). Each item stores one judgment
//! with the model calls it made; calls already stored for the same judge hash
//! and conversations are reused, so re-judging only does what is missing.
//!
//! `spec` is what the job row stores, `load` reads what it names, `plan`
//! makes its items, `submit` stores (or finds) and resumes it, `work` works
//! it here with the item runner of `item`.

mod batch;
mod item;
mod load;
mod plan;
pub mod spec;
mod submit;
mod work;

pub use super::report::JudgingReport;

pub use spec::{JudgesSource, JudgingSpec, JudgingTarget, MatchBy, INLINE_JUDGES};
pub(in crate::jobs) use submit::resume_judging;
pub use submit::{job_name, judge, judge_generation_job, submit_judging};
