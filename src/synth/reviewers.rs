//! SYNTH.toml's `[[reviewers]]` as judges: each table read by the judge
//! file reader (as a job's `[[judges]]`), from the config's text so every
//! problem keeps its line, then checked as a member of the committee: it
//! scores (pointwise), and the committee's thresholds are scores it can give.

use std::collections::BTreeSet;
use std::path::Path;

use toml::de::DeValue;

use crate::config::document::Source;
use crate::config::synth_committee::{fill_default_endpoint, CommitteeConfig, CommitteeRule};
use crate::config::{Problem, Trust};
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
