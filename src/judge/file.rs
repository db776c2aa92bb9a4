//! Judges as written in TOML: `[[judges]]` tables inside a job config or a
//! separate `judges.toml` (which may define its own `[endpoints]`). A judge
//! table is tagged by its mode (`mode`, or its built-in judge's mode): each
//! mode has its own keys, so an option of another mode (a `range` on a
//! pairwise judge, `swap_check` on a pointwise one) is an unknown key,
//! reported at its line with the modes it belongs to. `definition.rs` turns a
//! [`JudgeFile`] into a `Judge`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::de::DeValue;

use super::builtin::Builtin;
use super::definition::{Aggregate, Judge, Mode, OnInconsistent};
use crate::config::endpoint::{read_endpoints, EndpointTable, Endpoints};
use crate::config::tables::Tables;
use crate::config::{EndpointConfig, Trust};
use crate::diagnostics::document::{child, fields_of, unknown_key_message, Node, Source};
use crate::diagnostics::problem::Problem;

/// The keys every judge has, whatever its mode.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct JudgeCommon {
    /// How results are named (`--judge NAME`, `--min-judge NAME=SCORE`).
    pub name: String,
    /// The endpoint (a name in `[endpoints]`) the judge's calls go to.
    pub endpoint: String,
    /// A built-in judge: supplies template, mode, parser and range.
    #[serde(default)]
    pub builtin: Option<Builtin>,
    /// A template file (relative to the config file), instead of `builtin`.
    #[serde(default)]
    pub template: Option<PathBuf>,
    /// The tag: optional with `builtin` (which has its own mode).
    #[serde(default)]
    pub mode: Option<Mode>,
    /// Calls per order, combined by `aggregate` (default 1).
    #[serde(default)]
    pub samples: Option<u32>,
    #[serde(default)]
    pub aggregate: Option<Aggregate>,
    /// Lower than the endpoint's `max_tokens` for this judge's calls.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// This judge's temperature instead of the endpoint's.
    #[serde(default)]
    pub temperature: Option<f32>,
}

/// A label's verdict as written: a number or a word.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LabelValueFile {
    Number(f64),
    Text(String),
}

/// Label text → verdict, or one capture group; the last match in the output wins.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ParserKeys {
    /// A number (pointwise), `A`/`B`/`tie` (pairwise), `equal`/`not_equal` (equivalence).
    #[serde(default)]
    pub labels: Option<BTreeMap<String, LabelValueFile>>,
    #[serde(default)]
    pub regex: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PointwiseKeys {
    /// `[low, high]`; a score outside is unparseable.
    #[serde(default)]
    pub range: Option<[f64; 2]>,
    /// Pass/fail judges (range [0, 1]): a generation job drops a conversation
    /// the judge fails, e.g. one whose simulated user `user_fidelity` flags.
    #[serde(default)]
    pub drop_flagged: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PairwiseKeys {
    /// Judge both orders (default true).
    #[serde(default)]
    pub swap_check: Option<bool>,
    /// What two orders that disagree become (default `tie`).
    #[serde(default)]
    pub on_inconsistent: Option<OnInconsistent>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct EquivalenceKeys {
    /// Judge both orders (default true); the second only when the first says equal.
    #[serde(default)]
    pub swap_check: Option<bool>,
}

/// The keys of the judge's mode.
#[derive(Debug, Clone, PartialEq)]
pub enum ModeKeys {
    Pointwise(ParserKeys, PointwiseKeys),
    Pairwise(ParserKeys, PairwiseKeys),
    Equivalence(ParserKeys, EquivalenceKeys),
    /// Reads `[[N: MET]]` lines; no parser of its own.
    Assertions,
}

impl ModeKeys {
    pub fn mode(&self) -> Mode {
        match self {
            ModeKeys::Pointwise(..) => Mode::Pointwise,
            ModeKeys::Pairwise(..) => Mode::Pairwise,
            ModeKeys::Equivalence(..) => Mode::Equivalence,
            ModeKeys::Assertions => Mode::Assertions,
        }
    }

    /// A mode's keys, none of them given.
    pub fn empty(mode: Mode) -> ModeKeys {
        match mode {
            Mode::Pointwise => ModeKeys::Pointwise(ParserKeys::default(), PointwiseKeys::default()),
            Mode::Pairwise => ModeKeys::Pairwise(ParserKeys::default(), PairwiseKeys::default()),
            Mode::Equivalence => {
                ModeKeys::Equivalence(ParserKeys::default(), EquivalenceKeys::default())
            }
            Mode::Assertions => ModeKeys::Assertions,
        }
    }

    pub fn parser(&self) -> Option<&ParserKeys> {
        match self {
            ModeKeys::Pointwise(p, _) | ModeKeys::Pairwise(p, _) | ModeKeys::Equivalence(p, _) => {
                Some(p)
            }
            ModeKeys::Assertions => None,
        }
    }
}

/// The keys a mode reads, besides [`JudgeCommon`]'s.
fn mode_keys(mode: Mode) -> Vec<&'static str> {
    let parser = fields_of::<ParserKeys>();
    let own = match mode {
        Mode::Pointwise => fields_of::<PointwiseKeys>(),
        Mode::Pairwise => fields_of::<PairwiseKeys>(),
        Mode::Equivalence => fields_of::<EquivalenceKeys>(),
        Mode::Assertions => return Vec::new(),
    };
    parser.iter().chain(own).copied().collect()
}

const MODES: [Mode; 4] = [
    Mode::Pointwise,
    Mode::Pairwise,
    Mode::Equivalence,
    Mode::Assertions,
];

/// One judge as written: its common keys and its mode's.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeFile {
    pub common: JudgeCommon,
    pub keys: ModeKeys,
    /// The table as written, kept for what a judging job stores.
    pub written: toml::Table,
}

impl JudgeFile {
    /// A built-in judge with none of its options given.
    pub fn builtin(name: &str, endpoint: &str, builtin: Builtin) -> JudgeFile {
        JudgeFile {
            common: JudgeCommon {
                name: name.to_string(),
                endpoint: endpoint.to_string(),
                builtin: Some(builtin),
                ..JudgeCommon::default()
            },
            keys: ModeKeys::empty(builtin.mode()),
            written: toml::Table::new(),
        }
    }
}

/// Read the `i`-th `[[judges]]` table: its mode from `mode` or `builtin`, then
/// its keys, each key of another mode reported at its line.
pub fn read_judge<'t>(
    source: &Source<'t>,
    field: &str,
    mut node: Node<'t>,
    problems: &mut Vec<Problem>,
) -> Option<JudgeFile> {
    let DeValue::Table(table) = node.get_ref() else {
        problems.push(source.at(
            node.span(),
            field,
            "is not a table; write [[judges]] with name, endpoint and builtin or template",
        ));
        return None;
    };
    let text = |key: &str| match table.get(key).map(|v| v.get_ref()) {
        Some(DeValue::String(s)) => Some(s.to_string()),
        _ => None,
    };
    // The tag: `mode`, else the built-in judge's. Wrong values are reported
    // when the common keys are read below.
    let mode = text("mode")
        .and_then(|m| MODES.into_iter().find(|mode| mode.as_str() == m))
        .or_else(|| {
            text("builtin")
                .and_then(|b| Builtin::parse(&b))
                .map(Builtin::mode)
        });
    let common_keys = fields_of::<JudgeCommon>();
    let before = problems.len();
    let own: Vec<&str> = mode.map(mode_keys).unwrap_or_default();
    let known: Vec<&str> = common_keys.iter().chain(&own).copied().collect();
    source.drop_unknown_keys(
        field,
        &mut node,
        &known,
        &|key| {
            let modes: Vec<&str> = MODES
                .into_iter()
                .filter(|m| mode_keys(*m).contains(&key))
                .map(Mode::as_str)
                .collect();
            match (mode, modes.is_empty()) {
                (Some(mode), false) => Some(format!(
                    "`{key}` applies to {} judges only; this judge is {}, so remove it",
                    modes.join(" and "),
                    mode.as_str()
                )),
                (None, false) => Some(format!(
                    "`{key}` applies to {} judges; give the judge's mode first (mode = \
                     \"pointwise\", \"pairwise\", \"equivalence\" or \"assertions\", or a \
                     builtin)",
                    modes.join(" and ")
                )),
                (_, true) => {
                    let all: Vec<&str> = MODES
                        .into_iter()
                        .flat_map(mode_keys)
                        .chain(common_keys.iter().copied())
                        .collect();
                    Some(unknown_key_message(key, &all))
                }
            }
        },
        problems,
    );
    let common: Option<JudgeCommon> = source.deserialize(field, &node, problems);
    let keys = match common.as_ref().and_then(|c| c.mode).or(mode) {
        // Reported below: a mode, or builtin/template, is missing.
        None => None,
        Some(Mode::Pointwise) => Some(ModeKeys::Pointwise(
            source.deserialize(field, &node, problems)?,
            source.deserialize(field, &node, problems)?,
        )),
        Some(Mode::Pairwise) => Some(ModeKeys::Pairwise(
            source.deserialize(field, &node, problems)?,
            source.deserialize(field, &node, problems)?,
        )),
        Some(Mode::Equivalence) => Some(ModeKeys::Equivalence(
            source.deserialize(field, &node, problems)?,
            source.deserialize(field, &node, problems)?,
        )),
        Some(Mode::Assertions) => Some(ModeKeys::Assertions),
    };
    if problems.len() != before {
        return None;
    }
    let common = common?;
    let written: toml::Table = source.deserialize(field, &node, problems)?;
    let Some(keys) = keys else {
        // No mode: say what is missing, with what else is wrong with the
        // keys every judge has.
        let at = |f: &str| child(field, f);
        problems.extend(
            super::definition::common_problems(&common, &at)
                .into_iter()
                .map(|p| Problem {
                    file: source.file.clone(),
                    ..p
                }),
        );
        if common.template.is_none() && common.builtin.is_none() {
            problems.push(Problem::at_field(
                &source.file,
                &at("template"),
                format!(
                    "is missing; give template = \"judges/mine.tera\" (relative to this \
                     file) with mode = ..., or builtin = one of {}",
                    Builtin::names()
                ),
            ));
        } else {
            problems.push(Problem::at_field(
                &source.file,
                &at("mode"),
                format!(
                    "is missing; a template judge says its mode: \"pointwise\", \"pairwise\", \
                     \"equivalence\" or \"assertions\" (or give builtin = one of {})",
                    Builtin::names()
                ),
            ));
        }
        return None;
    };
    Some(JudgeFile {
        common,
        keys,
        written,
    })
}

/// Every `[[judges]]` table of `node` (an array), read.
fn read_judges<'t>(
    source: &Source<'t>,
    node: Node<'t>,
    problems: &mut Vec<Problem>,
) -> Vec<(usize, JudgeFile)> {
    let span = node.span();
    match node.into_inner() {
        DeValue::Array(items) => items
            .into_iter()
            .enumerate()
            .filter_map(|(i, item)| {
                read_judge(source, &format!("judges[{i}]"), item, problems).map(|j| (i, j))
            })
            .collect(),
        _ => {
            problems.push(source.at(
                span,
                "judges",
                "is not a list of tables; write each judge as a [[judges]] table",
            ));
            Vec::new()
        }
    }
}

/// A separate judges file as stored for a judging job: its endpoints and
/// judges with every path absolute and operator endpoints resolved.
#[derive(Debug, Serialize)]
struct JudgesSnapshot {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    endpoints: BTreeMap<String, EndpointTable>,
    judges: Vec<toml::Table>,
}

/// A loaded judges file: its judges and the endpoints it defines.
#[derive(Debug, Clone)]
pub struct JudgeSet {
    pub judges: Vec<Judge>,
    pub endpoints: BTreeMap<String, EndpointConfig>,
    /// The file as a judging job should keep it: template paths absolute,
    /// operator endpoints resolved to the servers they name (so a job read
    /// back needs no operator endpoints file).
    pub resolved: String,
}

/// Read and validate a `judges.toml`; template paths are relative to its folder.
/// Every problem is reported at once.
pub fn load_judges_file(path: &Path) -> Result<JudgeSet, Vec<Problem>> {
    let text = crate::regular_file::read_to_string(path).map_err(|e| {
        vec![Problem::in_file(
            path,
            format!("cannot read the judges file: {e}"),
        )]
    })?;
    load_judges_text(path, &text, &folder_of(path))
}

/// [`load_judges_file`] for judges TOML that is not in a file (e.g. sent to
/// the service and stored): problems name `label` as their file; template
/// paths are relative to `base`.
pub fn load_judges_text(label: &Path, text: &str, base: &Path) -> Result<JudgeSet, Vec<Problem>> {
    load_judges_with(label, text, base, Trust::Local)
}

/// [`load_judges_text`] with the trust the text's author has: judges sent to
/// the service name templates inside its data root and endpoints without keys.
pub fn load_judges_with(
    label: &Path,
    text: &str,
    base: &Path,
    trust: Trust<'_>,
) -> Result<JudgeSet, Vec<Problem>> {
    let path = label;
    let source = Source::toml(path, text);
    let mut root = source.parse()?;
    let mut problems = Vec::new();
    let known = ["endpoints", "judges"];
    let mut tables = Tables::take(&mut root, &known);
    for (key, _) in root.iter() {
        problems.push(source.at(
            key.span(),
            key.get_ref(),
            unknown_key_message(key.get_ref(), &known),
        ));
    }
    let endpoints = match tables.optional("endpoints") {
        Some(node) => read_endpoints(&source, node, trust, &mut problems),
        None => Endpoints::default(),
    };
    let files = match tables.optional("judges") {
        Some(node) => read_judges(&source, node, &mut problems),
        None => Vec::new(),
    };
    if files.is_empty() && problems.is_empty() {
        problems.push(Problem::in_file(
            path,
            "no judges are defined; add e.g. [[judges]] with name = \"helpful\", \
             endpoint = \"judge\", builtin = \"helpfulness\"",
        ));
    }
    let judges = validate_all(path, base, trust, &files, &mut problems);
    if !endpoints.names.is_empty() {
        problems.extend(unknown_endpoints(path, &judges, |name| {
            endpoints.names.iter().any(|n| n == name)
        }));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let resolved = JudgesSnapshot {
        endpoints: endpoints.snapshots,
        judges: files
            .iter()
            .zip(&judges)
            .map(|((_, file), judge)| stored_table(file, judge))
            .collect(),
    };
    let resolved = toml::to_string(&resolved).map_err(|e| {
        vec![Problem::in_file(
            path,
            format!("cannot store the judges: {e}"),
        )]
    })?;
    Ok(JudgeSet {
        judges,
        endpoints: endpoints.configs,
        resolved,
    })
}

/// A validated judge as a table that reads back to the same judge.
fn stored_table(file: &JudgeFile, judge: &Judge) -> toml::Table {
    let mut table = file.written.clone();
    if judge.builtin.is_none() {
        table.insert(
            "template".into(),
            toml::Value::String(judge.template.file.display().to_string()),
        );
    }
    table
}

/// The `[[judges]]` of a job config's `text` (read from `path`, template
/// paths relative to `base`). A job without judges gives an empty list.
pub fn judges_in_job_config(
    path: &Path,
    text: &str,
    base: &Path,
) -> Result<Vec<Judge>, Vec<Problem>> {
    judges_in_source(&Source::toml(path, text), base)
}

fn judges_in_source(source: &Source<'_>, base: &Path) -> Result<Vec<Judge>, Vec<Problem>> {
    let mut root = source.parse()?;
    let mut problems = Vec::new();
    let files = match Source::take(&mut root, "judges") {
        Some((_, node)) => read_judges(source, node, &mut problems),
        None => Vec::new(),
    };
    let judges = validate_all(&source.file, base, Trust::Local, &files, &mut problems);
    if problems.is_empty() {
        Ok(judges)
    } else {
        Err(problems)
    }
}

/// A loaded job's `[[judges]]`, validated, each problem at its line of the
/// job's config (or of its stored snapshot).
pub fn judges_of_job(job: &crate::config::Job) -> Result<Vec<Judge>, Vec<Problem>> {
    let source = if job.text_is_rendered {
        Source::rendered(&job.source, &job.text)
    } else {
        Source::toml(&job.source, &job.text)
    };
    judges_in_source(&source, &job.base)
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
    trust: Trust<'_>,
    files: &[(usize, JudgeFile)],
    problems: &mut Vec<Problem>,
) -> Vec<Judge> {
    let mut judges = Vec::new();
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for (i, file) in files {
        let name = file.common.name.as_str();
        if !name.is_empty() && !names.insert(name) {
            problems.push(Problem::at_field(
                path,
                &format!("judges[{i}].name"),
                format!("judge name '{name}' is used twice; each judge needs its own name"),
            ));
        }
        match Judge::from_file(file, *i, path, base, trust) {
            Ok(judge) => judges.push(judge),
            Err(more) => problems.extend(more),
        }
    }
    judges
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
        assert_eq!(set.endpoints["judge"].settings.model, "gpt-judge");
        assert_eq!(set.judges.len(), 2);
        assert_eq!(set.judges[0].samples, 3);
        assert_eq!(
            set.judges[1].range.map(|r| (r.low, r.high)),
            Some((0.0, 5.0))
        );
        // What a judging job keeps reads back to the same judges.
        let again = load_judges_text(Path::new("stored"), &set.resolved, Path::new("/")).unwrap();
        assert_eq!(again.judges.len(), 2);
        assert_eq!(
            again.judges[1].config_hash("m"),
            set.judges[1].config_hash("m")
        );
    }

    #[test]
    fn two_typos_in_a_judge_table_are_each_reported_at_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "judges.toml",
            "[[judges]]\nname = \"h\"\nendpoint = \"e\"\nbuiltin = \"helpfulness\"\nswapcheck = true\nsample = 2\n",
        );
        let problems = load_judges_file(&path).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].location.as_deref(), Some("line 6, column 1"));
        assert!(
            problems[0].message.contains("did you mean `samples`"),
            "{problems:?}"
        );
        assert_eq!(problems[1].location.as_deref(), Some("line 5, column 1"));
        assert!(problems[1].message.contains("swapcheck"), "{problems:?}");
    }

    #[test]
    fn an_option_of_another_mode_is_reported_with_the_modes_it_belongs_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "judges.toml",
            "[[judges]]\nname = \"h\"\nendpoint = \"e\"\nbuiltin = \"helpfulness\"\nswap_check = true\n",
        );
        let problems = load_judges_file(&path).unwrap_err();
        assert_eq!(problems[0].location.as_deref(), Some("line 5, column 1"));
        assert!(
            problems[0].message.contains(
                "applies to pairwise and equivalence judges only; this judge is pointwise"
            ),
            "{problems:?}"
        );
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
            problems
                .iter()
                .any(|p| p.message.contains("pairwise_preference")),
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
    fn judges_in_a_job_config_keep_their_line_numbers() {
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
[[judges]]
name = "b"
endpoint = "e"
builtin = "helpfulness"
sample = 3
"#;
        let problems =
            judges_in_job_config(Path::new("job.toml"), text, Path::new("/")).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].location.as_deref(), Some("line 15, column 1"));
        assert!(problems[0].message.contains("unknown field `sample`"));
        let judges = judges_in_job_config(
            Path::new("job.toml"),
            &text.replace("sample = 3", ""),
            Path::new("/"),
        )
        .unwrap();
        assert!(!judges[0].swap_check);
        assert!(
            judges_in_job_config(Path::new("job.toml"), "name = \"x\"", Path::new("/"))
                .unwrap()
                .is_empty()
        );
    }
}
