//! SYNTH.toml's `[[reviewers]]` as judges: each table read by the judge
//! file reader (as a job's `[[judges]]`), from the config's text so every
//! problem keeps its line, then checked as a member of the committee: it
//! scores (pointwise), and the committee's thresholds are scores it can give.

use std::collections::BTreeSet;
use std::path::Path;

use toml::de::DeValue;

use crate::config::synth::committee::{fill_default_endpoint, CommitteeConfig, CommitteeRule};
use crate::config::{Problem, Trust};
use crate::diagnostics::document::Source;
use crate::judge::file::read_judge;
use crate::judge::{Judge, Mode};

/// The reviewers of `committee` (read from the SYNTH.toml at `file`), in order.
pub fn reviewer_judges(
    file: &Path,
    committee: &CommitteeConfig,
) -> Result<Vec<Judge>, Vec<Problem>> {
    let source = Source::toml(file, &committee.text);
    let mut root = source.parse()?;
    let mut problems = Vec::new();
    let Some((_, node)) = Source::take(&mut root, "reviewers") else {
        return Err(vec![Problem::in_file(
            file,
            "there are no [[reviewers]]; add [[reviewers]] with name, endpoint and builtin = \"blueprint_review\"",
        )]);
    };
    let DeValue::Array(items) = node.into_inner() else {
        return Err(vec![Problem::at_field(
            file,
            "reviewers",
            "is not a list of tables; write each reviewer as a [[reviewers]] table",
        )]);
    };
    let mut judges = Vec::new();
    let mut names = BTreeSet::new();
    for (i, mut item) in items.into_iter().enumerate() {
        let field = format!("reviewers[{i}]");
        fill_default_endpoint(&mut item, committee.default_endpoint.as_deref());
        let Some(written) = read_judge(&source, &field, item, &mut problems) else {
            continue;
        };
        let judge = match Judge::from_file(&written, i, file, &committee.base, Trust::Local) {
            Ok(judge) => judge,
            Err(more) => {
                problems.extend(more.into_iter().map(|p| as_reviewer(p, i)));
                continue;
            }
        };
        if !names.insert(judge.name.clone()) {
            problems.push(Problem::at_field(
                file,
                &format!("{field}.name"),
                format!(
                    "reviewer name '{}' is used twice; each reviewer needs its own name",
                    judge.name
                ),
            ));
        }
        problems.extend(committee_problems(file, &field, &judge, committee));
        judges.push(judge);
    }
    if problems.is_empty() {
        Ok(judges)
    } else {
        Err(problems)
    }
}

/// A problem the judge reader placed at `judges[i].FIELD`, placed at `reviewers[i].FIELD`.
fn as_reviewer(mut problem: Problem, i: usize) -> Problem {
    let judges = format!("judges[{i}]");
    if let Some(rest) = problem
        .location
        .as_deref()
        .and_then(|at| at.strip_prefix(&judges))
    {
        problem.location = Some(format!("reviewers[{i}]{rest}"));
    }
    problem
}

/// A reviewer must score (pointwise), and the committee's thresholds must be
/// scores it can give, or every blueprint would pass or fail.
fn committee_problems(
    file: &Path,
    field: &str,
    judge: &Judge,
    committee: &CommitteeConfig,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    if judge.mode != Mode::Pointwise {
        problems.push(Problem::at_field(
            file,
            &format!("{field}.mode"),
            format!(
                "reviewer '{}' is {}, but a reviewer scores a blueprint; use builtin = \"blueprint_review\" or a pointwise template",
                judge.name,
                judge.mode.as_str()
            ),
        ));
        return problems;
    }
    let Some(range) = judge.range else {
        return problems;
    };
    let vote = &committee.vote;
    let mut check = |name: &str, value: f64| {
        if value > range.high {
            problems.push(Problem::at_field(
                file,
                &format!("committee.{name}"),
                format!("{value} is above the highest score reviewer '{}' gives ({range}), so no blueprint could pass; use a score in that range", judge.name),
            ));
        } else if value <= range.low {
            problems.push(Problem::at_field(
                file,
                &format!("committee.{name}"),
                format!("{value} is not above the lowest score reviewer '{}' gives ({range}), so every blueprint would pass; use a score in that range", judge.name),
            ));
        }
    };
    check("pass_score", vote.pass_score);
    if vote.rule == CommitteeRule::Mean {
        check("min_mean", vote.min_mean);
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::synth::from_toml;

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
[roles]
generator = "generator"
reviewer = "judge"
"#;

    fn reviewers(rest: &str) -> Result<Vec<Judge>, Vec<String>> {
        let text = format!("{HEAD}{rest}");
        let file = Path::new("SYNTH.toml");
        let config = from_toml(file, &text, Path::new("/tmp"), Trust::Local)
            .map_err(|p| p.iter().map(|p| p.to_string()).collect::<Vec<_>>())?;
        let committee = config.committee.expect("a committee");
        reviewer_judges(file, &committee).map_err(|p| p.iter().map(|p| p.to_string()).collect())
    }

    const TWO: &str = "[[reviewers]]\nname = \"r1\"\nbuiltin = \"blueprint_review\"\n[[reviewers]]\nname = \"r2\"\nendpoint = \"generator\"\nbuiltin = \"blueprint_review\"\nsamples = 3\n";

    #[test]
    fn reviewers_are_judges_with_their_endpoint_or_the_default_one() {
        let judges = reviewers(TWO).unwrap();
        let named: Vec<(&str, &str, u32)> = judges
            .iter()
            .map(|j| (j.name.as_str(), j.endpoint.as_str(), j.samples))
            .collect();
        assert_eq!(named, [("r1", "judge", 1), ("r2", "generator", 3)]);
        assert_eq!(judges[0].mode, Mode::Pointwise);
    }

    #[test]
    fn a_typo_in_a_reviewer_table_is_reported_at_its_line() {
        // Line 22 is `sample = 3`.
        let problems = reviewers(&TWO.replace("samples = 3", "sample = 3")).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(
            problems[0].contains("line 22") && problems[0].contains("did you mean `samples`"),
            "{problems:#?}"
        );
    }

    #[test]
    fn a_bad_value_is_named_as_the_reviewers_field_not_a_judges() {
        let problems = reviewers(&TWO.replace("samples = 3", "samples = 0")).unwrap_err();
        assert!(
            problems[0].starts_with("SYNTH.toml: reviewers[1].samples: 0 is out of range"),
            "{problems:#?}"
        );
        let problems = reviewers(&TWO.replace("\"r2\"", "\"r1\"")).unwrap_err();
        assert!(
            problems[0].contains("reviewers[1].name: reviewer name 'r1' is used twice"),
            "{problems:#?}"
        );
    }

    #[test]
    fn a_reviewer_must_score_and_thresholds_must_be_scores_it_gives() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pair.tera"), "{{ conversation }}").unwrap();
        let pairwise = format!(
            "[[reviewers]]\nname = \"p\"\ntemplate = \"{}\"\nmode = \"pairwise\"\n",
            dir.path().join("pair.tera").display()
        );
        let problems = reviewers(&pairwise).unwrap_err();
        assert!(
            problems[0].contains(
                "reviewers[0].mode: reviewer 'p' is pairwise, but a reviewer scores a blueprint"
            ),
            "{problems:#?}"
        );
        let problems = reviewers(&format!("{TWO}[committee]\npass_score = 7\n")).unwrap_err();
        assert!(
            problems[0].contains(
                "committee.pass_score: 7 is above the highest score reviewer 'r1' gives ([1, 5])"
            ),
            "{problems:#?}"
        );
        let problems = reviewers(&format!(
            "{TWO}[committee]\nrule = \"mean\"\nmin_mean = 1\n"
        ))
        .unwrap_err();
        assert!(
            problems[0].contains("committee.min_mean: 1 is not above the lowest score")
                && problems[0].contains("every blueprint would pass"),
            "{problems:#?}"
        );
    }
}
