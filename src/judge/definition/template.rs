//! A judge's template: built in, or a file the judge names, parsed once.

use std::path::PathBuf;
use std::sync::Arc;

use tera::Context;

use super::check::builtin_overrides;
use super::paths::{read_template, resolve_template};
use super::problems::FieldProblems;
use crate::config::Trust;
use crate::diagnostics::problem::Problem;
use crate::judge::builtin::Builtin;
use crate::judge::file::JudgeFile;
use crate::prompt::{PromptError, PromptRegistry};

/// A judge's template, parsed once.
#[derive(Debug, Clone)]
pub struct JudgeTemplate {
    /// The file it came from (for a built-in: its path in the repository).
    pub file: PathBuf,
    /// The template text, part of the judge's config hash.
    pub text: String,
    name: String,
    registry: Arc<PromptRegistry>,
}

impl JudgeTemplate {
    /// Parse `text`; a syntax error is a problem at its line and column in `file`.
    pub fn new(name: &str, file: PathBuf, text: String) -> Result<Self, Vec<Problem>> {
        let registry =
            PromptRegistry::from_texts(vec![(name.to_string(), file.clone(), text.clone())])?;
        Ok(JudgeTemplate {
            file,
            text,
            name: name.to_string(),
            registry: Arc::new(registry),
        })
    }

    pub fn render(&self, ctx: &Context) -> Result<String, PromptError> {
        self.registry.render(&self.name, ctx)
    }
}

/// The template of `file`: its built-in judge's (whose other keys are
/// checked against it) or the file it names, resolved against `base`.
pub(super) fn judge_template(
    file: &JudgeFile,
    base: &std::path::Path,
    trust: Trust<'_>,
    problems: &mut FieldProblems<'_>,
) -> Option<JudgeTemplate> {
    let common = &file.common;
    let name = common.name.trim();
    // The name templates are rendered by; an empty judge name is reported elsewhere.
    let template_name = if name.is_empty() { "judge" } else { name };
    match (common.builtin, &common.template) {
        (Some(_), Some(_)) => {
            problems.at(
                "template",
                "a judge is either built in (builtin = ...) or a template file (template = \
                 ...), not both; remove one"
                    .into(),
            );
            None
        }
        (None, None) => {
            problems.at(
                "template",
                format!(
                    "is missing; give template = \"judges/mine.tera\" (relative to this \
                     file) with mode = ..., or builtin = one of {}",
                    Builtin::names()
                ),
            );
            None
        }
        (Some(builtin), None) => {
            builtin_overrides(file, builtin, problems);
            let text = builtin.template_text().to_string();
            parsed(
                JudgeTemplate::new(template_name, builtin.template().label(), text),
                problems,
            )
        }
        (None, Some(written)) => {
            let resolved = resolve_template(written, base, trust, problems)?;
            let text = read_template(&resolved, base, problems)?;
            parsed(JudgeTemplate::new(template_name, resolved, text), problems)
        }
    }
}

/// The parsed template, or `None` with its syntax errors pushed.
fn parsed(
    template: Result<JudgeTemplate, Vec<Problem>>,
    problems: &mut FieldProblems<'_>,
) -> Option<JudgeTemplate> {
    match template {
        Ok(t) => Some(t),
        Err(more) => {
            problems.list.extend(more);
            None
        }
    }
}
