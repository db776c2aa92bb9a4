//! `Judge::from_file` as specified: what each field accepts, what it
//! refuses, and where each problem is named.

use std::path::Path;

use regex::Regex;
use toml::de::DeValue;

use super::*;
use crate::diagnostics::document::{Node, Source};
use crate::judge::file::read_judge;

/// Read the table as the third judge of `judges.toml` and validate it.
fn judge_in(dir: &Path, text: &str) -> Result<Judge, Vec<Problem>> {
    let source = Source::toml("judges.toml", text);
    let table = source.parse().unwrap();
    let node = Node::new(0..text.len(), DeValue::Table(table));
    let mut problems = Vec::new();
    match read_judge(&source, "judges[2]", node, &mut problems) {
        Some(file) if problems.is_empty() => {
            Judge::from_file(&file, 2, Path::new("judges.toml"), dir, Trust::Local)
        }
        _ => Err(problems),
    }
}

fn from_toml(toml_text: &str) -> Result<Judge, Vec<Problem>> {
    let dir = std::env::temp_dir().join(format!("sparring-judge-def-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.tera"), "Judge {{ conversation }}").unwrap();
    judge_in(&dir, toml_text)
}

fn locations(problems: &[Problem]) -> Vec<&str> {
    problems
        .iter()
        .map(|p| p.location.as_deref().unwrap_or(""))
        .collect()
}

#[test]
fn every_builtin_judge_loads_with_its_mode_and_defaults() {
    for builtin in Builtin::ALL {
        let judge = Judge::from_builtin(builtin.name(), "judge", builtin).unwrap();
        assert_eq!(judge.mode, builtin.mode());
        assert_eq!(judge.samples, 1);
        assert_eq!(
            judge.swap_check,
            matches!(judge.mode, Mode::Pairwise | Mode::Equivalence)
        );
    }
    let fidelity = Judge::from_builtin("f", "j", Builtin::UserFidelity).unwrap();
    assert_eq!(
        fidelity.range,
        Some(ScoreRange {
            low: 0.0,
            high: 1.0
        })
    );
    let helpful = Judge::from_builtin("h", "j", Builtin::Helpfulness).unwrap();
    assert_eq!(helpful.range.map(|r| (r.low, r.high)), Some((1.0, 10.0)));
    assert_eq!(helpful.aggregate, Aggregate::Mean);
}

#[test]
fn a_builtin_accepts_overrides_of_samples_and_swap_check() {
    let judge = from_toml(
        r#"name = "p"
endpoint = "e"
builtin = "pairwise_preference"
samples = 3
swap_check = false
on_inconsistent = "first"
temperature = 0.7"#,
    )
    .unwrap();
    assert_eq!(judge.samples, 3);
    assert!(!judge.swap_check);
    assert_eq!(judge.on_inconsistent, OnInconsistent::First);
    assert_eq!(judge.temperature, Some(0.7));
}

#[test]
fn a_builtin_refuses_a_parser_of_its_own_and_says_to_copy_the_template() {
    let problems =
        from_toml("name = \"h\"\nendpoint = \"e\"\nbuiltin = \"helpfulness\"\nrange = [0, 5]")
            .unwrap_err();
    assert_eq!(locations(&problems), ["judges[2].range"]);
    assert!(problems[0]
        .message
        .contains("copy prompts/judges/helpfulness.tera"));
    let problems = from_toml(
        "name = \"h\"\nendpoint = \"e\"\nbuiltin = \"helpfulness\"\nmode = \"pointwise\"\nregex = '(x)'",
    )
    .unwrap_err();
    assert_eq!(locations(&problems), ["judges[2].regex"]);
    let problems = from_toml(
        "name = \"h\"\nendpoint = \"e\"\nbuiltin = \"helpfulness\"\nmode = \"equivalence\"",
    )
    .unwrap_err();
    assert_eq!(locations(&problems), ["judges[2].mode"]);
}

#[test]
fn a_template_judge_needs_a_mode_and_a_readable_template() {
    let problems =
        from_toml("name = \"t\"\nendpoint = \"e\"\ntemplate = \"missing.tera\"").unwrap_err();
    assert_eq!(locations(&problems), ["judges[2].mode"]);
    let problems = from_toml(
        "name = \"t\"\nendpoint = \"e\"\ntemplate = \"missing.tera\"\nmode = \"pointwise\"",
    )
    .unwrap_err();
    assert_eq!(locations(&problems), ["judges[2].template"]);
    assert!(problems[0].message.contains("cannot read"));
    let problems = from_toml("name = \"t\"\nendpoint = \"e\"").unwrap_err();
    assert_eq!(locations(&problems), ["judges[2].template"]);
    assert!(problems[0].message.contains("builtin = one of helpfulness"));
}

#[test]
fn a_template_with_a_syntax_error_is_reported_in_the_template_file_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.tera"), "line\n{{ conversation | }}\n").unwrap();
    let problems = judge_in(
        dir.path(),
        "name = \"t\"\nendpoint = \"e\"\ntemplate = \"bad.tera\"\nmode = \"pointwise\"",
    )
    .unwrap_err();
    assert_eq!(problems[0].file, dir.path().join("bad.tera"));
    assert!(problems[0]
        .location
        .as_deref()
        .unwrap()
        .starts_with("line 2"));
}

#[test]
fn labels_must_fit_the_mode_and_cover_both_sides() {
    let problems = from_toml(
        r#"name = "t"
endpoint = "e"
template = "t.tera"
mode = "pairwise"
labels = { "[[A]]" = "A", "[[X]]" = "first" }"#,
    )
    .unwrap_err();
    assert_eq!(
        locations(&problems),
        ["judges[2].labels.\"[[X]]\"", "judges[2].labels"]
    );
    assert!(problems[1].message.contains("no label means B"));
    let judge = from_toml(
        r#"name = "t"
endpoint = "e"
template = "t.tera"
mode = "pointwise"
labels = { "PASS" = 1, "FAIL" = 0 }
drop_flagged = true"#,
    )
    .unwrap();
    assert_eq!(judge.range.map(|r| (r.low, r.high)), Some((0.0, 1.0)));
    assert!(judge.drop_flagged);
}

#[test]
fn a_regex_needs_exactly_one_capture_group() {
    let problems = from_toml(
        r#"name = "t"
endpoint = "e"
template = "t.tera"
mode = "pointwise"
regex = 'Score: \d+'"#,
    )
    .unwrap_err();
    assert_eq!(locations(&problems), ["judges[2].regex"]);
    assert!(problems[0].message.contains("has 0 capture groups"));
    let problems = from_toml(
        "name = \"t\"\nendpoint = \"e\"\ntemplate = \"t.tera\"\nmode = \"pointwise\"\nregex = '(('",
    )
    .unwrap_err();
    assert!(problems[0]
        .message
        .contains("not a valid regular expression"));
}

#[test]
fn options_of_another_mode_cannot_be_written_and_each_is_named_at_its_line() {
    let problems = from_toml(
        r#"name = "t"
endpoint = "e"
template = "t.tera"
mode = "assertions"
swap_check = true
on_inconsistent = "A"
range = [10, 1]
drop_flagged = true"#,
    )
    .unwrap_err();
    assert_eq!(
        locations(&problems),
        [
            "line 8, column 1",
            "line 6, column 1",
            "line 7, column 1",
            "line 5, column 1",
        ]
    );
    assert!(problems
        .iter()
        .all(|p| p.message.contains("this judge is assertions")));
    assert!(problems[3]
        .message
        .contains("applies to pairwise and equivalence judges only"));
}

#[test]
fn values_out_of_range_are_named_by_field() {
    let problems = from_toml(
        r#"name = "bad name"
endpoint = "e"
template = "t.tera"
mode = "assertions"
aggregate = "mean"
samples = 0
max_tokens = 0
temperature = nan"#,
    )
    .unwrap_err();
    assert_eq!(
        locations(&problems),
        [
            "judges[2].name",
            "judges[2].samples",
            "judges[2].aggregate",
            "judges[2].max_tokens",
            "judges[2].temperature",
        ]
    );
    let problems =
        from_toml("name = \"h\"\nendpoint = \"e\"\nbuiltin = \"helpfulness\"\ndrop_flagged = true")
            .unwrap_err();
    assert!(problems[0].message.contains("pass/fail judges"));
}

#[test]
fn the_default_score_regex_compiles() {
    assert!(Regex::new(DEFAULT_SCORE_REGEX).is_ok());
}
