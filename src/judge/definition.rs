//! The validated judge: a template, a mode, a parser, and how calls are combined.
//! Built from a [`JudgeFile`] with every problem reported at its field.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use regex::Regex;
use serde::{Deserialize, Serialize};
use tera::Context;

use super::builtin::Builtin;
use super::file::{JudgeCommon, JudgeFile, LabelValueFile, ModeKeys};
use super::verdict::Preference;
use crate::config::problem::Problem;
use crate::config::{ranges, Trust};
use crate::prompt::{PromptError, PromptRegistry};

/// What a judge judges and how its output reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// A score for one conversation from a rubric, range-checked.
    Pointwise,
    /// A vs B: which of two conversations (or a conversation and a reference) is better.
    Pairwise,
    /// Does the conversation's final answer say what the expected answer says.
    Equivalence,
    /// Each natural-language assertion about the conversation, met or not met.
    Assertions,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Pointwise => "pointwise",
            Mode::Pairwise => "pairwise",
            Mode::Equivalence => "equivalence",
            Mode::Assertions => "assertions",
        }
    }
}

/// How the samples of one order become one verdict (see `combine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregate {
    /// The most frequent verdict; a split vote goes to the cautious side.
    Majority,
    /// The mean score (pointwise only).
    Mean,
}

/// What a pairwise judgment becomes when its two orders disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OnInconsistent {
    /// A tie (FastChat's rule, the default): a judge that changes its mind when
    /// the answers swap places has no preference worth keeping.
    #[serde(rename = "tie")]
    Tie,
    /// The verdict of the first order (`ab`) stands; consistency is still reported.
    #[serde(rename = "first")]
    First,
    /// A fixed side, e.g. `B` when B is a reference that doubt should favour.
    A,
    B,
}

impl OnInconsistent {
    pub fn as_str(self) -> &'static str {
        match self {
            OnInconsistent::Tie => "tie",
            OnInconsistent::First => "first",
            OnInconsistent::A => "A",
            OnInconsistent::B => "B",
        }
    }
}

/// What a label in the output means.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LabelValue {
    Score(f64),
    Preference(Preference),
    Equal(bool),
}

/// A text the judge writes, e.g. `[[A]]`, and what it means.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub text: String,
    pub value: LabelValue,
}

impl Label {
    pub fn new(text: &str, value: LabelValue) -> Self {
        Label {
            text: text.to_string(),
            value,
        }
    }
}

/// How a call's output is read. For every parser the last match in the output
/// wins, so a judge may quote the format while reasoning.
#[derive(Debug, Clone)]
pub enum Parser {
    /// Fixed label texts.
    Labels(Vec<Label>),
    /// One capture group: a number (pointwise), `A`/`B`/`C`/`tie` (pairwise),
    /// `A=B`/`A!=B`/`equal`/`not_equal` (equivalence).
    Regex(Regex),
    /// `[[N: MET]]` / `[[N: NOT MET]]`, one per assertion.
    Assertions,
}

/// The default pointwise parser: `[[7]]` or `[[7.5]]`.
pub const DEFAULT_SCORE_REGEX: &str = r"\[\[(\d+(?:\.\d+)?)\]\]";

/// Pointwise scores outside `[low, high]` are unparseable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreRange {
    pub low: f64,
    pub high: f64,
}

impl ScoreRange {
    pub fn contains(&self, score: f64) -> bool {
        score >= self.low && score <= self.high
    }
}

impl fmt::Display for ScoreRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}]", self.low, self.high)
    }
}

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
        let mut problems = FieldProblems {
            path,
            index,
            list: Vec::new(),
        };
        let common = &file.common;
        let mode = file.keys.mode();

        let name = common.name.trim();
        let at = |f: &str| problems.field(f);
        let named = common_problems(common, &at);
        problems.list.extend(named.into_iter().map(|p| Problem {
            file: path.to_path_buf(),
            ..p
        }));

        // The name templates are rendered by; an empty judge name is reported above.
        let template_name = if name.is_empty() { "judge" } else { name };
        let template = match (common.builtin, &common.template) {
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
                if let Some(m) = common.mode.filter(|m| *m != builtin.mode()) {
                    problems.at(
                        "mode",
                        format!(
                            "built-in judge '{builtin}' is {}, not {}; remove mode",
                            builtin.mode().as_str(),
                            m.as_str()
                        ),
                    );
                }
                let own_parser = file
                    .keys
                    .parser()
                    .map(|p| [(p.labels.is_some(), "labels"), (p.regex.is_some(), "regex")]);
                let own_range = match &file.keys {
                    ModeKeys::Pointwise(_, p) => p.range.is_some(),
                    _ => false,
                };
                for (given, f) in own_parser
                    .into_iter()
                    .flatten()
                    .chain([(own_range, "range")])
                {
                    if given {
                        problems.at(
                            f,
                            format!(
                                "built-in judge '{builtin}' has its own template, parser and \
                                 range; to change them, copy {} and give template = ... \
                                 instead of builtin",
                                builtin.template_path()
                            ),
                        );
                    }
                }
                match JudgeTemplate::new(
                    template_name,
                    builtin.template().label(),
                    builtin.template_text().to_string(),
                ) {
                    Ok(t) => Some(t),
                    Err(more) => {
                        problems.list.extend(more);
                        None
                    }
                }
            }
            (None, Some(written)) => {
                let resolved = match trust {
                    Trust::Local if written.is_absolute() => Some(written.clone()),
                    Trust::Local => Some(base.join(written)),
                    Trust::Submitted(boundary) => {
                        match boundary.contain(path, &problems.field("template"), base, written) {
                            Ok(resolved) => Some(resolved),
                            Err(problem) => {
                                problems.list.push(problem);
                                None
                            }
                        }
                    }
                };
                match resolved.map(|r| (std::fs::read_to_string(&r), r)) {
                    None => None,
                    Some((Err(e), resolved)) => {
                        problems.at(
                            "template",
                            format!(
                                "cannot read {}: {e} (paths are relative to the config file's \
                                 folder {})",
                                resolved.display(),
                                base.display()
                            ),
                        );
                        None
                    }
                    Some((Ok(text), resolved)) => {
                        match JudgeTemplate::new(template_name, resolved, text) {
                            Ok(t) => Some(t),
                            Err(more) => {
                                problems.list.extend(more);
                                None
                            }
                        }
                    }
                }
            }
        };

        let parser = match file.keys.parser() {
            None => Some(Parser::Assertions),
            Some(keys) => build_parser(
                mode,
                common.builtin,
                keys.labels.as_ref(),
                keys.regex.as_deref(),
                &mut problems,
            ),
        };

        let range = match (&file.keys, &parser) {
            (ModeKeys::Pointwise(_, keys), Some(parser)) => {
                let written = keys
                    .range
                    .or_else(|| common.builtin.and_then(Builtin::range));
                Some(score_range(written, parser, &mut problems))
            }
            _ => None,
        };
        let (swap_check, on_inconsistent) = match &file.keys {
            ModeKeys::Pairwise(_, keys) => (
                keys.swap_check.unwrap_or(true),
                keys.on_inconsistent.unwrap_or(OnInconsistent::Tie),
            ),
            ModeKeys::Equivalence(_, keys) => {
                (keys.swap_check.unwrap_or(true), OnInconsistent::Tie)
            }
            ModeKeys::Pointwise(..) | ModeKeys::Assertions => (false, OnInconsistent::Tie),
        };
        let samples = common.samples.unwrap_or(1);
        if let Some(message) = ranges::JUDGE_SAMPLES.check(u64::from(samples)) {
            problems.at("samples", format!("{message} calls per order, e.g. 3"));
        }
        let aggregate = match (common.aggregate, mode) {
            (Some(Aggregate::Mean), m) if m != Mode::Pointwise => {
                problems.at(
                    "aggregate",
                    format!(
                        "\"mean\" averages scores, and a {} judge gives none; use \"majority\"",
                        m.as_str()
                    ),
                );
                Aggregate::Majority
            }
            (Some(a), _) => a,
            (None, Mode::Pointwise) => Aggregate::Mean,
            (None, _) => Aggregate::Majority,
        };
        if let Some(message) = common
            .max_tokens
            .and_then(|n| ranges::MAX_TOKENS.check(u64::from(n)))
        {
            problems.at("max_tokens", message);
        }
        if let Some(message) = common
            .temperature
            .and_then(|t| ranges::TEMPERATURE.check(f64::from(t)))
        {
            problems.at("temperature", message);
        }
        let drop_flagged = match &file.keys {
            ModeKeys::Pointwise(_, keys) => keys.drop_flagged.unwrap_or(false),
            _ => false,
        };
        let pass_fail = range
            == Some(ScoreRange {
                low: 0.0,
                high: 1.0,
            });
        if drop_flagged && !pass_fail && parser.is_some() {
            problems.at(
                "drop_flagged",
                "applies to pass/fail judges (pointwise, range [0, 1], e.g. builtin = \
                 \"user_fidelity\"): a conversation is dropped when the judge fails it"
                    .into(),
            );
        }

        if !problems.list.is_empty() {
            return Err(problems.list);
        }
        match (template, parser) {
            (Some(template), Some(parser)) => Ok(Judge {
                name: name.to_string(),
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

/// Problems of the name and endpoint every judge has, at the fields `at` names.
pub(super) fn common_problems(common: &JudgeCommon, at: &dyn Fn(&str) -> String) -> Vec<Problem> {
    let mut problems = Vec::new();
    let name = common.name.trim();
    if name.is_empty() {
        problems.push(Problem::at_field(
            "",
            &at("name"),
            "is empty; name the judge, e.g. name = \"helpful\"",
        ));
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        problems.push(Problem::at_field(
            "",
            &at("name"),
            format!(
                "'{name}' has characters other than letters, digits, `_`, `-` and `.`; \
                 the name is written on the command line (e.g. --min-judge {name}=7), so \
                 use e.g. \"helpful_v2\""
            ),
        ));
    }
    if common.endpoint.trim().is_empty() {
        problems.push(Problem::at_field(
            "",
            &at("endpoint"),
            "is empty; name the endpoint the judge's calls go to, e.g. endpoint = \"judge\"",
        ));
    }
    problems
}

/// A pointwise judge's score range: as written (checked, and holding every
/// label's score), else the span of its labels' scores, else 1 to 10.
fn score_range(
    written: Option<[f64; 2]>,
    parser: &Parser,
    problems: &mut FieldProblems<'_>,
) -> ScoreRange {
    let label_scores: Vec<f64> = match parser {
        Parser::Labels(labels) => labels
            .iter()
            .filter_map(|l| match l.value {
                LabelValue::Score(s) => Some(s),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    match written {
        Some([low, high]) => {
            if !(ranges::SCORE.contains(low) && ranges::SCORE.contains(high) && low < high) {
                problems.at(
                    "range",
                    format!(
                        "[{low}, {high}] is not a range; give [low, high] with low < high, \
                         each from {}, e.g. [1, 10]",
                        ranges::SCORE
                    ),
                );
            }
            let range = ScoreRange { low, high };
            for s in label_scores.iter().filter(|s| !range.contains(**s)) {
                problems.at(
                    "labels",
                    format!("a label is worth {s}, outside range {range}"),
                );
            }
            range
        }
        None if !label_scores.is_empty() => ScoreRange {
            low: label_scores.iter().copied().fold(f64::INFINITY, f64::min),
            high: label_scores
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max),
        },
        None => ScoreRange {
            low: 1.0,
            high: 10.0,
        },
    }
}

/// Problems of one judge table, located at `judges[INDEX].FIELD`.
struct FieldProblems<'a> {
    path: &'a Path,
    index: usize,
    list: Vec<Problem>,
}

impl FieldProblems<'_> {
    fn field(&self, f: &str) -> String {
        format!("judges[{}].{f}", self.index)
    }

    fn at(&mut self, f: &str, message: String) {
        let field = self.field(f);
        self.list
            .push(Problem::at_field(self.path, &field, message));
    }
}

fn build_parser(
    mode: Mode,
    builtin: Option<Builtin>,
    labels: Option<&BTreeMap<String, LabelValueFile>>,
    regex: Option<&str>,
    problems: &mut FieldProblems<'_>,
) -> Option<Parser> {
    if mode == Mode::Assertions {
        if labels.is_some() || regex.is_some() {
            problems.at(
                if labels.is_some() { "labels" } else { "regex" },
                "an assertions judge reads one `[[N: MET]]` or `[[N: NOT MET]]` line per \
                 assertion; labels and regex do not apply, so remove them"
                    .into(),
            );
            return None;
        }
        return Some(Parser::Assertions);
    }
    match (labels, regex) {
        (Some(_), Some(_)) => {
            problems.at("regex", "give labels or regex, not both".into());
            None
        }
        (None, Some(pattern)) => match Regex::new(pattern) {
            Err(e) => {
                let detail = e
                    .to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                problems.at(
                    "regex",
                    format!(
                        "is not a valid regular expression: {detail} (case-insensitive \
                         matching is written (?i-u), for ASCII)"
                    ),
                );
                None
            }
            Ok(re) if re.captures_len() != 2 => {
                problems.at(
                    "regex",
                    format!(
                        "has {} capture groups; it needs exactly one, around the verdict, \
                         e.g. '\\[\\[(\\d+)\\]\\]' (use (?:...) for other groups)",
                        re.captures_len() - 1
                    ),
                );
                None
            }
            Ok(re) => Some(Parser::Regex(re)),
        },
        (Some(labels), None) => labels_parser(mode, labels, problems),
        (None, None) => Some(default_parser(mode, builtin)),
    }
}

fn labels_parser(
    mode: Mode,
    labels: &BTreeMap<String, LabelValueFile>,
    problems: &mut FieldProblems<'_>,
) -> Option<Parser> {
    let before = problems.list.len();
    if labels.is_empty() {
        problems.at(
            "labels",
            "is empty; map each label the judge writes to its verdict".into(),
        );
    }
    let mut built = Vec::new();
    for (text, value) in labels {
        let f = format!("labels.\"{text}\"");
        if text.trim().is_empty() {
            problems.at(&f, "a label text is empty".into());
            continue;
        }
        let value = match (mode, value) {
            (Mode::Pointwise, LabelValueFile::Number(x)) if x.is_finite() => LabelValue::Score(*x),
            (Mode::Pairwise, LabelValueFile::Text(t)) if Preference::parse(t).is_some() => {
                match Preference::parse(t) {
                    Some(p) => LabelValue::Preference(p),
                    None => continue,
                }
            }
            (Mode::Equivalence, LabelValueFile::Text(t)) if t == "equal" => LabelValue::Equal(true),
            (Mode::Equivalence, LabelValueFile::Text(t)) if t == "not_equal" => {
                LabelValue::Equal(false)
            }
            (Mode::Pointwise, _) => {
                problems.at(
                    &f,
                    "a pointwise label maps to a score, e.g. \"[[PASS]]\" = 1".into(),
                );
                continue;
            }
            (Mode::Pairwise, _) => {
                problems.at(
                    &f,
                    "a pairwise label maps to \"A\", \"B\" or \"tie\"".into(),
                );
                continue;
            }
            (Mode::Equivalence | Mode::Assertions, _) => {
                problems.at(
                    &f,
                    "an equivalence label maps to \"equal\" or \"not_equal\"".into(),
                );
                continue;
            }
        };
        built.push(Label {
            text: text.to_string(),
            value,
        });
    }
    let has = |v: LabelValue| built.iter().any(|l| l.value == v);
    let missing: Vec<&str> = match mode {
        Mode::Pairwise => [("A", Preference::A), ("B", Preference::B)]
            .into_iter()
            .filter(|(_, p)| !has(LabelValue::Preference(*p)))
            .map(|(n, _)| n)
            .collect(),
        Mode::Equivalence => [("equal", true), ("not_equal", false)]
            .into_iter()
            .filter(|(_, e)| !has(LabelValue::Equal(*e)))
            .map(|(n, _)| n)
            .collect(),
        Mode::Pointwise | Mode::Assertions => Vec::new(),
    };
    if !missing.is_empty() && !labels.is_empty() {
        problems.at(
            "labels",
            format!("no label means {}; add one", missing.join(" or ")),
        );
    }
    (problems.list.len() == before).then_some(Parser::Labels(built))
}

/// The parser a mode (or a built-in judge) reads outputs with when none is given.
fn default_parser(mode: Mode, builtin: Option<Builtin>) -> Parser {
    if let Some(labels) = builtin.and_then(Builtin::labels) {
        return Parser::Labels(labels);
    }
    match mode {
        Mode::Pointwise => match Regex::new(DEFAULT_SCORE_REGEX) {
            Ok(re) => Parser::Regex(re),
            // The pattern is a constant that a test compiles.
            Err(_) => Parser::Labels(Vec::new()),
        },
        Mode::Pairwise => Parser::Labels(vec![
            Label::new("[[A]]", LabelValue::Preference(Preference::A)),
            Label::new("[[B]]", LabelValue::Preference(Preference::B)),
            Label::new("[[C]]", LabelValue::Preference(Preference::Tie)),
        ]),
        Mode::Equivalence => Parser::Labels(vec![
            Label::new("[[A=B]]", LabelValue::Equal(true)),
            Label::new("[[A!=B]]", LabelValue::Equal(false)),
        ]),
        Mode::Assertions => Parser::Assertions,
    }
}

/// Labels as a map, for hashing and display.
pub(crate) fn labels_map(labels: &[Label]) -> BTreeMap<String, String> {
    labels
        .iter()
        .map(|l| {
            let value = match l.value {
                LabelValue::Score(s) => format!("{s}"),
                LabelValue::Preference(p) => p.as_str().to_string(),
                LabelValue::Equal(true) => "equal".to_string(),
                LabelValue::Equal(false) => "not_equal".to_string(),
            };
            (l.text.clone(), value)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use toml::de::DeValue;

    use super::*;
    use crate::config::document::{Node, Source};
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
        let dir = std::env::temp_dir().join(format!("usersim-judge-def-{}", std::process::id()));
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
        let problems = from_toml(
            "name = \"h\"\nendpoint = \"e\"\nbuiltin = \"helpfulness\"\ndrop_flagged = true",
        )
        .unwrap_err();
        assert!(problems[0].message.contains("pass/fail judges"));
    }

    #[test]
    fn the_default_score_regex_compiles() {
        assert!(Regex::new(DEFAULT_SCORE_REGEX).is_ok());
    }
}
