//! `/jobs/{id}`: a job's progress and, for a generation job, its plots and
//! conversations (filtered from dropdowns, sorted by any column, counted as
//! filtered, downloadable as filtered); for a judging job, its judgments;
//! for a synthesis job, its proposals (`synthesis_page.rs`).

use serde::Serialize;

use crate::export::groups::{GroupCounts, RolloutGroups};
use crate::llm::telemetry;
use crate::store::JobRow;

use super::super::views::{self, JobView};
use super::super::{ApiError, AppState};
use super::browse::{self, Browse, BrowseQuery, Browsed, Column, Row};
use super::jobs_page::{progress, Progress};
use super::names::{self, Kind};
use super::pager::{self, Pages};
use super::plots::{self, Chart};
use super::probe_section::{self, ProbeSection};
use super::proposals::{ProposalsQuery, RawProposalsQuery};
use super::strata_plot::{self, StrataQuery, StrataSection};
use super::{display, judgment_page, synthesis_page, templates};

#[derive(Serialize)]
pub struct JobHead {
    pub id: i64,
    pub name: String,
    pub label: String,
    pub status: &'static str,
    pub created: String,
    pub updated: String,
    pub progress: Progress,
}

fn head(row: &JobRow, job: &JobView) -> JobHead {
    JobHead {
        id: job.id,
        name: job.name.clone(),
        label: names::label(row),
        status: job.status.as_str(),
        created: display::date(job.created_at),
        updated: display::date(job.updated_at),
        progress: progress(job),
    }
}

/// What a job running in this server is doing now.
#[derive(Serialize)]
pub struct Running {
    endpoints: Vec<EndpointNow>,
    in_flight: i64,
    retries: u64,
}

#[derive(Serialize)]
struct EndpointNow {
    name: String,
    in_flight: i64,
    /// `429 ×3, timeout ×1`, or empty.
    retries: String,
    retried: u64,
}

fn running() -> Running {
    let endpoints: Vec<EndpointNow> = telemetry::snapshot()
        .into_iter()
        .map(|e| {
            let retried = e.retries.iter().map(|(_, n)| n).sum();
            EndpointNow {
                retries: e
                    .retries
                    .iter()
                    .filter(|(_, n)| *n > 0)
                    .map(|(reason, n)| format!("{reason} ×{n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                retried,
                in_flight: e.in_flight,
                name: e.endpoint,
            }
        })
        .collect();
    Running {
        in_flight: endpoints.iter().map(|e| e.in_flight).sum(),
        retries: endpoints.iter().map(|e| e.retried).sum(),
        endpoints,
    }
}

#[derive(Serialize)]
struct JobPage {
    title: String,
    refresh: bool,
    wide: bool,
    job: JobHead,
    running: Option<Running>,
    count: Count,
    export: Export,
    form: Form,
    columns: Vec<Header>,
    rows: Vec<RowView>,
    pages: Pages,
    charts: Vec<Chart>,
    /// The conversations broken down by one attribute (all of them, whatever the filter).
    strata: Option<StrataSection>,
    /// Probe scenarios' outcomes (all of them, whatever the filter).
    probes: Option<ProbeSection>,
    config: String,
}

#[derive(Serialize)]
struct Count {
    shown: usize,
    total: usize,
    filtered: bool,
    scored: usize,
    mean_reward: String,
    /// `failed` items: conversations that could not be made (none stored).
    failed_items: i64,
    /// The job's rollout groups and the flat ones (of every conversation,
    /// whatever the filter), or empty when nothing is scored.
    groups: String,
}

#[derive(Serialize)]
struct Export {
    /// The query of the filtered conversations' export, as OpenAI JSONL.
    query: String,
    /// The same, only reward ≥ 1.
    passed_query: String,
}

#[derive(Serialize)]
struct Form {
    terminations: Vec<Choice>,
    scenarios: Vec<Choice>,
    personas: Vec<Choice>,
    min_reward: String,
    max_reward: String,
    min_judge: String,
    drop_flagged: String,
    sort: String,
    dir: String,
}

#[derive(Serialize)]
pub struct Choice {
    pub value: String,
    pub selected: bool,
}

#[derive(Serialize)]
struct Header {
    label: String,
    /// What kind of column, over its label: `judge`, `component`.
    over: &'static str,
    /// The query that sorts by this column; again, the other way.
    query: String,
    /// `▲`/`▼` on the column sorted by.
    arrow: &'static str,
    numeric: bool,
}

#[derive(Serialize)]
struct RowView {
    id: i64,
    /// The filter and sort, for previous / next on the conversation's page.
    query: String,
    scenario: String,
    persona: String,
    sample: i64,
    termination: String,
    reward: String,
    tone: &'static str,
    messages: usize,
    cells: Vec<Cell>,
}

#[derive(Serialize)]
struct Cell {
    text: String,
    tone: &'static str,
}

/// Rows on one page of the table.
pub const PAGE_ROWS: usize = 50;

/// The page of job `id`: `query` filters a generation job's conversations,
/// `proposals` a synthesis job's proposals.
pub async fn render(
    state: &AppState,
    id: i64,
    query: &BrowseQuery,
    proposals: &RawProposalsQuery,
    strata: &StrataQuery,
) -> Result<String, ApiError> {
    let (browse, proposals) = checked(query, proposals)?;
    let detail = views::job_detail(state, id).await?;
    let row = views::job_row(state.store.as_ref(), id).await?;
    let job = &detail.job;
    let refresh = !job.finished();
    let running = job.running_here.then(running);
    match names::kind(&row) {
        // An import job's conversations are browsed as a generation job's.
        Kind::Generation | Kind::Import => {}
        Kind::Judging => {
            return judgment_page::render_judging_job(state, head(&row, job), running, refresh)
                .await;
        }
        Kind::Synthesis => {
            let head = head(&row, job);
            return synthesis_page::render_synthesis_job(
                state, &row, head, running, refresh, &proposals,
            )
            .await;
        }
    }
    let browsed = browse::browse(state.store.as_ref(), id, &browse).await?;
    let groups = RolloutGroups::read(state.store.as_ref(), id)
        .await?
        .counts();
    let mut page = job_page(
        &row,
        job,
        &browse,
        &browsed,
        running,
        refresh,
        detail.config,
    );
    page.count.groups = groups.as_ref().map(groups_line).unwrap_or_default();
    page.strata = Some(strata_plot::section(state.store.as_ref(), id, strata).await?);
    page.probes = probe_section::section(state.store.as_ref(), id).await?;
    templates::render("job.html", &page)
}

/// Both kinds of filter checked, whatever the job's kind, so that a bad value
/// is a 422 before the job is looked up; a value both read (`offset`,
/// `limit`) is named once.
fn checked(
    query: &BrowseQuery,
    proposals: &RawProposalsQuery,
) -> Result<(Browse, ProposalsQuery), ApiError> {
    match (query.check(), proposals.check()) {
        (Ok(browse), Ok(proposals)) => Ok((browse, proposals)),
        (Err(ApiError::Invalid(mut problems)), Err(ApiError::Invalid(more))) => {
            for problem in more {
                if !problems.contains(&problem) {
                    problems.push(problem);
                }
            }
            Err(ApiError::Invalid(problems))
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

/// `12 rollout groups, 3 flat (25%: 2 all 0, 1 all 1)`.
fn groups_line(g: &GroupCounts) -> String {
    let mut line = format!(
        "{} rollout group{}, {} flat ({:.0}%",
        g.groups,
        if g.groups == 1 { "" } else { "s" },
        g.flat,
        100.0 * g.flat_share
    );
    if g.flat > 0 {
        line.push_str(&format!(
            ": {} all 0, {} all 1",
            g.flat_at_zero, g.flat_at_one
        ));
    }
    line.push(')');
    line
}

fn tone(reward: Option<f64>) -> &'static str {
    match reward {
        Some(r) if r >= plots::SUCCESS_REWARD => "good",
        Some(r) if r <= 0.0 => "bad",
        Some(_) => "plain",
        None => "none",
    }
}

fn job_page(
    row: &JobRow,
    job: &JobView,
    browse: &Browse,
    browsed: &Browsed,
    running: Option<Running>,
    refresh: bool,
    config: String,
) -> JobPage {
    let id = job.id;
    let rows = &browsed.rows;
    let scored: Vec<f64> = rows.iter().filter_map(|r| r.reward).collect();
    let mean = (!scored.is_empty()).then(|| scored.iter().sum::<f64>() / scored.len() as f64);
    let limit = browse.filters.limit.map_or(PAGE_ROWS, |l| l as usize);
    let keep = |extra: &[(&str, String)]| browse.query_string(extra);
    let at = |offset: usize| {
        let mut pairs = vec![("offset", offset.to_string())];
        if let Some(l) = browse.filters.limit {
            pairs.push(("limit", l.to_string()));
        }
        keep(&pairs)
    };
    let (shown, pages) = pager::page(rows.len(), browse.offset, limit, at);
    let f = &browse.filters;
    let choices = |values: &[String], chosen: &Option<String>| {
        values
            .iter()
            .map(|v| Choice {
                value: v.clone(),
                selected: chosen.as_deref() == Some(v.as_str()),
            })
            .collect()
    };
    let export_filter = |min_reward: Option<String>| {
        let mut pairs: Vec<(&str, String)> = vec![("format", "openai".into())];
        let number = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
        pairs.push((
            "min_reward",
            min_reward.unwrap_or_else(|| number(f.min_reward)),
        ));
        pairs.push(("max_reward", number(f.max_reward)));
        for (key, value) in [
            ("termination", &f.termination),
            ("scenario", &f.scenario),
            ("persona", &f.persona),
            ("min_judge", &f.min_judge),
            ("drop_flagged", &f.drop_flagged),
        ] {
            pairs.push((key, value.clone().unwrap_or_default()));
        }
        pairs.retain(|(_, v)| !v.is_empty());
        serde_urlencoded::to_string(&pairs).unwrap_or_default()
    };
    let passed = f.min_reward.map_or(1.0, |m| m.max(1.0));
    let mut charts = vec![plots::reward_by_scenario(rows), plots::terminations(rows)];
    charts.extend(plots::pass_hat(rows));
    charts.extend(plots::judge_scores(rows, &browsed.judges));
    JobPage {
        title: format!("job {id}"),
        refresh,
        wide: true,
        job: head(row, job),
        running,
        count: Count {
            shown: rows.len(),
            total: browsed.total,
            filtered: browse.is_filtered(),
            scored: scored.len(),
            mean_reward: display::reward(mean),
            failed_items: job.counts.failed,
            groups: String::new(),
        },
        export: Export {
            query: export_filter(None),
            passed_query: export_filter(Some(passed.to_string())),
        },
        form: Form {
            terminations: choices(&browsed.options.terminations, &f.termination),
            scenarios: choices(&browsed.options.scenarios, &f.scenario),
            personas: choices(&browsed.options.personas, &f.persona),
            min_reward: f.min_reward.map(|v| v.to_string()).unwrap_or_default(),
            max_reward: f.max_reward.map(|v| v.to_string()).unwrap_or_default(),
            min_judge: f.min_judge.clone().unwrap_or_default(),
            drop_flagged: f.drop_flagged.clone().unwrap_or_default(),
            sort: browse.sort.column.key(),
            dir: if browse.sort.descending {
                "desc"
            } else {
                "asc"
            }
            .into(),
        },
        columns: headers(browse, browsed),
        rows: rows[shown]
            .iter()
            .map(|r| row_view(r, browsed, &keep(&[])))
            .collect(),
        pages,
        charts,
        strata: None,
        probes: None,
        config,
    }
}

fn headers(browse: &Browse, browsed: &Browsed) -> Vec<Header> {
    let plain = |label: &str, column, numeric| (label.to_string(), "", column, numeric);
    let mut columns: Vec<(String, &'static str, Column, bool)> = vec![
        plain("id", Column::Id, true),
        plain("scenario", Column::Scenario, false),
        plain("persona", Column::Persona, false),
        plain("sample", Column::Sample, true),
        plain("termination", Column::Termination, false),
        plain("reward", Column::Reward, true),
    ];
    for c in &browsed.components {
        columns.push((c.clone(), "reward", Column::Component(c.clone()), true));
    }
    for j in &browsed.judges {
        columns.push((j.clone(), "judge", Column::Judge(j.clone()), true));
    }
    columns.push(plain("messages", Column::Messages, true));
    columns
        .into_iter()
        .map(|(label, over, column, numeric)| {
            let current = browse.sort.column == column;
            // Numbers read best highest first; names A to Z.
            let descending = if current {
                !browse.sort.descending
            } else {
                numeric && column != Column::Id
            };
            let mut resorted = browse.clone();
            resorted.sort = browse::Sort { column, descending };
            Header {
                arrow: match (current, browse.sort.descending) {
                    (false, _) => "",
                    (true, false) => "▲",
                    (true, true) => "▼",
                },
                query: resorted.query_string(&[]),
                label,
                over,
                numeric,
            }
        })
        .collect()
}

fn row_view(r: &Row, browsed: &Browsed, filter: &str) -> RowView {
    let mut cells: Vec<Cell> = browsed
        .components
        .iter()
        .map(|c| {
            let score = r.components.get(c).copied();
            Cell {
                text: score.map_or_else(|| "–".into(), display::score),
                tone: tone(score),
            }
        })
        .collect();
    cells.extend(browsed.judges.iter().map(|j| match r.judges.get(j) {
        Some(cell) => Cell {
            text: cell.label.clone(),
            tone: "plain",
        },
        None => Cell {
            text: "–".into(),
            tone: "none",
        },
    }));
    RowView {
        id: r.id,
        query: filter.to_string(),
        scenario: r.scenario.clone(),
        persona: r.persona.clone(),
        sample: r.sample,
        termination: r.termination.clone(),
        reward: display::reward(r.reward),
        tone: tone(r.reward),
        messages: r.messages,
        cells,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_value_of_either_filter_is_named_and_one_both_read_is_named_once() {
        let query: BrowseQuery =
            serde_urlencoded::from_str("min_reward=abc&fate=lost&offset=-1").unwrap();
        let proposals: RawProposalsQuery =
            serde_urlencoded::from_str("min_reward=abc&fate=lost&offset=-1").unwrap();
        let Err(ApiError::Invalid(problems)) = checked(&query, &proposals) else {
            panic!("accepted");
        };
        let fields: Vec<&str> = problems
            .iter()
            .filter_map(|p| p.location.as_deref())
            .collect();
        assert_eq!(fields, ["min_reward", "offset", "fate"], "{problems:?}");
    }
}
