//! One import, as the CLI and the service both describe it: the job's name,
//! the sources, their format (or `auto`), and whether invalid lines are
//! skipped or stop the import.

use crate::config::Problem;

use super::{Format, Source};

/// The longest job name an import takes, as for every job.
pub const MAX_NAME_CHARS: usize = 200;

#[derive(Debug, Clone)]
pub struct ImportRequest {
    /// The import job: created on the first import of this name, added to on
    /// the next ones.
    pub name: String,
    pub sources: Vec<Source>,
    /// `None`: each source's format is told from its first line.
    pub format: Option<Format>,
    /// Store the valid conversations and count the invalid ones, instead of
    /// storing nothing when any line is invalid.
    pub skip_invalid: bool,
}

impl ImportRequest {
    /// What is wrong with the request itself, before any source is read;
    /// `field` and `sources_field` name where the name and the sources were
    /// given (`--name` and `FILE` on the command line).
    pub fn problems(&self, field: &str, sources_field: &str) -> Vec<Problem> {
        let mut problems = Vec::new();
        let name = self.name.trim();
        if name.is_empty() {
            problems.push(Problem::in_file(
                field,
                "the job's name is empty; give the name of the import job to create or add to",
            ));
        } else if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
            problems.push(Problem::in_file(
                field,
                format!(
                    "the job's name must be at most {MAX_NAME_CHARS} characters without control \
                     characters"
                ),
            ));
        }
        if self.sources.is_empty() {
            problems.push(Problem::in_file(
                sources_field,
                "no file to import; name one or more JSONL files (or a tau2-bench results file)",
            ));
        }
        problems
    }
}

impl Format {
    /// The format a person named (`auto` is `None`), or why not.
    pub fn from_user(name: &str) -> Result<Option<Format>, String> {
        match name {
            "auto" => Ok(None),
            _ => Format::ALL
                .into_iter()
                .find(|f| f.as_str() == name)
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "unknown format '{name}': use {} or auto",
                        Format::ALL.map(Format::as_str).join(", ")
                    )
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(name: &str, sources: usize) -> ImportRequest {
        ImportRequest {
            name: name.into(),
            sources: (0..sources).map(|_| Source::text("", "body")).collect(),
            format: None,
            skip_invalid: false,
        }
    }

    #[test]
    fn a_name_and_a_source_are_needed() {
        assert!(request("logs", 1).problems("--name", "FILE").is_empty());
        let p = request(" ", 1).problems("--name", "FILE");
        assert!(p[0].to_string().contains("--name"), "{}", p[0]);
        assert_eq!(
            request(&"x".repeat(201), 1)
                .problems("--name", "FILE")
                .len(),
            1
        );
        assert_eq!(request("a\nb", 1).problems("--name", "FILE").len(), 1);
        assert!(request("logs", 0).problems("--name", "FILE")[0]
            .to_string()
            .contains("no file"));
    }

    #[test]
    fn formats_are_read_by_name_and_auto_is_none() {
        assert_eq!(Format::from_user("auto"), Ok(None));
        assert_eq!(Format::from_user("nemo_gym"), Ok(Some(Format::NemoGym)));
        let err = Format::from_user("csv").unwrap_err();
        assert!(err.contains("openai, hf, sharegpt, nemo_gym"), "{err}");
    }
}
