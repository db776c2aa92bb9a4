//! Reading conversations sparring did not generate (issue 27): one reader per
//! source format, each turning one line of a JSONL file into an
//! [`ImportedConversation`] or a [`LineProblem`] that says why not, except
//! tau2-bench's results and tau-bench's trajectories, one JSON document a
//! file, which [`tau2::read_file`] and [`tau_bench::read_file`] read whole,
//! streaming their conversations ([`Format::is_document`] tells which). A [`Source`] is read line by line (or simulation by simulation),
//! with memory independent of its size. The readers never panic on any
//! input and never print.

mod chat;
mod control_tokens;
mod conversation;
mod detect;
pub mod hf;
mod identity;
mod list;
pub mod nemo_gym;
mod nemo_gym_row;
mod nemo_user_sim;
pub mod openai;
pub mod pairing;
mod position;
pub mod probe;
mod problem;
mod request;
pub mod sharegpt;
mod sidecar;
mod source;
pub mod tau2;
pub mod tau_bench;

pub use conversation::{ImportedConversation, Models, Origin, INFERRED_TOOLS_KEY};
pub use detect::{detect, detect_document};
pub use identity::{content_hash, prompt_id, prompt_key};
pub use list::DocumentError;
pub use problem::LineProblem;
pub use request::ImportRequest;
pub use source::{Content, Source, SourceError};

/// The source formats a file can be read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Openai,
    Hf,
    ShareGpt,
    NemoGym,
    /// tau2-bench results: one JSON document, read with [`tau2::read_file`].
    Tau2,
    /// tau-bench (v1) trajectories: one JSON list, read with
    /// [`tau_bench::read_file`].
    TauBench,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Openai,
        Format::Hf,
        Format::ShareGpt,
        Format::NemoGym,
        Format::Tau2,
        Format::TauBench,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Openai => "openai",
            Format::Hf => "hf",
            Format::ShareGpt => "sharegpt",
            Format::NemoGym => "nemo_gym",
            Format::Tau2 => "tau2",
            Format::TauBench => "tau_bench",
        }
    }

    /// The format named `name` (`--format`), `auto` aside.
    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.as_str() == name)
    }

    /// Whether a file in this format is one JSON document (read whole with
    /// [`tau2::read_file`] or [`tau_bench::read_file`]) rather than a
    /// conversation a line.
    pub fn is_document(self) -> bool {
        matches!(self, Format::Tau2 | Format::TauBench)
    }

    /// Reads `text`, line `line` (1-based) of a file in this format.
    pub fn read_line(self, text: &str, line: usize) -> Result<ImportedConversation, LineProblem> {
        match self {
            Format::Openai => openai::read_line(text, line),
            Format::Hf => hf::read_line(text, line),
            Format::ShareGpt => sharegpt::read_line(text, line),
            Format::NemoGym => nemo_gym::read_line(text, line),
            Format::Tau2 => Err(LineProblem::new(
                line,
                "a tau2-bench results file is one JSON document, not a conversation a line: it is read whole",
            )),
            Format::TauBench => Err(LineProblem::new(
                line,
                "a tau-bench trajectories file is one JSON list, not a conversation a line: it is read whole",
            )),
        }
    }
}

#[cfg(test)]
mod never_panic;
