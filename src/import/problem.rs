//! Why one line of an imported file cannot be read. The reader knows the
//! line, not the file: [`LineProblem::in_file`] makes the [`Problem`] a user
//! is shown.

use std::fmt;
use std::path::Path;

use crate::diagnostics::problem::Problem;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    /// 1-based.
    pub line: usize,
    pub why: String,
}

impl LineProblem {
    pub fn new(line: usize, why: impl Into<String>) -> Self {
        LineProblem {
            line,
            why: why.into(),
        }
    }

    pub fn in_file(&self, file: impl AsRef<Path>) -> Problem {
        Problem::at_line(file, self.line, self.why.clone())
    }
}

impl fmt::Display for LineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.why)
    }
}

impl std::error::Error for LineProblem {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_problem_in_a_file_names_the_file_line_and_why() {
        let p = LineProblem::new(12, "invalid JSON: EOF");
        assert_eq!(p.to_string(), "line 12: invalid JSON: EOF");
        assert_eq!(
            p.in_file("logs.jsonl").to_string(),
            "logs.jsonl: line 12: invalid JSON: EOF"
        );
    }
}
