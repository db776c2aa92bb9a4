//! A problem found in a user's input: which file, where in it, what is wrong and
//! what would be right. `sparring validate` collects them all before reporting.

use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: PathBuf,
    /// `line 12`, `line 3, column 7`, or a field path such as `endpoints.policy.model`.
    pub location: Option<String>,
    pub message: String,
}

impl Problem {
    pub fn new(
        file: impl AsRef<Path>,
        location: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        Problem {
            file: file.as_ref().to_path_buf(),
            location,
            message: message.into(),
        }
    }

    pub fn at_line(file: impl AsRef<Path>, line: usize, message: impl Into<String>) -> Self {
        Self::new(file, Some(format!("line {line}")), message)
    }

    pub fn at_field(file: impl AsRef<Path>, field: &str, message: impl Into<String>) -> Self {
        Self::new(file, Some(field.to_string()), message)
    }

    pub fn in_file(file: impl AsRef<Path>, message: impl Into<String>) -> Self {
        Self::new(file, None, message)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(loc) => write!(f, "{}: {}: {}", self.file.display(), loc, self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl Problem {
    /// A TOML parse or type error in `text` (read from `file`), at its line and
    /// column. The one conversion every TOML reader uses. An error about the
    /// whole document (e.g. a missing top-level field) has no useful line.
    pub fn from_toml_error(file: impl AsRef<Path>, text: &str, err: &toml::de::Error) -> Self {
        let message = err.message().trim().to_string();
        match err.span() {
            Some(span) if !(span.start == 0 && span.end >= text.trim_end().len()) => {
                let (line, col) = line_col(text, span.start);
                Problem::new(file, Some(format!("line {line}, column {col}")), message)
            }
            _ => Problem::in_file(file, message),
        }
    }
}

/// 1-based line and column of a byte offset in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |nl| before.len() - nl - 1)
        + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_print_file_location_and_message() {
        let p = Problem::at_line("personas/a.toml", 3, "unknown field `age`");
        assert_eq!(
            p.to_string(),
            "personas/a.toml: line 3: unknown field `age`"
        );
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("ab", 0), (1, 1));
    }
}
