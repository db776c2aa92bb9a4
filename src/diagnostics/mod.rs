//! What every reader of a user's input reports with: a [`Problem`] (the
//! file, the line or field, what was wrong and what would be right), and a
//! TOML document read with the position of every key (`document`), so that
//! each problem names its line. Config files, judges, evaluation files,
//! persona files and imports all report through these.

pub mod document;
pub mod problem;

pub use problem::Problem;
