//! Judges as written in TOML: `[[judges]]` tables inside a job config or a
//! separate `judges.toml` (which may define its own `[endpoints]`). Every table
//! denies unknown fields. `definition.rs` turns a [`JudgeFile`] into a `Judge`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::builtin::Builtin;
use super::definition::{Aggregate, Judge, Mode, OnInconsistent};
use crate::config::file::EndpointFile;
use crate::config::load::check_endpoint;
use crate::config::problem::{line_col, Problem};
use crate::config::EndpointConfig;

/// One judge as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeFile {
    /// How results are named (`--judge NAME`, `--min-judge NAME=SCORE`).
    pub name: String,
    /// The endpoint (a name in `[endpoints]`) the judge's calls go to.
    pub endpoint: String,
    /// A built-in judge: supplies template, mode, parser and range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin: Option<Builtin>,
    /// A template file (relative to the config file), instead of `builtin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// Label text → verdict: a number (pointwise), `A`/`B`/`tie` (pairwise),
    /// `equal`/`not_equal` (equivalence). The label found last in the output wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, LabelValueFile>>,
    /// One capture group; its last match in the output wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// Pointwise: `[low, high]`; a score outside is unparseable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[f64; 2]>,
    /// Pairwise and equivalence: judge both orders (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_check: Option<bool>,
    /// Pairwise: what two orders that disagree become (default `tie`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_inconsistent: Option<OnInconsistent>,
    /// Calls per order, combined by `aggregate` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<Aggregate>,
    /// Lower than the endpoint's `max_tokens` for this judge's calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// This judge's temperature instead of the endpoint's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Pass/fail judges (range [0, 1]): a generation job drops a conversation
    /// the judge fails, e.g. one whose simulated user `user_fidelity` flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_flagged: Option<bool>,
}

/// A label's verdict as written: a number or a word.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LabelValueFile {
    Number(f64),
    Text(String),
}

/// A separate judges file: `[[judges]]` tables and, optionally, the endpoints
/// they name (otherwise they name endpoints of the job being judged).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgesFile {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub endpoints: BTreeMap<String, EndpointFile>,
    #[serde(default)]
    pub judges: Vec<JudgeFile>,
}

/// The `[[judges]]` of a job config; every other key is the job's business.
#[derive(Debug, Deserialize)]
struct JobJudges {
    #[serde(default)]
    judges: Vec<JudgeFile>,
}

/// A loaded judges file: its judges and the endpoints it defines.
#[derive(Debug, Clone)]
pub struct JudgeSet {
    pub judges: Vec<Judge>,
    pub endpoints: BTreeMap<String, EndpointConfig>,
}

/// Read and validate a `judges.toml`; template paths are relative to its folder.
/// Every problem is reported at once.
pub fn load_judges_file(path: &Path) -> Result<JudgeSet, Vec<Problem>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![Problem::in_file(
            path,
            format!("cannot read the judges file: {e}"),
        )]
    })?;
    load_judges_text(path, &text, &folder_of(path))
}

/// [`load_judges_file`] for judges TOML that is not in a file (e.g. sent to
/// the service): problems name `label` as their file; template paths are
/// relative to `base`.
pub fn load_judges_text(label: &Path, text: &str, base: &Path) -> Result<JudgeSet, Vec<Problem>> {
    let path = label;
    let file: JudgesFile = parse_toml(path, text)?;
    let mut problems = Vec::new();
    let mut endpoints = BTreeMap::new();
    for (name, e) in &file.endpoints {
        if let Some(endpoint) = check_endpoint(path, name, e, &mut problems) {
            endpoints.insert(name.clone(), endpoint);
        }
    }
    if file.judges.is_empty() {
        problems.push(Problem::in_file(
            path,
            "no judges are defined; add e.g. [[judges]] with name = \"helpful\", \
             endpoint = \"judge\", builtin = \"helpfulness\"",
        ));
    }
    let judges = validate_all(path, base, &file.judges, &mut problems);
    if !file.endpoints.is_empty() {
        problems.extend(unknown_endpoints(path, &judges, |name| {
            file.endpoints.contains_key(name)
        }));
    }
    if problems.is_empty() {
        Ok(JudgeSet { judges, endpoints })
    } else {
        Err(problems)
    }
}

/// The `[[judges]]` tables of a job config's `text` (read from `path`, template
/// paths relative to `base`). A job without judges gives an empty list.
pub fn judges_in_job_config(
    path: &Path,
    text: &str,
    base: &Path,
) -> Result<Vec<Judge>, Vec<Problem>> {
    let file: JobJudges = parse_toml(path, text)?;
    let mut problems = Vec::new();
    let judges = validate_all(path, base, &file.judges, &mut problems);
    if problems.is_empty() {
        Ok(judges)
    } else {
        Err(problems)
    }
}

/// Judges from the `[[judges]]` tables a loaded job keeps as written
/// (`config::Job::judges`), template paths relative to `base`. Problems name
/// the table (`judges[1]`), since the tables no longer have line numbers.
pub fn judges_from_tables(
    path: &Path,
    tables: &[toml::Table],
    base: &Path,
) -> Result<Vec<Judge>, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut files = Vec::new();
    for (i, table) in tables.iter().enumerate() {
        match JudgeFile::deserialize(toml::Value::Table(table.clone())) {
            Ok(file) => files.push(file),
            Err(e) => problems.push(Problem::at_field(
                path,
                &format!("judges[{i}]"),
                e.message().trim().to_string(),
            )),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let judges = validate_all(path, base, &files, &mut problems);
    if problems.is_empty() {
        Ok(judges)
    } else {
        Err(problems)
    }
}

/// A loaded job's `[[judges]]`, validated. Their template paths are absolute
/// already (config::load makes them so, and the snapshot keeps them).
pub fn judges_of_job(job: &crate::config::Job) -> Result<Vec<Judge>, Vec<Problem>> {
    judges_from_tables(&job.source, &job.judges, Path::new("/"))
}

/// A problem for every judge whose `endpoint` is not one `known` accepts.
pub fn unknown_endpoints(
    path: &Path,
    judges: &[Judge],
    known: impl Fn(&str) -> bool,
) -> Vec<Problem> {
    judges
        .iter()
        .enumerate()
        .filter(|(_, j)| !known(&j.endpoint))
        .map(|(i, j)| {
            Problem::at_field(
                path,
                &format!("judges[{i}].endpoint"),
                format!(
                    "judge '{}' names endpoint '{}', which is not defined; define it under \
                     [endpoints.{}] or name one that is",
                    j.name, j.endpoint, j.endpoint
                ),
            )
        })
        .collect()
}

fn validate_all(
    path: &Path,
    base: &Path,
    files: &[JudgeFile],
    problems: &mut Vec<Problem>,
) -> Vec<Judge> {
    let mut judges = Vec::new();
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for (i, file) in files.iter().enumerate() {
        if !file.name.is_empty() && !names.insert(&file.name) {
            problems.push(Problem::at_field(
                path,
                &format!("judges[{i}].name"),
                format!(
                    "judge name '{}' is used twice; each judge needs its own name",
                    file.name
                ),
            ));
        }
        match Judge::from_file(file, i, path, base) {
            Ok(judge) => judges.push(judge),
            Err(more) => problems.extend(more),
        }
    }
    judges
}

fn parse_toml<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, Vec<Problem>> {
    toml::from_str::<T>(text).map_err(|e| {
        let location = e.span().map(|span| {
            let (line, col) = line_col(text, span.start);
            format!("line {line}, column {col}")
        });
        vec![Problem::new(path, location, e.message().trim().to_string())]
    })
}

fn folder_of(path: &Path) -> PathBuf {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    parent
        .canonicalize()
        .or_else(|_| std::path::absolute(parent))
        .unwrap_or_else(|_| parent.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_judges_file_with_its_own_endpoint_and_two_judges_loads() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "mine.tera", "Rate: {{ conversation }}");
        let path = write(
            dir.path(),
            "judges.toml",
            r#"
[endpoints.judge]
base_url = "http://127.0.0.1:1/v1"
model = "gpt-judge"

[[judges]]
name = "helpful"
endpoint = "judge"
builtin = "helpfulness"
samples = 3

[[judges]]
name = "mine"
endpoint = "judge"
template = "mine.tera"
mode = "pointwise"
range = [0, 5]
"#,
        );
        let set = load_judges_file(&path).unwrap();
        assert_eq!(set.endpoints["judge"].model, "gpt-judge");
        assert_eq!(set.judges.len(), 2);
        assert_eq!(set.judges[0].samples, 3);
        assert_eq!(
            set.judges[1].range.map(|r| (r.low, r.high)),
            Some((0.0, 5.0))
        );
    }

    #[test]
    fn a_typo_in_a_judge_table_is_reported_at_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "judges.toml",
            "[[judges]]\nname = \"h\"\nendpoint = \"e\"\nbuiltin = \"helpfulness\"\nswapcheck = true\n",
        );
        let problems = load_judges_file(&path).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].location.as_deref(), Some("line 5, column 1"));
        assert!(problems[0].message.contains("swapcheck"), "{problems:?}");
    }

    #[test]
    fn an_unknown_builtin_lists_the_known_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "judges.toml",
            "[[judges]]\nname = \"h\"\nendpoint = \"e\"\nbuiltin = \"helpful\"\n",
        );
        let problems = load_judges_file(&path).unwrap_err();
        assert!(
            problems[0].message.contains("pairwise_preference"),
            "{problems:?}"
        );
    }

    #[test]
    fn duplicate_names_and_undefined_endpoints_are_problems() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "judges.toml",
            r#"
[endpoints.judge]
base_url = "http://127.0.0.1:1/v1"
model = "m"
[[judges]]
name = "h"
endpoint = "judge"
builtin = "helpfulness"
[[judges]]
name = "h"
endpoint = "jugde"
builtin = "helpfulness"
"#,
        );
        let problems = load_judges_file(&path).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].location.as_deref(), Some("judges[1].name"));
        assert_eq!(problems[1].location.as_deref(), Some("judges[1].endpoint"));
        assert!(problems[1].message.contains("'jugde'"));
    }

    #[test]
    fn judges_from_a_loaded_jobs_tables_name_the_table_of_a_problem() {
        let tables: Vec<toml::Table> = vec![
            toml::from_str("name = \"a\"\nendpoint = \"e\"\nbuiltin = \"helpfulness\"").unwrap(),
            toml::from_str("name = \"b\"\nendpoint = \"e\"\nbuiltin = \"helpfulness\"\nsample = 3")
                .unwrap(),
        ];
        let problems =
            judges_from_tables(Path::new("job.toml"), &tables, Path::new("/")).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].location.as_deref(), Some("judges[1]"));
        assert!(
            problems[0].message.contains("unknown field `sample`"),
            "{problems:?}"
        );
        let judges =
            judges_from_tables(Path::new("job.toml"), &tables[..1], Path::new("/")).unwrap();
        assert_eq!(judges[0].name, "a");
    }

    #[test]
    fn judges_in_a_job_config_are_read_beside_the_jobs_own_keys() {
        let text = r#"
name = "job"
[endpoints.e]
mock = true
model = "mock-judge"
[[judges]]
name = "pref"
endpoint = "e"
builtin = "pairwise_preference"
swap_check = false
"#;
        let judges = judges_in_job_config(Path::new("job.toml"), text, Path::new("/")).unwrap();
        assert_eq!(judges.len(), 1);
        assert!(!judges[0].swap_check);
        assert!(
            judges_in_job_config(Path::new("job.toml"), "name = \"x\"", Path::new("/"))
                .unwrap()
                .is_empty()
        );
    }
}
