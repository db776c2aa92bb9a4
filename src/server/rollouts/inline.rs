//! Scenarios given in a `/v1/rollouts` request itself: written as the job's
//! scenarios file (one JSON object a line, as a scenarios or rows file holds
//! them) under `.sparring/rollouts/` in the data root, named by the hash of
//! its content, so that the stored job's config names a file that stays (its
//! resume, stats and exports read it) and the same scenarios share one file.
//! Their problems are said at `scenarios[i]` of the request.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::Problem;
use crate::error_chain::error_chain;
use crate::export::file_set::write_file;

use super::super::ApiError;
use super::request::BODY;

/// The folder of the data root the files go in.
pub const FOLDER: &str = ".sparring/rollouts";

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
/// The file is written as every file sparring writes
/// ([`crate::export::file_set::write_file`]: the target must be missing or a
/// regular file, `.partial` then a rename, no symlink followed). Requests of
/// this process with the same scenarios take turns (one lock of 16, picked by
/// the hash, so different scenarios seldom wait for each other), so one never
/// replaces the `.partial` file another is writing; the second finds the file
/// written.
pub fn keep(root: &Path, jsonl: &str) -> Result<PathBuf, ApiError> {
    static WRITING: [Mutex<()>; 16] = [const { Mutex::new(()) }; 16];
    let digest = Sha256::digest(jsonl.as_bytes());
    let hash: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    let path = root.join(FOLDER).join(format!("scenarios-{hash}.jsonl"));
    let lock = &WRITING[usize::from(digest[0]) % WRITING.len()];
    let _turn = lock.lock().unwrap_or_else(PoisonError::into_inner);
    let written = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
    if !written {
        write_file(&path, |out| out.write_all(jsonl.as_bytes())).map_err(|e| {
            ApiError::Internal(format!(
                "cannot keep a request's scenarios in {}: {}",
                path.display(),
                error_chain(&e)
            ))
        })?;
    }
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

    #[test]
    fn requests_keeping_the_same_scenarios_at_once_all_get_the_whole_file() {
        let root = tempfile::tempdir().unwrap();
        let text = "{\"id\":\"a\"}\n".repeat(10_000);
        let paths: Vec<PathBuf> = std::thread::scope(|s| {
            let keeping: Vec<_> = (0..8)
                .map(|_| s.spawn(|| keep(root.path(), &text).unwrap()))
                .collect();
            keeping.into_iter().map(|k| k.join().unwrap()).collect()
        });
        assert!(paths.iter().all(|p| *p == paths[0]), "{paths:?}");
        assert_eq!(std::fs::read_to_string(&paths[0]).unwrap(), text);
        let names: Vec<_> = std::fs::read_dir(root.path().join(FOLDER))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_where_the_file_goes_is_refused_and_not_followed() {
        let elsewhere = tempfile::tempdir().unwrap();
        let text = "{\"id\":\"a\"}\n";
        let path = keep(elsewhere.path(), text).unwrap();
        let name = path.strip_prefix(elsewhere.path()).unwrap();
        let root = tempfile::tempdir().unwrap();
        let outside = elsewhere.path().join("outside.txt");
        std::fs::write(&outside, "not ours\n").unwrap();
        std::fs::create_dir_all(root.path().join(FOLDER)).unwrap();
        std::os::unix::fs::symlink(&outside, root.path().join(name)).unwrap();
        let Err(ApiError::Internal(detail)) = keep(root.path(), text) else {
            panic!("a symlink at the scenarios file was used");
        };
        assert!(detail.contains("a symlink, not a regular file"), "{detail}");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "not ours\n");
    }
}
