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

    /// A line of a JSON-lines file that could not be read, at its number.
    pub fn unreadable_line(file: impl AsRef<Path>, e: &crate::jsonl::LineError) -> Self {
        match e.line() {
            Some(line) => Self::at_line(file, line, e.reason()),
            None => Self::in_file(file, format!("cannot read: {}", e.reason())),
        }
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
        if message.contains("recursion") {
            let place = match err.span() {
                Some(span) => Some(line_col(text, span.start)),
                None => deep_key_line(text).map(|line| (line, 1)),
            };
            let message = format!(
                "nests more than {TOML_MAX_NESTING} levels deep (inline tables, arrays and \
                 dotted keys together), the limit of sparring's TOML reader; write it flatter"
            );
            return Problem::new(
                file,
                place.map(|(line, col)| format!("line {line}, column {col}")),
                message,
            );
        }
        match err.span() {
            Some(span) if !(span.start == 0 && span.end >= text.trim_end().len()) => {
                let (line, col) = line_col(text, span.start);
                Problem::new(file, Some(format!("line {line}, column {col}")), message)
            }
            _ => Problem::in_file(file, message),
        }
    }
}

impl Problem {
    /// A JSON syntax or type error in a document read from `file`, at its
    /// line and column (serde_json's " at line L column C" taken off the
    /// message, the location says it).
    pub fn from_json_error(file: impl AsRef<Path>, e: &serde_json::Error) -> Self {
        let location = (e.line() > 0).then(|| format!("line {}, column {}", e.line(), e.column()));
        Problem::new(file, location, json_message(e))
    }
}

/// How deep serde_json reads nested arrays and objects (its recursion
/// limit; deeper is an error, never a crash).
pub const JSON_MAX_NESTING: usize = 128;

/// serde_json's message without its position, and for nesting past its
/// limit one that names the limit.
pub fn json_message(e: &serde_json::Error) -> String {
    let message = e.to_string();
    if message.starts_with("recursion limit exceeded") {
        return format!(
            "nests arrays and objects more than {JSON_MAX_NESTING} deep, the limit of \
             sparring's JSON reader; write it flatter"
        );
    }
    match message.rfind(" at line ") {
        Some(at) if e.line() > 0 => message[..at].to_string(),
        _ => message,
    }
}

/// How deep the `toml` crate reads nested tables, arrays and dotted keys
/// (its parser's recursion limit; deeper is an error, never a crash).
pub const TOML_MAX_NESTING: usize = 80;

/// The first line whose key (a dotted key before `=`, or a `[table]`
/// header) has as many parts as the TOML reader refuses: its error about
/// such a key has no position.
fn deep_key_line(text: &str) -> Option<usize> {
    text.lines().enumerate().find_map(|(i, line)| {
        let line = line.trim_start();
        let key = match line.strip_prefix('[') {
            Some(header) => header.split(']').next().unwrap_or(header),
            None => line.split('=').next().unwrap_or(line),
        };
        (key.matches('.').count() + 1 >= TOML_MAX_NESTING).then_some(i + 1)
    })
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
    fn toml_nested_past_the_readers_limit_is_a_problem_at_its_line_naming_the_limit() {
        let n = 100_000;
        for (text, line) in [
            (
                format!("a = 1\nb = {}1{}\n", "[".repeat(n), "]".repeat(n)),
                2,
            ),
            (
                format!("a = 1\nb = {}1{}\n", "{c = ".repeat(n), "}".repeat(n)),
                2,
            ),
            (format!("a = 1\n\n{} = 1\n", vec!["k"; n].join(".")), 3),
            (format!("a = 1\n[{}]\nx = 1\n", vec!["k"; n].join(".")), 2),
        ] {
            let err = toml::from_str::<toml::Table>(&text).unwrap_err();
            let problem = Problem::from_toml_error("job.toml", &text, &err).to_string();
            assert!(
                problem.starts_with(&format!("job.toml: line {line}, column ")),
                "{problem}"
            );
            assert!(problem.contains("more than 80 levels deep"), "{problem}");
        }
    }

    #[test]
    fn json_nested_past_the_readers_limit_is_a_problem_at_its_column_naming_the_limit() {
        let text = format!("{{\"a\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        let err = serde_json::from_str::<serde_json::Value>(&text).unwrap_err();
        let problem = Problem::from_json_error("body", &err).to_string();
        assert!(
            problem.starts_with("body: line 1, column 133:") && problem.contains("128 deep"),
            "{problem}"
        );
        let err = serde_json::from_str::<serde_json::Value>("{\"a\": tru}").unwrap_err();
        let problem = Problem::from_json_error("body", &err).to_string();
        assert_eq!(problem, "body: line 1, column 10: expected ident");
    }

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
