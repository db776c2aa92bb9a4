//! Judges: named LLM-judge prompts over stored conversations.
//!
//! A judge is a template (`prompts/judges/*.tera` or the user's own), a mode
//! (pointwise, pairwise, equivalence, assertions) and a parser. This module
//! reads judge definitions (`file`, `definition`), renders prompts from stored
//! conversations (`transcript`, `render`), reads outputs (`parse`), combines
//! samples and swapped orders (`combine`), runs a judgment through a
//! `ChatModel` with a cache of earlier calls (`run`), and computes statistics
//! (`aggregate`). Storing judgments, judging jobs and the CLI build on it.

pub mod aggregate;
pub mod builtin;
pub mod combine;
pub mod definition;
pub mod error;
pub mod file;
pub mod hash;
pub mod parse;
pub mod render;
pub mod requirements;
pub mod run;
pub mod transcript;
pub mod verdict;

pub use builtin::Builtin;
pub use definition::{Aggregate, Judge, Mode, OnInconsistent, Parser, ScoreRange};
pub use error::JudgeError;
pub use file::{
    judges_in_job_config, judges_of_job, load_judges_file, load_judges_text, load_judges_with,
    unknown_endpoints, JudgeFile, JudgeSet,
};
pub use render::{resolved_persona, JudgeInputs, Other};
pub use run::{
    answered_call, call_request, run, run_reusing, JudgeCall, JudgeOutcome, JudgeRun, JudgeStatus,
    Reuse,
};
pub use verdict::{Order, Preference, Verdict};
