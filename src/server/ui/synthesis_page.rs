//! `/jobs/{id}` of a synthesis job: its progress, its counts against the
//! target (as `sparring stats` reports them), the rejected attempts per stage
//! with their commonest reasons, the download of its accepted scenarios, and
//! its proposals with their fates, filtered by fate and stage.

use serde::Serialize;

use crate::report::synthesis::{ReasonCount, SynthesisStats, ERRORS_READ};
use crate::store::JobRow;
use crate::synth::Stage;

use super::super::{ApiError, AppState};
use super::job_page::{Choice, JobHead, Running};
use super::pager::{self, Pages};
use super::proposals::{self, Fate, FateKind, Line, ProposalsQuery};
use super::templates;

#[derive(Serialize)]
struct SynthesisJobPage {
    title: String,
    refresh: bool,
    wide: bool,
    job: JobHead,
    running: Option<Running>,
    stats: SynthesisStats,
    /// The accepted scenarios against the `[diversity]` targets, as lines.
    coverage: Vec<String>,
    fates: Vec<Tally>,
    stages: Vec<StageRow>,
    form: Form,
    count: Count,
    rows: Vec<RowView>,
    pages: Pages,
    config: String,
}

/// A count that links to the proposals it counts.
#[derive(Serialize)]
struct Tally {
    label: &'static str,
    count: usize,
    query: String,
}

#[derive(Serialize)]
struct StageRow {
    stage: &'static str,
    /// Rejected attempts, and their share of all attempts.
    rejected: u64,
    share: String,
    /// Proposals with an attempt rejected here.
    proposals: usize,
    query: String,
    reasons: Vec<ReasonCount>,
}

#[derive(Serialize)]
struct Form {
    fates: Vec<Choice>,
    stages: Vec<Choice>,
    limit: String,
}

#[derive(Serialize)]
struct Count {
    shown: usize,
    total: usize,
    filtered: bool,
}

#[derive(Serialize)]
struct RowView {
    index: i64,
    /// The filter, for previous / next on the proposal's page.
    query: String,
    fate: FateView,
    attempts: usize,
    tokens: i64,
    scenario: String,
}

/// A fate as a page shows it: `duplicate of synth-0-000008`, with the
/// proposal it repeats to link to.
#[derive(Serialize)]
pub struct FateView {
    pub text: String,
    pub tone: &'static str,
    pub of_index: Option<i64>,
}

pub fn fate_view(fate: &Fate) -> FateView {
    let (text, tone, of_index) = match fate {
        Fate::Accepted => ("accepted".to_string(), "good", None),
        Fate::Duplicate { of, of_index, .. } => (format!("duplicate of {of}"), "plain", *of_index),
        Fate::Surplus => ("surplus".to_string(), "plain", None),
        Fate::Rejected { stage, .. } => (
            stage
                .as_deref()
                .map_or_else(|| "rejected".to_string(), |s| format!("rejected at {s}")),
            "bad",
            None,
        ),
    };
    FateView {
        text,
        tone,
        of_index,
    }
}

pub async fn render_synthesis_job(
    state: &AppState,
    row: &JobRow,
    job: JobHead,
    running: Option<Running>,
    refresh: bool,
    query: &ProposalsQuery,
) -> Result<String, ApiError> {
    let config = proposals::stored_config(row)?;
    let listed = proposals::list(state.store.as_ref(), row.id, &config, None).await?;
    let counts = state.store.item_counts(row.id).await?;
    let errors = state.store.item_errors(row.id, ERRORS_READ).await?;
    let stats = SynthesisStats::new(
        &listed.summary,
        config.head.target as u64,
        config.head.max_proposals(),
        &counts,
        &errors,
        listed.coverage.clone(),
    );
    let lines = &listed.lines;
    let kept: Vec<&Line> = lines.iter().filter(|l| query.keeps(l)).collect();
    let at = |offset: usize| query.query_string(&[("offset", offset.to_string())]);
    let (shown, pages) = pager::page(kept.len(), query.offset, query.limit(), at);
    let page = SynthesisJobPage {
        title: format!("job {}", job.id),
        refresh,
        wide: false,
        running,
        fates: FateKind::ALL
            .into_iter()
            .map(|kind| Tally {
                label: kind.as_str(),
                count: lines.iter().filter(|l| l.fate.kind() == kind).count(),
                query: filter_query(Some(kind), None),
            })
            .collect(),
        stages: stage_rows(&stats, lines),
        form: form(query),
        count: Count {
            shown: kept.len(),
            total: lines.len(),
            filtered: query.is_filtered(),
        },
        rows: kept[shown]
            .iter()
            .map(|l| row_view(l, query.query_string(&[])))
            .collect(),
        pages,
        coverage: stats.coverage.lines(),
        stats,
        config: config.snapshot,
        job,
    };
    templates::render("synthesis_job.html", &page)
}

fn filter_query(fate: Option<FateKind>, stage: Option<Stage>) -> String {
    ProposalsQuery {
        fate,
        stage,
        ..ProposalsQuery::default()
    }
    .query_string(&[])
}

fn stage_rows(stats: &SynthesisStats, lines: &[Line]) -> Vec<StageRow> {
    stats
        .stages
        .iter()
        .map(|s| StageRow {
            stage: s.stage.as_str(),
            rejected: s.rejected,
            share: format!("{:.1}%", 100.0 * s.share),
            proposals: lines.iter().filter(|l| l.stages.contains(&s.stage)).count(),
            query: filter_query(None, Some(s.stage)),
            reasons: s.reasons.clone(),
        })
        .collect()
}

fn form(query: &ProposalsQuery) -> Form {
    Form {
        fates: FateKind::ALL
            .into_iter()
            .map(|f| Choice {
                value: f.as_str().into(),
                selected: query.fate == Some(f),
            })
            .collect(),
        stages: Stage::ALL
            .into_iter()
            .map(|s| Choice {
                value: s.as_str().into(),
                selected: query.stage == Some(s),
            })
            .collect(),
        limit: query.limit.map(|l| l.to_string()).unwrap_or_default(),
    }
}

fn row_view(line: &Line, query: String) -> RowView {
    RowView {
        index: line.index,
        query,
        fate: fate_view(&line.fate),
        attempts: line.attempts,
        tokens: line.tokens,
        scenario: line.scenario.clone().unwrap_or_default(),
    }
}
