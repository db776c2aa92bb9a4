//! Loading personas (a directory of `*.toml`, or a `.jsonl` of many) and scenarios
//! (a `.jsonl`), reporting every problem at once with its file and line.
//!
//! Parsing stops at the first error inside one TOML file or one JSONL line (that is
//! serde's limit), but every file and every line is still read, so one run of
//! `sparring validate` lists all broken files and lines. Semantic checks (empty ids,
//! duplicate ids, knob weights, `communicate` without facts) run on everything that
//! parsed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use toml::de::{DeTable, DeValue};

use crate::diagnostics::document::{Node, Source};
use crate::diagnostics::problem::{line_col, Problem};
use crate::jsonl::JsonlReader;
use crate::verify::Component;

use super::{Persona, Scenario};

/// Load personas from a directory (every `*.toml` in it, one persona per file, in
/// file-name order), a single `.toml` file, or a `.jsonl` file (one persona per
/// line; blank lines are skipped).
pub fn load_personas(path: &Path) -> Result<Vec<Persona>, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut loaded: Vec<Located<Persona>> = Vec::new();

    if path.is_dir() {
        let files = match toml_files_in(path) {
            Ok(files) => files,
            Err(problem) => return Err(vec![problem]),
        };
        if files.is_empty() {
            return Err(vec![Problem::in_file(
                path,
                "no personas found: the directory has no `*.toml` files; add one file per \
                 persona (e.g. `retired_teacher.toml` with `id`, `name`, `background`, \
                 `speaking_style`), or point to a `.jsonl` file of personas",
            )]);
        }
        for file in files {
            load_persona_toml(&file, &mut loaded, &mut problems);
        }
    } else if has_extension(path, "jsonl") {
        if let Some(text) = read(path, &mut problems) {
            load_jsonl(
                path,
                &text,
                &mut loaded,
                &mut problems,
                |persona: &Persona| {
                    persona_issues(persona)
                        .into_iter()
                        .map(|i| i.message)
                        .collect()
                },
            );
            if text.trim().is_empty() {
                problems.push(Problem::in_file(
                    path,
                    "no personas found: the file is empty; write one JSON object per line, \
                     e.g. {\"id\": \"night_nurse\", \"name\": \"Dana\", \"background\": \"...\", \
                     \"speaking_style\": \"...\"}",
                ));
            }
        }
    } else if has_extension(path, "toml") && path.is_file() {
        load_persona_toml(path, &mut loaded, &mut problems);
    } else if !path.exists() {
        problems.push(Problem::in_file(
            path,
            "does not exist; expected a directory of `*.toml` personas or a `.jsonl` file",
        ));
    } else {
        problems.push(Problem::in_file(
            path,
            "is not a persona source; expected a directory of `*.toml` personas, a `.toml` \
             file or a `.jsonl` file",
        ));
    }

    problems.extend(duplicate_ids("persona", &loaded, |p| &p.id));
    if problems.is_empty() {
        Ok(loaded.into_iter().map(|l| l.item).collect())
    } else {
        Err(problems)
    }
}

/// The line of each scenario of a scenarios JSONL file, by id, for problems
/// found after loading (e.g. a gold action a tool's schema refuses); empty
/// when the file cannot be read.
pub fn scenario_lines(path: &Path) -> HashMap<String, usize> {
    #[derive(serde::Deserialize)]
    struct Id {
        id: String,
    }
    let Ok(text) = crate::regular_file::read_to_string(path) else {
        return HashMap::new();
    };
    let mut lines = HashMap::new();
    let mut reader = JsonlReader::new(text.as_bytes());
    while let Some(next) = reader.next_line() {
        if let Ok((line, json)) = next {
            if let Ok(record) = serde_json::from_str::<Id>(json) {
                lines.insert(record.id, line);
            }
        }
    }
    lines
}

/// Load scenarios from a JSONL file: one scenario per line, blank lines skipped.
pub fn load_scenarios(path: &Path) -> Result<Vec<Scenario>, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut loaded: Vec<Located<Scenario>> = Vec::new();

    if path.is_dir() {
        return Err(vec![Problem::in_file(
            path,
            "is a directory; expected a `.jsonl` file with one scenario per line",
        )]);
    }
    let Some(text) = read(path, &mut problems) else {
        return Err(problems);
    };
    load_jsonl(path, &text, &mut loaded, &mut problems, scenario_issues);
    if text.trim().is_empty() {
        problems.push(Problem::in_file(
            path,
            "no scenarios found: the file is empty; write one JSON object per line with \
             `id` and `user` ({\"reason_for_contact\": ..., \"known_info\": ..., \
             \"task_instructions\": ...})",
        ));
    }

    problems.extend(duplicate_ids("scenario", &loaded, |s| &s.id));
    let mut scenarios: Vec<Scenario> = loaded.into_iter().map(|l| l.item).collect();
    problems.extend(super::probe::apply_strategies(path, &mut scenarios));
    if problems.is_empty() {
        Ok(scenarios)
    } else {
        Err(problems)
    }
}

/// An item with where it was defined, for duplicate-id messages.
struct Located<T> {
    item: T,
    file: PathBuf,
    /// Line of the `id` (TOML) or of the whole record (JSONL), when known.
    id_line: Option<usize>,
}

impl<T> Located<T> {
    fn place(&self) -> String {
        match self.id_line {
            Some(line) => format!("{} line {line}", self.file.display()),
            None => self.file.display().to_string(),
        }
    }
}

/// A semantic problem in a parsed persona, with the field it is about so a TOML
/// loader can point at the key's line.
struct Issue {
    field: Vec<String>,
    message: String,
}

impl Issue {
    fn new(field: &[&str], message: String) -> Self {
        Issue {
            field: field.iter().map(|s| s.to_string()).collect(),
            message,
        }
    }
}

/// What the persona loader finds wrong with one parsed persona.
pub fn persona_problems(persona: &Persona) -> Vec<String> {
    persona_issues(persona)
        .into_iter()
        .map(|i| i.message)
        .collect()
}

fn persona_issues(persona: &Persona) -> Vec<Issue> {
    let mut issues = Vec::new();
    if persona.id.trim().is_empty() {
        issues.push(Issue::new(
            &["id"],
            "`id` is empty; give the persona a short unique id such as `night_nurse`".into(),
        ));
    } else if persona.id.chars().any(|c| c.is_whitespace() || c == '/') {
        issues.push(Issue::new(
            &["id"],
            format!(
                "`id` {:?} contains whitespace or `/`; ids are used in item keys, so use \
                 letters, digits, `_`, `-` or `.` (e.g. {:?})",
                persona.id,
                persona
                    .id
                    .trim()
                    .replace(|c: char| c.is_whitespace() || c == '/', "_")
            ),
        ));
    }
    if persona.name.trim().is_empty() {
        issues.push(Issue::new(
            &["name"],
            "`name` is empty; give the name the simulated user goes by, e.g. \"Margaret Olsen\""
                .into(),
        ));
    }
    for (knob, values) in &persona.knobs {
        if values.is_empty() {
            issues.push(Issue::new(
                &["knobs", knob],
                format!(
                    "knob `{knob}` has no values; give at least one value with a positive \
                     weight, e.g. `{knob} = {{ normal = 1.0 }}`, or remove the knob"
                ),
            ));
        }
        for (value, weight) in values {
            if !(weight.is_finite() && *weight > 0.0) {
                issues.push(Issue::new(
                    &["knobs", knob, value],
                    format!(
                        "knob `{knob}` value `{value}` has weight {weight}; weights must be \
                         finite numbers greater than 0 (they are relative: \
                         {{ a = 1, b = 3 }} draws `b` three times as often as `a`); \
                         remove the value instead of giving it weight 0"
                    ),
                ));
            }
        }
    }
    issues
}

/// What the scenario loader finds wrong with one parsed scenario (its own
/// fields; not duplicates, which need the whole file).
pub fn scenario_issues(scenario: &Scenario) -> Vec<String> {
    let mut issues = Vec::new();
    if scenario.id.trim().is_empty() {
        issues.push(
            "`id` is empty; give the scenario a unique id such as `retail_exchange_001`".into(),
        );
    }
    if let Some(opening) = &scenario.user.opening {
        if opening.trim().is_empty() {
            issues.push(
                "`user.opening` is empty; write the user's first message (e.g. the question \
                 to answer), or leave the field out"
                    .into(),
            );
        }
    } else if scenario.user.reason_for_contact.trim().is_empty() {
        issues.push(
            "`user.reason_for_contact` is empty; say in the user's own terms why they are \
             contacting support, e.g. \"the blender I ordered arrived broken\""
                .into(),
        );
    }
    let criteria = &scenario.evaluation;
    if criteria.reward_basis.contains(&Component::Communicate) && criteria.communicate.is_empty() {
        issues.push(
            "`evaluation.reward_basis` includes `communicate` but `evaluation.communicate` \
             lists no facts; list the facts the agent must state (e.g. [\"$54.04\"]) or \
             remove `communicate` from `reward_basis`"
                .into(),
        );
    }
    issues.extend(crate::verify::rules::problems(criteria));
    issues.extend(super::probe::probe_issues(scenario));
    for (i, fact) in criteria.communicate.iter().enumerate() {
        if fact.trim().is_empty() {
            issues.push(format!(
                "`evaluation.communicate[{i}]` is empty; an empty fact matches every \
                 conversation, so remove it or write the fact the agent must state"
            ));
        }
    }
    if criteria
        .expected_answer
        .as_deref()
        .is_some_and(|a| a.trim().is_empty())
    {
        issues.push(
            "`evaluation.expected_answer` is empty; write the answer the agent should \
             reach (e.g. \"PW5005336661\") or leave the field out"
                .into(),
        );
    }
    for (i, assertion) in criteria.nl_assertions.iter().enumerate() {
        if assertion.trim().is_empty() {
            issues.push(format!(
                "`evaluation.nl_assertions[{i}]` is empty; write a statement about the \
                 conversation that a judge can call met or not met, or remove it"
            ));
        }
    }
    issues
}

fn duplicate_ids<T>(
    kind: &str,
    loaded: &[Located<T>],
    id_of: impl Fn(&T) -> &String,
) -> Vec<Problem> {
    let mut first: HashMap<&str, &Located<T>> = HashMap::new();
    let mut problems = Vec::new();
    for located in loaded {
        let id = id_of(&located.item);
        if id.trim().is_empty() {
            continue; // already reported as empty
        }
        match first.get(id.as_str()) {
            Some(earlier) => {
                let message = format!(
                    "duplicate {kind} id `{id}`: already defined at {}; ids must be unique, \
                     rename one of them",
                    earlier.place()
                );
                problems.push(match located.id_line {
                    Some(line) => Problem::at_line(&located.file, line, message),
                    None => Problem::in_file(&located.file, message),
                });
            }
            None => {
                first.insert(id, located);
            }
        }
    }
    problems
}

fn load_persona_toml(file: &Path, loaded: &mut Vec<Located<Persona>>, problems: &mut Vec<Problem>) {
    let Some(text) = read(file, problems) else {
        return;
    };
    if text.trim().is_empty() {
        problems.push(Problem::in_file(
            file,
            "the file is empty; a persona needs at least `id`, `name`, `background` and \
             `speaking_style`",
        ));
        return;
    }
    // Every unknown key of the persona is reported, each at its line.
    let source = Source::toml(file, &text);
    let persona = match source.parse() {
        Ok(table) => {
            let node = Node::new(0..text.len(), DeValue::Table(table));
            source.typed::<Persona>("", node, problems)
        }
        Err(more) => {
            problems.extend(more);
            None
        }
    };
    let Some(persona) = persona else {
        return;
    };
    for issue in persona_issues(&persona) {
        problems.push(match toml_key_line(&text, &issue.field) {
            Some(line) => Problem::at_line(file, line, issue.message),
            None => Problem::at_field(file, &issue.field.join("."), issue.message),
        });
    }
    let id_line = toml_key_line(&text, &["id".to_string()]);
    loaded.push(Located {
        item: persona,
        file: file.to_path_buf(),
        id_line,
    });
}

/// Line of the deepest key of `path` that exists in the TOML document.
fn toml_key_line(text: &str, path: &[String]) -> Option<usize> {
    let document = DeTable::parse(text).ok()?;
    let mut table = document.get_ref();
    let mut line = None;
    for key in path {
        let (found_key, value) = table.iter().find(|(k, _)| k.get_ref().as_ref() == key)?;
        line = Some(line_col(text, found_key.span().start).0);
        match value.get_ref() {
            DeValue::Table(inner) => table = inner,
            _ => break,
        }
    }
    line
}

/// Every line of a JSONL text as a `T`, each with its semantic `issues`
/// reported at its line; lines that do not parse become problems too.
fn load_jsonl<T: DeserializeOwned>(
    path: &Path,
    text: &str,
    loaded: &mut Vec<Located<T>>,
    problems: &mut Vec<Problem>,
    issues: impl Fn(&T) -> Vec<String>,
) {
    let mut reader = JsonlReader::new(text.as_bytes());
    while let Some(next) = reader.next_line() {
        let (line, json) = match next {
            Ok(read) => read,
            Err(e) => {
                problems.push(Problem::unreadable_line(path, &e));
                continue;
            }
        };
        match parse_json_line::<T>(path, line, json) {
            Ok(item) => {
                for issue in issues(&item) {
                    problems.push(Problem::at_line(path, line, issue));
                }
                loaded.push(Located {
                    item,
                    file: path.to_path_buf(),
                    id_line: Some(line),
                });
            }
            Err(problem) => problems.push(problem),
        }
    }
}

fn parse_json_line<T: DeserializeOwned>(
    file: &Path,
    line: usize,
    json: &str,
) -> Result<T, Problem> {
    serde_json::from_str::<T>(json).map_err(|err| {
        let message = crate::diagnostics::problem::json_message(&err);
        let location = if err.column() > 0 {
            format!("line {line}, column {}", err.column())
        } else {
            format!("line {line}")
        };
        Problem::new(file, Some(location), message)
    })
}

fn read(path: &Path, problems: &mut Vec<Problem>) -> Option<String> {
    match crate::regular_file::read_to_string(path) {
        // Editors on Windows may start a file with a byte-order mark; neither
        // serde_json nor a reader of the file cares about it.
        Ok(text) => Some(match text.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_string(),
            None => text,
        }),
        Err(err) => {
            problems.push(Problem::in_file(
                path,
                format!("cannot read the file: {err}"),
            ));
            None
        }
    }
}

fn has_extension(path: &Path, ext: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

fn toml_files_in(dir: &Path) -> Result<Vec<PathBuf>, Problem> {
    let entries = std::fs::read_dir(dir)
        .map_err(|err| Problem::in_file(dir, format!("cannot list the directory: {err}")))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry
            .map_err(|err| Problem::in_file(dir, format!("cannot list the directory: {err}")))?;
        let path = entry.path();
        if path.is_file() && has_extension(&path, "toml") {
            files.push(path);
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"id = "night_nurse"
name = "Dana Whitfield"
background = "Works nights in an ICU."
traits = ["tired", "direct"]
speaking_style = "Short sentences, no greetings."

[knobs.verbosity]
terse = 3
normal = 1
"#;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn persona_json(id: &str) -> String {
        serde_json::json!({
            "id": id, "name": "N", "background": "B", "speaking_style": "S",
            "knobs": {"verbosity": {"terse": 1.0}}
        })
        .to_string()
    }

    fn scenario_json(id: &str) -> String {
        serde_json::json!({
            "id": id,
            "user": {"reason_for_contact": "R", "known_info": "K", "task_instructions": "T"}
        })
        .to_string()
    }

    fn shipped(path: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
    }

    #[test]
    fn a_directory_of_toml_personas_loads_in_file_name_order() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "b.toml", &GOOD.replace("night_nurse", "b"));
        write(dir.path(), "a.toml", &GOOD.replace("night_nurse", "a"));
        write(dir.path(), "notes.txt", "not a persona");
        let personas = load_personas(dir.path()).unwrap();
        let ids: Vec<_> = personas.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(personas[0].knobs["verbosity"]["terse"], 3.0);
        assert_eq!(personas[0].language, "English");
    }

    #[test]
    fn a_toml_persona_may_carry_attributes_that_stats_reads_strata_from() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("{GOOD}\n[attributes]\ncountry = \"US\"\nage = 71\nretired = true\n");
        write(dir.path(), "p.toml", &text);
        let personas = load_personas(dir.path()).unwrap();
        assert_eq!(
            serde_json::to_value(&personas[0].attributes).unwrap(),
            serde_json::json!({"country": "US", "age": 71, "retired": true})
        );
    }

    #[test]
    fn a_toml_persona_with_an_unknown_field_reports_the_file_and_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let text = GOOD.replace("traits = [", "agee = 71\ntraits = [");
        let file = write(dir.path(), "p.toml", &text);
        let problems = load_personas(dir.path()).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].file, file);
        assert_eq!(problems[0].location.as_deref(), Some("line 4, column 1"));
        assert!(problems[0].message.contains("unknown field `agee`"));
        assert!(problems[0].message.contains("known here: "));
        // A second one is reported in the same pass.
        write(
            dir.path(),
            "p.toml",
            &text.replace("traits = [", "speking_style = \"x\"\ntraits = ["),
        );
        let problems = load_personas(dir.path()).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[1]
                .message
                .contains("did you mean `speaking_style`"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_toml_persona_with_a_wrong_type_reports_the_line_of_the_value() {
        let dir = tempfile::tempdir().unwrap();
        let text = GOOD.replace(r#"traits = ["tired", "direct"]"#, r#"traits = "tired""#);
        write(dir.path(), "p.toml", &text);
        let problems = load_personas(dir.path()).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        let location = problems[0].location.as_deref().unwrap();
        assert!(location.starts_with("line 4,"), "{location}");
        assert!(problems[0].message.contains("invalid type"), "{problems:?}");
    }

    #[test]
    fn a_toml_persona_missing_a_field_names_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let text = GOOD.replace("name = \"Dana Whitfield\"\n", "");
        write(dir.path(), "p.toml", &text);
        let problems = load_personas(dir.path()).unwrap_err();
        assert!(
            problems[0].message.contains("missing field `name`"),
            "{problems:?}"
        );
    }

    #[test]
    fn every_broken_file_of_a_directory_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.toml", "id = ");
        write(dir.path(), "b.toml", GOOD);
        write(
            dir.path(),
            "c.toml",
            &GOOD
                .replace("Dana Whitfield", "")
                .replace("night_nurse", "c"),
        );
        let problems = load_personas(dir.path()).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].file.ends_with("a.toml"));
        assert!(problems[1].file.ends_with("c.toml"));
        assert_eq!(problems[1].location.as_deref(), Some("line 2"));
        assert!(problems[1].message.contains("`name` is empty"));
    }

    #[test]
    fn knob_problems_point_at_the_knob_line() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("{GOOD}\n[knobs.patience]\n\n[knobs.typos]\nnone = 1\nmany = -2\n");
        write(dir.path(), "p.toml", &text);
        let problems = load_personas(dir.path()).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].location.as_deref(), Some("line 11"));
        assert!(problems[0]
            .message
            .contains("knob `patience` has no values"));
        assert_eq!(problems[1].location.as_deref(), Some("line 15"));
        assert!(problems[1].message.contains("`many` has weight -2"));
        assert!(problems[1].message.contains("greater than 0"));
    }

    #[test]
    fn a_weight_that_is_not_finite_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "p.toml",
            &GOOD.replace("normal = 1", "normal = inf"),
        );
        let problems = load_personas(dir.path()).unwrap_err();
        assert!(problems[0].message.contains("weight inf"), "{problems:?}");
    }

    #[test]
    fn duplicate_persona_ids_name_both_places() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.toml", GOOD);
        write(dir.path(), "b.toml", GOOD);
        let problems = load_personas(dir.path()).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].file.ends_with("b.toml"));
        assert_eq!(problems[0].location.as_deref(), Some("line 1"));
        assert!(problems[0]
            .message
            .contains("duplicate persona id `night_nurse`"));
        assert!(
            problems[0].message.contains("a.toml line 1"),
            "{problems:?}"
        );
    }

    #[test]
    fn an_empty_directory_is_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let problems = load_personas(dir.path()).unwrap_err();
        assert!(problems[0].message.contains("no personas found"));
    }

    #[test]
    fn a_jsonl_persona_file_with_bad_lines_3_and_5_reports_both() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [
            persona_json("a"),
            String::new(),
            r#"{"id": "b", "name": "N", "background": "B", "speaking_style": "S", "agee": 3}"#
                .to_string(),
            persona_json("c"),
            r#"{"id": "d", "name": "N""#.to_string(),
            persona_json("e"),
        ];
        let file = write(dir.path(), "crowd.jsonl", &lines.join("\n"));
        let problems = load_personas(&file).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        let location = problems[0].location.as_deref().unwrap();
        assert!(location.starts_with("line 3, column "), "{location}");
        assert!(problems[0].message.starts_with("unknown field `agee`"));
        assert!(!problems[0].message.contains("at line 1"), "{problems:?}");
        assert!(problems[1]
            .location
            .as_deref()
            .unwrap()
            .starts_with("line 5"));
    }

    #[test]
    fn a_jsonl_scenario_file_with_bad_lines_3_and_5_reports_both() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [
            scenario_json("s1"),
            scenario_json("s2"),
            r#"{"id": "s3", "user": {"reason_for_contact": "R", "known_info": 3}}"#.to_string(),
            scenario_json("s4"),
            r#"{"id": "s5", "user": 7}"#.to_string(),
        ];
        let file = write(dir.path(), "scenarios.jsonl", &lines.join("\n"));
        let problems = load_scenarios(&file).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0]
            .location
            .as_deref()
            .unwrap()
            .starts_with("line 3"));
        assert!(problems[0].message.contains("invalid type"), "{problems:?}");
        assert!(problems[1]
            .location
            .as_deref()
            .unwrap()
            .starts_with("line 5"));
        assert!(problems[1].message.contains("invalid type"));
    }

    #[test]
    fn duplicate_scenario_ids_name_both_lines() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [
            scenario_json("s1"),
            scenario_json("s2"),
            scenario_json("s1"),
        ];
        let file = write(dir.path(), "scenarios.jsonl", &lines.join("\n"));
        let problems = load_scenarios(&file).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].location.as_deref(), Some("line 3"));
        assert!(problems[0].message.contains("duplicate scenario id `s1`"));
        assert!(problems[0].message.contains("scenarios.jsonl line 1"));
    }

    #[test]
    fn duplicate_persona_ids_in_jsonl_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [persona_json("x"), persona_json("x")];
        let file = write(dir.path(), "crowd.jsonl", &lines.join("\n"));
        let problems = load_personas(&file).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].message.contains("duplicate persona id `x`"));
    }

    #[test]
    fn scenario_semantic_checks_say_what_would_be_right() {
        let dir = tempfile::tempdir().unwrap();
        let bad = serde_json::json!({
            "id": " ",
            "user": {"reason_for_contact": "", "known_info": "K", "task_instructions": "T"},
            "evaluation": {"reward_basis": ["db", "communicate"]}
        });
        let file = write(dir.path(), "s.jsonl", &bad.to_string());
        let problems = load_scenarios(&file).unwrap_err();
        let messages: Vec<_> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages[0].contains("`id` is empty"));
        assert!(messages[1].contains("`user.reason_for_contact` is empty"));
        assert!(messages[2].contains("lists no facts"));
        assert!(problems
            .iter()
            .all(|p| p.location.as_deref() == Some("line 1")));
    }

    #[test]
    fn judge_criteria_are_read_and_empty_ones_are_problems() {
        let dir = tempfile::tempdir().unwrap();
        let good = serde_json::json!({
            "id": "s1",
            "user": {"reason_for_contact": "R", "known_info": "K", "task_instructions": "T"},
            "evaluation": {"expected_answer": "PW5005336661",
                           "nl_assertions": ["The agent gives the tracking number."]}
        });
        let file = write(dir.path(), "s.jsonl", &good.to_string());
        let evaluation = &load_scenarios(&file).unwrap()[0].evaluation;
        assert_eq!(evaluation.expected_answer.as_deref(), Some("PW5005336661"));
        assert_eq!(evaluation.nl_assertions.len(), 1);

        let bad = serde_json::json!({
            "id": "s1",
            "user": {"reason_for_contact": "R", "known_info": "K", "task_instructions": "T"},
            "evaluation": {"expected_answer": " ", "nl_assertions": ["ok", ""]}
        });
        let file = write(dir.path(), "s.jsonl", &bad.to_string());
        let problems = load_scenarios(&file).unwrap_err();
        let messages: Vec<_> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(messages[0].contains("`evaluation.expected_answer` is empty"));
        assert!(messages[1].contains("`evaluation.nl_assertions[1]` is empty"));
    }

    #[test]
    fn an_empty_jsonl_file_is_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "s.jsonl", "\n\n");
        assert!(load_scenarios(&file).unwrap_err()[0]
            .message
            .contains("no scenarios found"));
        let file = write(dir.path(), "p.jsonl", "");
        assert!(load_personas(&file).unwrap_err()[0]
            .message
            .contains("no personas found"));
    }

    #[test]
    fn a_byte_order_mark_does_not_break_a_jsonl_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "s.jsonl",
            &format!("\u{feff}{}", scenario_json("s1")),
        );
        assert_eq!(load_scenarios(&file).unwrap()[0].id, "s1");
    }

    #[test]
    fn a_missing_path_is_a_problem_not_a_panic() {
        let problems = load_personas(Path::new("/nonexistent/personas")).unwrap_err();
        assert!(problems[0].message.contains("does not exist"));
        let problems = load_scenarios(Path::new("/nonexistent/s.jsonl")).unwrap_err();
        assert!(problems[0].message.contains("cannot read"));
    }

    #[test]
    fn every_shipped_persona_loads() {
        let personas = load_personas(&shipped("personas")).unwrap_or_else(|problems| {
            panic!(
                "{}",
                problems
                    .iter()
                    .map(|p| p.to_string() + "\n")
                    .collect::<String>()
            )
        });
        assert!(personas.len() >= 10, "{} personas", personas.len());
        assert!(personas.iter().all(|p| !p.knobs.is_empty()));

        let crowd = load_personas(&shipped("personas/crowd.jsonl")).unwrap_or_else(|problems| {
            panic!(
                "{}",
                problems
                    .iter()
                    .map(|p| p.to_string() + "\n")
                    .collect::<String>()
            )
        });
        assert!(crowd.len() >= 25, "{} personas", crowd.len());
        for persona in &crowd {
            assert!(
                !personas.iter().any(|p| p.id == persona.id),
                "crowd persona id `{}` repeats a hand-written one",
                persona.id
            );
        }
    }
}
