//! Reading conversations usersim did not generate (issue 27): one reader per
//! source format, each turning one line of a JSONL file into an
//! [`ImportedConversation`] or a [`LineProblem`] that says why not; a
//! [`Source`] is read line by line, with memory independent of its size.
//! The readers never panic on any input and never print.

mod chat;
mod conversation;
mod detect;
pub mod hf;
mod identity;
pub mod nemo_gym;
pub mod openai;
mod problem;
mod request;
pub mod sharegpt;
mod sidecar;
mod source;

pub use conversation::{ImportedConversation, Origin};
pub use detect::detect;
pub use identity::{content_hash, prompt_id, prompt_key};
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
}

impl Format {
    pub const ALL: [Format; 4] = [
        Format::Openai,
        Format::Hf,
        Format::ShareGpt,
        Format::NemoGym,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Openai => "openai",
            Format::Hf => "hf",
            Format::ShareGpt => "sharegpt",
            Format::NemoGym => "nemo_gym",
        }
    }

    /// Reads `text`, line `line` (1-based) of a file in this format.
    pub fn read_line(self, text: &str, line: usize) -> Result<ImportedConversation, LineProblem> {
        match self {
            Format::Openai => openai::read_line(text, line),
            Format::Hf => hf::read_line(text, line),
            Format::ShareGpt => sharegpt::read_line(text, line),
            Format::NemoGym => nemo_gym::read_line(text, line),
        }
    }
}

#[cfg(test)]
mod never_panic;
