//! Scenario synthesis: propose task blueprints grounded in an environment's
//! real records, validate them by executing their gold actions, review them
//! with a committee of judges, drop near-duplicates, and write scenarios that
//! `sparring run` reads unchanged.

pub mod accept;
pub mod answer_leak;
pub mod brief;
pub mod brief_check;
pub mod committee;
#[cfg(test)]
mod committee_tests;
pub mod coverage;
pub mod dedup;

pub use brief::{Outcome, ProposalBrief};
pub mod diversity;
pub mod execute;
pub mod reply;
pub mod review;
pub mod stage;

pub use stage::{Rejection, Stage};
#[cfg(test)]
mod execute_tests;
pub mod prompt;
pub mod propose;
pub mod reviewers;
pub mod summary;
pub mod tally;
pub mod vote;
