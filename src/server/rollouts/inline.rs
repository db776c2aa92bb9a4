//! Scenarios given in a `/v1/rollouts` request itself: written as the job's
//! scenarios file (one JSON object a line, as a scenarios or rows file holds
//! them) under `.usersim/rollouts/` in the data root, named by the hash of
//! its content, so that the stored job's config names a file that stays (its
//! resume, stats and exports read it) and the same scenarios share one file.
//! Their problems are said at `scenarios[i]` of the request.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::Problem;

use super::super::ApiError;
use super::request::BODY;

/// The folder of the data root the files go in.
pub const FOLDER: &str = ".usersim/rollouts";

/// The request's scenario objects as JSONL, or the problems of each that is not one.
pub fn jsonl(items: Vec<Value>) -> Result<String, Vec<Problem>> {
    if items.is_empty() {
        return Err(vec![Problem::at_field(
            BODY,
            "scenarios",
            "is empty; give at least one scenario object, or leave `scenarios` out for the \
             config's",
        )]);
    }
    let mut problems = Vec::new();
    let mut text = String::new();
    for (i, item) in items.iter().enumerate() {
        if !item.is_object() {
            problems.push(Problem::at_field(
                BODY,
                &format!("scenarios[{i}]"),
                "is not an object; give each scenario as its scenarios file holds it",
            ));
            continue;
        }
        text.push_str(&item.to_string());
        text.push('\n');
    }
    if problems.is_empty() {
        Ok(text)
    } else {
        Err(problems)
    }
}

/// Write `jsonl` into the data root `root` (once per content); its path.
pub fn keep(root: &Path, jsonl: &str) -> Result<PathBuf, ApiError> {
    let hash: String = Sha256::digest(jsonl.as_bytes())
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    let folder = root.join(FOLDER);
    let path = folder.join(format!("scenarios-{hash}.jsonl"));
    if path.is_file() {
        return Ok(path);
    }
    let written = std::fs::create_dir_all(&folder).and_then(|()| {
        // Written whole under another name first: a reader never sees half.
        let partial = folder.join(format!("scenarios-{hash}.jsonl.{}", std::process::id()));
        std::fs::write(&partial, jsonl)?;
        std::fs::rename(&partial, &path)
    });
    written.map_err(|e| {
        ApiError::Internal(format!(
            "cannot keep a request's scenarios in {}: {e}",
            path.display()
        ))
    })?;
    Ok(path)
}

/// A problem of the kept file said at the request's `scenarios[i]`.
pub fn said_as_asked(problem: Problem, kept: &Path) -> Problem {
    if problem.file != kept {
        return problem;
    }
    let index = problem
        .location
        .as_deref()
        .and_then(|l| l.strip_prefix("line "))
        .and_then(|l| l.split(',').next())
        .and_then(|n| n.trim().parse::<usize>().ok());
    let location = match index {
        Some(line) => format!("scenarios[{}]", line.saturating_sub(1)),
        None => "scenarios".to_string(),
    };
    Problem {
        file: PathBuf::from(BODY),
        location: Some(location),
        message: problem.message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_are_kept_once_per_content_and_their_problems_said_by_index() {
        let root = tempfile::tempdir().unwrap();
        let text = jsonl(vec![
            serde_json::json!({"id": "a"}),
            serde_json::json!({"id": "b"}),
        ])
        .unwrap();
        assert_eq!(text, "{\"id\":\"a\"}\n{\"id\":\"b\"}\n");
        let path = keep(root.path(), &text).unwrap();
        assert_eq!(keep(root.path(), &text).unwrap(), path);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        assert!(path.starts_with(root.path().join(FOLDER)));
        let problem = Problem::at_line(&path, 2, "`user` is missing");
        let said = said_as_asked(problem, &path);
        assert_eq!(said.location.as_deref(), Some("scenarios[1]"));
        assert_eq!(said.file, PathBuf::from(BODY));
        let problems =
            jsonl(vec![serde_json::json!({"id": "a"}), serde_json::json!(3)]).unwrap_err();
        assert_eq!(problems[0].location.as_deref(), Some("scenarios[1]"));
    }
}
