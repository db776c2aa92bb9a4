use std::path::Path;

use super::committee::{CommitteeRule, DEFAULT_MIN_MEAN, DEFAULT_PASS_SCORE};
use super::{from_toml, SynthConfig};
use crate::config::{Problem, Trust};

const HEAD: &str = r#"name = "s"
target = 5
output = "out.jsonl"
[endpoints.generator]
mock = true
model = "mock-synth"
[endpoints.judge]
mock = true
model = "mock-judge"
[environment]
name = "builtin:retail"
"#;

fn load(rest: &str) -> Result<SynthConfig, Vec<Problem>> {
    load_text(&format!("{HEAD}{rest}"))
}

fn load_text(text: &str) -> Result<SynthConfig, Vec<Problem>> {
    from_toml(
        Path::new("SYNTH.toml"),
        text,
        Path::new("/tmp"),
        Trust::Local,
    )
}

fn shown(problems: &[Problem]) -> Vec<String> {
    problems.iter().map(|p| p.to_string()).collect()
}

const THREE: &str = r#"[roles]
generator = "generator"
reviewer = "judge"
[[reviewers]]
name = "r1"
builtin = "blueprint_review"
[[reviewers]]
name = "r2"
builtin = "blueprint_review"
[[reviewers]]
name = "r3"
endpoint = "generator"
builtin = "blueprint_review"
"#;

#[test]
fn three_reviewers_get_the_default_vote_and_roles_reviewer_as_their_default_endpoint() {
    let c = load(THREE).unwrap();
    let committee = c.committee.unwrap();
    let vote = committee.vote;
    assert_eq!(vote.rule, CommitteeRule::Majority);
    assert_eq!(
        (vote.pass_score, vote.min_mean, vote.quorum),
        (DEFAULT_PASS_SCORE, DEFAULT_MIN_MEAN, 2)
    );
    let endpoints: Vec<&str> = committee
        .endpoints
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(endpoints, ["judge", "judge", "generator"]);
    assert_eq!(committee.default_endpoint.as_deref(), Some("judge"));
    assert!(committee.text.contains("[[reviewers]]"));
}

#[test]
fn no_reviewers_is_no_committee() {
    let c = load("[roles]\ngenerator = \"generator\"\n").unwrap();
    assert!(c.committee.is_none());
}

#[test]
fn the_mean_rule_takes_its_numbers_and_a_quorum() {
    let c = load(&format!(
        "{THREE}[committee]\nrule = \"mean\"\nmin_mean = 3.5\npass_score = 3\nquorum = 3\n"
    ))
    .unwrap();
    let vote = c.committee.unwrap().vote;
    assert_eq!(vote.rule, CommitteeRule::Mean);
    assert_eq!((vote.pass_score, vote.min_mean, vote.quorum), (3.0, 3.5, 3));
}

#[test]
fn committee_mistakes_are_each_reported_at_their_line_or_field() {
    // Line 25 is `rule = "avg"`, 26 the typo, 28 the endpoint nobody defined.
    let text = format!(
        "{}[committee]\nrule = \"avg\"\npas_score = 4\n[[reviewers]]\nendpoint = \"jugde\"\nname = \"r4\"\nbuiltin = \"blueprint_review\"\n",
        THREE.replace("reviewer = \"judge\"\n", "")
    );
    let problems = shown(&load(&text).unwrap_err());
    let has = |needle: &[&str]| {
        problems
            .iter()
            .any(|p| needle.iter().all(|n| p.contains(n)))
    };
    assert!(
        has(&["line 25", "unknown variant `avg`", "majority", "mean"]),
        "{problems:#?}"
    );
    assert!(
        has(&["line 26", "pas_score", "did you mean `pass_score`"]),
        "{problems:#?}"
    );
    assert!(
        has(&[
            "line 28",
            "reviewers[3].endpoint",
            "'jugde'",
            "generator, judge"
        ]),
        "{problems:#?}"
    );
    // r1 and r2 (their tables start at lines 14 and 17) name no endpoint,
    // and without roles.reviewer there is no default.
    assert!(
        has(&[
            "line 14",
            "reviewers[0].endpoint: is missing",
            "roles.reviewer"
        ]),
        "{problems:#?}"
    );
    assert!(
        has(&["line 17", "reviewers[1].endpoint: is missing"]),
        "{problems:#?}"
    );
}

#[test]
fn numbers_out_of_range_and_options_of_the_other_rule_name_their_field() {
    let problems = shown(
        &load(&format!(
            "{THREE}[committee]\npass_score = nan\nmin_mean = 3\nquorum = 4\n"
        ))
        .unwrap_err(),
    );
    let has = |needle: &[&str]| {
        problems
            .iter()
            .any(|p| needle.iter().all(|n| p.contains(n)))
    };
    assert!(
        has(&["committee.pass_score", "NaN is not a number"]),
        "{problems:#?}"
    );
    assert!(
        has(&["committee.min_mean", "applies to rule = \"mean\""]),
        "{problems:#?}"
    );
    assert!(
        has(&[
            "committee.quorum",
            "4 is out of range; use 1 to 3",
            "3 reviewers"
        ]),
        "{problems:#?}"
    );
}

#[test]
fn a_committee_without_reviewers_and_a_default_endpoint_nobody_uses_are_problems() {
    let problems = shown(
        &load("[roles]\ngenerator = \"generator\"\nreviewer = \"judge\"\n[committee]\nrule = \"mean\"\n")
            .unwrap_err(),
    );
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(
        problems[0].contains("committee: has no reviewers; add [[reviewers]]"),
        "{problems:#?}"
    );
    assert!(
        problems[1].contains("roles.reviewer: names 'judge'"),
        "{problems:#?}"
    );
}

#[test]
fn too_many_reviewers_and_reviewers_that_are_not_tables_are_problems() {
    let many: String = (0..26)
        .map(|i| format!("[[reviewers]]\nname = \"r{i}\"\nendpoint = \"judge\"\nbuiltin = \"blueprint_review\"\n"))
        .collect();
    let problems =
        shown(&load(&format!("[roles]\ngenerator = \"generator\"\n{many}")).unwrap_err());
    assert!(
        problems[0].contains("26 is out of range; use 1 to 25 reviewers"),
        "{problems:#?}"
    );
    let problems = shown(
        &load_text(&format!(
            "reviewers = [1]\n{HEAD}[roles]\ngenerator = \"generator\"\n"
        ))
        .unwrap_err(),
    );
    assert!(
        problems[0].contains("reviewers[0]: is not a table"),
        "{problems:#?}"
    );
}
