//! Scenarios given in a `/v1/rollouts` request itself: written as the job's
//! scenarios file (one JSON object a line, as a scenarios or rows file holds
//! them) under `.sparring/rollouts/` in the data root, named by the hash of
//! its content, so that the stored job's config names a file that stays (its
//! resume, stats and exports read it) and the same scenarios share one file.
//! Their problems are said at `scenarios[i]` of the request.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::Problem;
use crate::error_chain::error_chain;
use crate::export::file_set::write_file;

use super::super::ApiError;
/// Where problems with the request's own fields are said to be (the
/// request's reader says them there too).
pub const BODY: &str = "request body";

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

/// The most bytes of inline scenarios the folder keeps, all requests'
/// files together; past it a request names a scenarios file instead.
pub const MAX_KEPT_BYTES: u64 = 256 << 20;

/// A request's scenarios to be kept in the data root, not yet written.
pub struct Keeping {
    pub path: PathBuf,
    jsonl: String,
    /// Folders this request made, innermost last, to take away on refusal.
    made: Vec<PathBuf>,
    /// The file was written by this request (not there before it).
    wrote: bool,
}

/// Where `jsonl` is kept under `root` (canonical), once every folder on the
/// way is checked: `.sparring` and `.sparring/rollouts` are real folders or
/// missing (a symlink anywhere is refused, so nothing is written outside
/// the data root), and the folder's files with this one stay within
/// [`MAX_KEPT_BYTES`]. Nothing is written yet.
pub fn plan(root: &Path, jsonl: String) -> Result<Keeping, ApiError> {
    let digest = Sha256::digest(jsonl.as_bytes());
    let hash: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    let folder = root.join(FOLDER);
    let mut at = root.to_path_buf();
    for part in Path::new(FOLDER).components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(refused(format!(
                    "cannot be kept: the data root's {} is not a folder (a symlink or a file);                      the service keeps a request's scenarios only in a real folder inside the                      data root: name a scenarios file with `scenarios.file` instead",
                    at.strip_prefix(root).unwrap_or(&at).display()
                )))
            }
            Err(_) => break,
        }
    }
    let path = folder.join(format!("scenarios-{hash}.jsonl"));
    let exists = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
    if !exists {
        let held: u64 = std::fs::read_dir(&folder)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter_map(|e| e.metadata().ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0);
        if held + jsonl.len() as u64 > MAX_KEPT_BYTES {
            return Err(refused(format!(
                "cannot be kept: the service keeps at most {} MiB of scenarios given in                  requests and holds {} MiB; name a scenarios file inside the data root with                  `scenarios.file` instead",
                MAX_KEPT_BYTES >> 20,
                held >> 20
            )));
        }
    }
    Ok(Keeping {
        path,
        jsonl,
        made: Vec::new(),
        wrote: false,
    })
}

fn refused(message: String) -> ApiError {
    ApiError::Invalid(vec![Problem::at_field(BODY, "scenarios", message)])
}

/// One lock of 16, picked by the file: requests keeping the same scenarios
/// check and write them in turn, so one never takes away or replaces the
/// file another is checking (different scenarios seldom wait).
pub fn turn(path: &Path) -> &'static tokio::sync::Mutex<()> {
    static TURNS: [tokio::sync::Mutex<()>; 16] = [const { tokio::sync::Mutex::const_new(()) }; 16];
    let digest = Sha256::digest(path.as_os_str().as_encoded_bytes());
    &TURNS[usize::from(digest[0]) % TURNS.len()]
}

impl Keeping {
    /// Write the file (once per content), as every file sparring writes
    /// ([`crate::export::file_set::write_file`]: the target missing or a
    /// regular file, `.partial` then a rename, no symlink followed), making
    /// the folders it needs one by one, each checked again.
    pub fn write(&mut self) -> Result<(), ApiError> {
        let exists = std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_file());
        if exists {
            return Ok(());
        }
        let Some(folder) = self.path.parent().map(Path::to_path_buf) else {
            return Err(ApiError::Internal("a kept file has no folder".into()));
        };
        let mut missing = Vec::new();
        let mut at = folder.as_path();
        while std::fs::symlink_metadata(at).is_err() {
            missing.push(at.to_path_buf());
            match at.parent() {
                Some(parent) => at = parent,
                None => break,
            }
        }
        for dir in missing.into_iter().rev() {
            std::fs::create_dir(&dir).map_err(|e| internal(&dir, &e))?;
            self.made.push(dir.clone());
            if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                return Err(internal(&dir, &std::io::Error::other("not a folder")));
            }
        }
        self.wrote = true;
        write_file(&self.path, |out| out.write_all(self.jsonl.as_bytes()))
            .map_err(|e| internal(&self.path, &e))?;
        Ok(())
    }

    /// Take away what [`Keeping::write`] made for a request that was refused:
    /// the file, if this request wrote it, and the folders it made, if empty.
    pub fn discard(self) {
        if self.wrote {
            let _ = std::fs::remove_file(&self.path);
        }
        for dir in self.made.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

fn internal(path: &Path, e: &(dyn std::error::Error + 'static)) -> ApiError {
    ApiError::Internal(format!(
        "cannot keep a request's scenarios in {}: {}",
        path.display(),
        error_chain(e)
    ))
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

    fn kept(root: &Path, text: &str) -> PathBuf {
        let mut keeping = plan(root, text.to_string()).unwrap();
        keeping.write().unwrap();
        keeping.path
    }

    #[test]
    fn scenarios_are_kept_once_per_content_and_their_problems_said_by_index() {
        let root = tempfile::tempdir().unwrap();
        let text = jsonl(vec![
            serde_json::json!({"id": "a"}),
            serde_json::json!({"id": "b"}),
        ])
        .unwrap();
        assert_eq!(text, "{\"id\":\"a\"}\n{\"id\":\"b\"}\n");
        let path = kept(root.path(), &text);
        assert_eq!(kept(root.path(), &text), path);
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
    fn a_refused_request_leaves_nothing_and_one_that_found_the_file_leaves_it() {
        let root = tempfile::tempdir().unwrap();
        let mut keeping = plan(root.path(), "{\"id\":\"a\"}\n".into()).unwrap();
        assert!(!root.path().join(".sparring").exists(), "planning wrote");
        keeping.write().unwrap();
        assert!(keeping.path.is_file());
        keeping.discard();
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
        let path = kept(root.path(), "{\"id\":\"b\"}\n");
        let mut again = plan(root.path(), "{\"id\":\"b\"}\n".into()).unwrap();
        again.write().unwrap();
        again.discard();
        assert!(path.is_file(), "a file another request kept was taken away");
    }

    #[test]
    fn past_the_folders_limit_a_request_names_a_file_instead() {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join(FOLDER);
        std::fs::create_dir_all(&folder).unwrap();
        let big = std::fs::File::create(folder.join("scenarios-old.jsonl")).unwrap();
        big.set_len(MAX_KEPT_BYTES).unwrap();
        let Err(ApiError::Invalid(problems)) = plan(root.path(), "{}\n".into()) else {
            panic!("kept past the limit");
        };
        assert_eq!(problems[0].location.as_deref(), Some("scenarios"));
        assert!(
            problems[0].message.contains("at most 256 MiB"),
            "{problems:?}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_anywhere_on_the_way_is_refused_and_not_followed() {
        let elsewhere = tempfile::tempdir().unwrap();
        let text = "{\"id\":\"a\"}\n";
        for link in [".sparring", ".sparring/rollouts"] {
            let root = tempfile::tempdir().unwrap();
            let at = root.path().join(link);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(elsewhere.path(), &at).unwrap();
            let Err(ApiError::Invalid(problems)) = plan(root.path(), text.into()) else {
                panic!("{link}: a symlink on the way was used");
            };
            assert!(problems[0].message.contains("not a folder"), "{problems:?}");
        }
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
        // At the file itself: write refuses it.
        let root = tempfile::tempdir().unwrap();
        let outside = elsewhere.path().join("outside.txt");
        std::fs::write(&outside, "not ours\n").unwrap();
        let mut keeping = plan(root.path(), text.into()).unwrap();
        std::fs::create_dir_all(root.path().join(FOLDER)).unwrap();
        std::os::unix::fs::symlink(&outside, &keeping.path).unwrap();
        let Err(ApiError::Internal(detail)) = keeping.write() else {
            panic!("a symlink at the scenarios file was used");
        };
        assert!(detail.contains("a symlink, not a regular file"), "{detail}");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "not ours\n");
    }
}
