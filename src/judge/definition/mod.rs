//! The validated judge: a template, a mode, a parser, and how calls are combined.
//! Built from a [`JudgeFile`] with every problem reported at its field, in the
//! shape of `config::load`: the template resolved and read (`template`,
//! `paths`), the parser (`parser`, `labels`) and score range (`range`), each
//! other field checked in its own function (`check`), every problem
//! collected (`problems`) before any is returned.

mod check;
mod labels;
mod parser;
mod paths;
mod problems;
mod range;
mod template;
mod types;

use std::path::Path;

pub(in crate::judge) use check::common_problems;
pub use template::JudgeTemplate;
pub(crate) use types::labels_map;
pub use types::{
    Aggregate, Label, LabelValue, Mode, OnInconsistent, Parser, ScoreRange, DEFAULT_SCORE_REGEX,
};

use super::builtin::Builtin;
use super::file::JudgeFile;
use crate::config::Trust;
use crate::diagnostics::problem::Problem;
use problems::FieldProblems;

/// A validated judge.
#[derive(Debug, Clone)]
pub struct Judge {
    pub name: String,
    /// The endpoint its calls go to; the caller resolves the name.
    pub endpoint: String,
    pub builtin: Option<Builtin>,
    pub template: JudgeTemplate,
    pub mode: Mode,
    pub parser: Parser,
    /// Pointwise only.
    pub range: Option<ScoreRange>,
    /// Pairwise and equivalence: judge both orders.
    pub swap_check: bool,
    /// Pairwise: what disagreeing orders become.
    pub on_inconsistent: OnInconsistent,
    /// Calls per order.
    pub samples: u32,
    pub aggregate: Aggregate,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// A generation job may drop conversations this (pass/fail) judge fails.
    pub drop_flagged: bool,
}

impl Judge {
    /// A built-in judge with its defaults.
    pub fn from_builtin(
        name: &str,
        endpoint: &str,
        builtin: Builtin,
    ) -> Result<Judge, Vec<Problem>> {
        let file = JudgeFile::builtin(name, endpoint, builtin);
        Judge::from_file(
            &file,
            0,
            &builtin.template().label(),
            Path::new("."),
            Trust::Local,
        )
    }

    /// Validate the `index`-th judge of the config `path`; a relative template
    /// path is relative to `base` (the config file's folder), and for a config
    /// submitted to the service it must lie inside the data root. Problems
    /// name the field as `judges[INDEX].FIELD`. Which keys a mode has is
    /// settled when the table is read ([`JudgeFile`]); this checks values.
    pub fn from_file(
        file: &JudgeFile,
        index: usize,
        path: &Path,
        base: &Path,
        trust: Trust<'_>,
    ) -> Result<Judge, Vec<Problem>> {
        let mut problems = FieldProblems::new(path, index);
        let common = &file.common;
        let mode = file.keys.mode();

        let named = common_problems(common, &|f| problems.field(f));
        problems.list.extend(named.into_iter().map(|p| Problem {
            file: path.to_path_buf(),
            ..p
        }));
        let template = template::judge_template(file, base, trust, &mut problems);
        let parser = parser::judge_parser(file, mode, &mut problems);
        let range = range::judge_range(file, parser.as_ref(), &mut problems);
        let (swap_check, on_inconsistent) = check::orders(&file.keys);
        let samples = check::samples(common, &mut problems);
        let aggregate = check::aggregate(common.aggregate, mode, &mut problems);
        check::call_limits(common, &mut problems);
        let drop_flagged = check::drop_flagged(&file.keys, range, parser.is_some(), &mut problems);

        if !problems.list.is_empty() {
            return Err(problems.list);
        }
        match (template, parser) {
            (Some(template), Some(parser)) => Ok(Judge {
                name: common.name.trim().to_string(),
                endpoint: common.endpoint.trim().to_string(),
                builtin: common.builtin,
                template,
                mode,
                parser,
                range,
                swap_check,
                on_inconsistent,
                samples,
                aggregate,
                max_tokens: common.max_tokens,
                temperature: common.temperature,
                drop_flagged,
            }),
            // Each of these being absent pushed a problem above.
            _ => Err(vec![Problem::at_field(
                path,
                &problems.field("mode"),
                "the judge is incomplete",
            )]),
        }
    }

    /// Whether a generation job should drop the conversation this outcome is about:
    /// only a pass/fail judge with `drop_flagged`, only a verdict that fails.
    /// A failed or unparseable judgment never drops anything.
    pub fn drops(&self, outcome: &super::run::JudgeOutcome) -> bool {
        self.drop_flagged && outcome.flagged()
    }
}

#[cfg(test)]
mod tests;
