//! A problem found in a user's input: which file, where in it, what is wrong and
//! what would be right. `usersim validate` collects them all before reporting.

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
