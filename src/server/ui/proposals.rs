//! A synthesis job's proposals as the web UI lists them: each with its fate
//! (accepted, a near-duplicate of an earlier one, surplus, rejected) decided
//! in proposal order as the job decides it, filtered by fate and by the
//! stages its attempts were rejected at.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use crate::config::synth::{from_stored, SynthConfig};
use crate::config::Problem;
use crate::store::{JobRow, ProposalRow, Store};
use crate::synth::accept::Decision;
use crate::synth::coverage::Coverage;
use crate::synth::summary::Summary;
use crate::synth::tally::tally;
use crate::synth::Stage;

use super::super::filters::{given, whole_number, QUERY_LABEL};
use super::super::ApiError;

/// The browser's query string of a synthesis job's proposals, as sent.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct RawProposalsQuery {
    /// `accepted`, `duplicate`, `surplus` or `rejected`.
    pub fate: Option<String>,
    /// A stage one of the proposal's attempts was rejected at.
    pub stage: Option<String>,
    /// Rows skipped before this page.
    pub offset: Option<String>,
    /// Rows per page.
    pub limit: Option<String>,
}

/// [`RawProposalsQuery`], checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProposalsQuery {
    pub fate: Option<FateKind>,
    pub stage: Option<Stage>,
    pub offset: usize,
    pub limit: Option<usize>,
}

/// What became of a proposal, without its particulars: what `fate` filters by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FateKind {
    Accepted,
    Duplicate,
    Surplus,
    Rejected,
}

impl FateKind {
    pub const ALL: [FateKind; 4] = [
        FateKind::Accepted,
        FateKind::Duplicate,
        FateKind::Surplus,
        FateKind::Rejected,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FateKind::Accepted => "accepted",
            FateKind::Duplicate => "duplicate",
            FateKind::Surplus => "surplus",
            FateKind::Rejected => "rejected",
        }
    }
}

/// The one of `all` that `name` calls `text`.
fn named<T: Copy>(all: &[T], name: fn(T) -> &'static str, text: &str) -> Option<T> {
    all.iter().copied().find(|v| name(*v) == text)
}

/// Rows of the proposals table on one page, unless `limit` says otherwise.
pub const PAGE_ROWS: usize = 50;
/// Most rows on one page.
pub const MAX_LIMIT: usize = 500;
/// Most rows skipped by `offset`: more than any job proposes.
const MAX_OFFSET: usize = 100_000_000;

/// `value` as one of `all`, as `name` calls them; another value is a
/// problem naming them all.
fn one_of<T: Copy>(
    field: &str,
    value: &Option<String>,
    all: &[T],
    name: fn(T) -> &'static str,
    problems: &mut Vec<Problem>,
) -> Option<T> {
    let text = given(value)?;
    let found = named(all, name, text);
    if found.is_none() {
        let names: Vec<&str> = all.iter().map(|v| name(*v)).collect();
        problems.push(Problem::at_field(
            QUERY_LABEL,
            field,
            format!(
                "'{text}' is not a {field}; give one of {}, or leave {field} out",
                names.join(", ")
            ),
        ));
    }
    found
}

impl RawProposalsQuery {
    /// The query checked; every malformed value is one problem naming its
    /// field and the values that would do.
    pub fn check(&self) -> Result<ProposalsQuery, ApiError> {
        let mut problems = Vec::new();
        let fate = one_of(
            "fate",
            &self.fate,
            &FateKind::ALL,
            FateKind::as_str,
            &mut problems,
        );
        let stage = one_of(
            "stage",
            &self.stage,
            &Stage::ALL,
            Stage::as_str,
            &mut problems,
        );
        let offset = whole_number(
            "offset",
            &self.offset,
            (0, MAX_OFFSET),
            "a row count",
            &mut problems,
        );
        let limit = whole_number(
            "limit",
            &self.limit,
            (1, MAX_LIMIT),
            "a page size",
            &mut problems,
        );
        if !problems.is_empty() {
            return Err(ApiError::Invalid(problems));
        }
        Ok(ProposalsQuery {
            fate,
            stage,
            offset: offset.unwrap_or(0),
            limit,
        })
    }
}

impl ProposalsQuery {
    /// The query string of these filters (and page size), for links that
    /// keep them; `extra` pairs are added.
    pub fn query_string(&self, extra: &[(&str, String)]) -> String {
        let mut pairs: Vec<(&str, String)> = Vec::new();
        if let Some(fate) = self.fate {
            pairs.push(("fate", fate.as_str().into()));
        }
        if let Some(stage) = self.stage {
            pairs.push(("stage", stage.as_str().into()));
        }
        if let Some(limit) = self.limit {
            pairs.push(("limit", limit.to_string()));
        }
        pairs.extend(extra.iter().cloned());
        serde_urlencoded::to_string(&pairs).unwrap_or_default()
    }

    pub fn is_filtered(&self) -> bool {
        self.fate.is_some() || self.stage.is_some()
    }

    pub fn limit(&self) -> usize {
        self.limit.unwrap_or(PAGE_ROWS)
    }

    pub fn keeps(&self, line: &Line) -> bool {
        self.fate.is_none_or(|f| f == line.fate.kind())
            && self.stage.is_none_or(|s| line.stages.contains(&s))
    }
}

/// What became of one proposal.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    Accepted,
    Duplicate {
        /// The scenario it repeats, and that scenario's proposal.
        of: String,
        of_index: Option<i64>,
        similarity: f64,
        reason: String,
    },
    Surplus,
    /// Its last attempt was rejected at `stage` (as stored).
    Rejected {
        stage: Option<String>,
        reason: Option<String>,
    },
}

impl Fate {
    pub fn kind(&self) -> FateKind {
        match self {
            Fate::Accepted => FateKind::Accepted,
            Fate::Duplicate { .. } => FateKind::Duplicate,
            Fate::Surplus => FateKind::Surplus,
            Fate::Rejected { .. } => FateKind::Rejected,
        }
    }
}

/// One proposal as a row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub index: i64,
    pub fate: Fate,
    /// The stage of every rejected attempt, in order, and `duplicate` for
    /// a near-duplicate: what `stage` filters by.
    pub stages: Vec<Stage>,
    pub attempts: usize,
    /// Generator and reviewers, prompt and completion.
    pub tokens: i64,
    /// The scenario's id (valid proposals).
    pub scenario: Option<String>,
}

/// Every proposal of a job with its fate, and the job's counts.
pub struct Listed {
    /// The accepted scenarios against the `[diversity]` targets.
    pub coverage: Coverage,
    /// In proposal order.
    pub lines: Vec<Line>,
    pub summary: Summary,
    /// The proposal asked for by number, whole, and its line.
    pub picked: Option<(ProposalRow, Line)>,
}

/// The config of synthesis job `row`, as the job reads it.
pub fn stored_config(row: &JobRow) -> Result<SynthConfig, ApiError> {
    from_stored(row.id, &row.config_snapshot).map_err(|problems| {
        ApiError::Internal(format!(
            "job {}'s stored config cannot be read: {}",
            row.id,
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ))
    })
}

/// Walk job `job_id`'s proposals in order, deciding each as the job does;
/// keep proposal `pick` whole.
pub async fn list(
    store: &dyn Store,
    job_id: i64,
    config: &SynthConfig,
    pick: Option<i64>,
) -> Result<Listed, ApiError> {
    let mut lines = Vec::new();
    let mut picked = None;
    // Accepted scenario id → its proposal, for a duplicate's link.
    let mut accepted: HashMap<String, i64> = HashMap::new();
    let tallied = tally(store, job_id, config, |row, decision| {
        let line = line_of(row, decision, &accepted);
        if line.fate == Fate::Accepted {
            if let Some(id) = &line.scenario {
                accepted.insert(id.clone(), line.index);
            }
        }
        if pick == Some(row.proposal.index) {
            picked = Some((row.clone(), line.clone()));
        }
        lines.push(line);
    })
    .await?;
    Ok(Listed {
        lines,
        coverage: Coverage::of(&config.diversity, tallied.acceptance.accepted()),
        summary: tallied.summary,
        picked,
    })
}

/// The stages a proposal's stored attempts were rejected at, in order; an
/// attempt without a readable stage is left out.
fn rejected_stages(attempts: &Value) -> Vec<Stage> {
    attempts
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a.pointer("/rejection/stage")?.as_str())
        .filter_map(|text| named(&Stage::ALL, Stage::as_str, text))
        .collect()
}

fn line_of(
    row: &ProposalRow,
    decision: Option<&Decision>,
    accepted: &HashMap<String, i64>,
) -> Line {
    let p = &row.proposal;
    let mut stages = rejected_stages(&p.attempts);
    let fate = match decision {
        Some(Decision::Accepted) => Fate::Accepted,
        Some(Decision::Duplicate(d)) => {
            stages.push(Stage::Duplicate);
            Fate::Duplicate {
                of_index: accepted.get(&d.of).copied(),
                of: d.of.clone(),
                similarity: d.similarity,
                reason: d.reason.clone(),
            }
        }
        Some(Decision::Surplus) => Fate::Surplus,
        None => Fate::Rejected {
            stage: p.stage.clone(),
            reason: p.reason.clone(),
        },
    };
    Line {
        index: p.index,
        fate,
        stages,
        attempts: p.attempts.as_array().map_or(0, Vec::len),
        tokens: p.prompt_tokens
            + p.completion_tokens
            + p.review_prompt_tokens
            + p.review_completion_tokens,
        scenario: p
            .scenario
            .as_ref()
            .and_then(|s| s.get("id"))
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(fate: &str, stage: &str, offset: &str) -> RawProposalsQuery {
        RawProposalsQuery {
            fate: Some(fate.into()),
            stage: Some(stage.into()),
            offset: Some(offset.into()),
            limit: None,
        }
    }

    #[test]
    fn every_bad_value_is_named_with_the_values_that_would_do() {
        let Err(ApiError::Invalid(problems)) = raw("lost", "typing", "-1").check() else {
            panic!("accepted");
        };
        let said: Vec<(Option<&str>, &str)> = problems
            .iter()
            .map(|p| (p.location.as_deref(), p.message.as_str()))
            .collect();
        assert_eq!(said.len(), 3, "{said:?}");
        assert_eq!(said[0].0, Some("fate"));
        assert!(said[0]
            .1
            .contains("give one of accepted, duplicate, surplus, rejected"));
        assert_eq!(said[1].0, Some("stage"));
        assert!(said[1].1.contains("'typing' is not a stage"));
        assert!(said[1].1.contains("unknown_id"));
        assert_eq!(said[2].0, Some("offset"));
        let limit = RawProposalsQuery {
            limit: Some("0".into()),
            ..RawProposalsQuery::default()
        };
        assert!(
            matches!(limit.check(), Err(ApiError::Invalid(p)) if p[0].message.contains("from 1 to 500"))
        );
    }

    #[test]
    fn blank_values_are_not_given_and_links_keep_the_filter() {
        let query = raw(" ", "", "").check().unwrap();
        assert_eq!(query, ProposalsQuery::default());
        assert!(!query.is_filtered());
        let query = raw("rejected", "unknown_id", "50").check().unwrap();
        assert_eq!(query.offset, 50);
        assert_eq!(
            query.query_string(&[("offset", "100".into())]),
            "fate=rejected&stage=unknown_id&offset=100"
        );
    }

    fn line(fate: Fate, stages: Vec<Stage>) -> Line {
        Line {
            index: 0,
            fate,
            stages,
            attempts: 1,
            tokens: 0,
            scenario: None,
        }
    }

    #[test]
    fn the_stage_filter_keeps_a_proposal_any_of_whose_attempts_was_rejected_there() {
        let fixed = line(Fate::Accepted, vec![Stage::UnknownId]);
        let rejected = line(
            Fate::Rejected {
                stage: Some("format".into()),
                reason: None,
            },
            vec![Stage::Format, Stage::Format],
        );
        let query = |fate, stage| ProposalsQuery {
            fate,
            stage,
            ..ProposalsQuery::default()
        };
        assert!(query(None, Some(Stage::UnknownId)).keeps(&fixed));
        assert!(!query(None, Some(Stage::UnknownId)).keeps(&rejected));
        assert!(query(Some(FateKind::Rejected), Some(Stage::Format)).keeps(&rejected));
        assert!(!query(Some(FateKind::Accepted), Some(Stage::Format)).keeps(&rejected));
        assert!(query(None, None).keeps(&rejected));
    }

    #[test]
    fn stages_are_read_from_the_stored_attempts_and_unknown_ones_left_out() {
        let attempts = json!([
            {"attempt": 1, "reply": "x", "rejection": {"stage": "communicate", "reason": "r"}},
            {"attempt": 2, "reply": "y", "rejection": {"stage": "someday", "reason": "r"}},
            {"attempt": 3, "reply": "z"}
        ]);
        assert_eq!(rejected_stages(&attempts), [Stage::Communicate]);
        assert_eq!(rejected_stages(&json!("not a list")), []);
    }
}
