//! Errors of rendering a template, with tera's whole cause chain in one message.

use std::error::Error as StdError;
use std::path::PathBuf;

use crate::error_chain::error_chain;

#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("template `{name}` is not loaded (loaded: {loaded})")]
    NotLoaded { name: String, loaded: String },
    #[error("cannot render template `{name}` ({}): {cause}", file.display())]
    Render {
        name: String,
        file: PathBuf,
        /// tera's error and every `source()` under it, joined with `: `.
        cause: String,
    },
}

/// An error and its `source()` chain as one line: `outer: inner: innermost`
/// (see [`error_chain`]). Multi-line messages (tera's parser draws a caret
/// under the bad spot) are folded onto one line.
pub(crate) fn cause_chain(err: &(dyn StdError + 'static)) -> String {
    one_line(&error_chain(err))
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
