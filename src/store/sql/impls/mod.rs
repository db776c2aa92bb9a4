//! One file per store trait, each calling the SQL of its concern.

mod batches;
mod conversations;
mod evaluations;
mod imports;
mod items;
mod jobs;
mod judgments;
mod personas;
mod proposals;
mod tokens;
