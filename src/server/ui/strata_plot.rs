//! The job page's strata (`?by=ATTR`, `min_cell`, `bins`): the job's
//! conversations broken down by one attribute (`report::strata`), drawn as
//! a dot per cell at its mean reward with its 95% interval as a line, the
//! job's mean as a dashed rule; `macros.html` writes the SVG. No script.

use serde::{Deserialize, Serialize};

use crate::config::Problem;
use crate::report::strata::{self, Cell, StrataReport, StrataRequest};
use crate::report::DEFAULT_KS;
use crate::store::Store;

use super::super::ApiError;
use super::display;
use super::plots::Tick;

/// The strata part of the job page's query.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct StrataQuery {
    pub by: Option<String>,
    pub min_cell: Option<String>,
    pub bins: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct StrataSection {
    pub by: String,
    /// Links to the job's other attributes.
    pub attributes: Vec<AttributeLink>,
    pub chart: StrataChart,
    pub rows: Vec<StrataRow>,
    pub job_line: String,
    pub min_cell: u64,
    pub binning: String,
}

#[derive(Debug, Serialize)]
pub struct AttributeLink {
    pub name: String,
    pub query: String,
    pub selected: bool,
}

#[derive(Debug, Serialize)]
pub struct StrataChart {
    pub width: u32,
    pub height: u32,
    pub x0: u32,
    pub ticks: Vec<Tick>,
    /// The job's mean reward's x, when anything is scored.
    pub job_x: Option<u32>,
    pub dots: Vec<Dot>,
}

#[derive(Debug, Serialize)]
pub struct Dot {
    pub label: String,
    pub title: String,
    pub y: u32,
    pub text_y: u32,
    pub x: u32,
    pub lo_x: u32,
    pub hi_x: u32,
    pub value: String,
    pub value_x: u32,
    /// `small` (too small), `below` (under the job's mean) or `plain`.
    pub tone: &'static str,
}

#[derive(Debug, Serialize)]
pub struct StrataRow {
    pub value: String,
    pub conversations: u64,
    pub scored: u64,
    pub reward: String,
    pub difference: String,
    pub any_flag: String,
    pub terminations: String,
    pub too_small: bool,
}

const WIDTH: u32 = 520;
const X0: u32 = 150;
const SPACE: u32 = 260;
const ROW: u32 = 22;
const TOP: u32 = 6;
const AXIS: u32 = 20;

fn x(value: f64) -> u32 {
    X0 + (value.clamp(0.0, 1.0) * f64::from(SPACE)).round() as u32
}

/// The checked request of `query`; a bad number is a 422 naming its field.
fn request(query: &StrataQuery, by: String) -> Result<StrataRequest, ApiError> {
    let number = |field: &'static str, text: &Option<String>, default: u64| match text
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        None => Ok(default),
        Some(t) => t.parse::<u64>().map_err(|_| {
            ApiError::Invalid(vec![Problem::at_field(
                "query",
                field,
                format!("'{t}' is not a whole number; give one, or leave `{field}` out"),
            )])
        }),
    };
    let min_cell = number("min_cell", &query.min_cell, strata::DEFAULT_MIN_CELL)?;
    let bins = number("bins", &query.bins, strata::DEFAULT_BINS)?;
    StrataRequest::new(&by, min_cell, bins)
        .map_err(|p| ApiError::Invalid(vec![Problem::at_field("query", p.field, p.message)]))
}

/// The section of job `id`: by `?by=`, else by its first persona attribute,
/// else by persona.
pub async fn section(
    store: &dyn Store,
    id: i64,
    query: &StrataQuery,
) -> Result<StrataSection, ApiError> {
    let by = match query.by.as_deref().map(str::trim).filter(|b| !b.is_empty()) {
        Some(by) => by.to_string(),
        None => store
            .job_personas(id)
            .await?
            .iter()
            .flat_map(|p| p.attributes.keys())
            .min()
            .cloned()
            .unwrap_or_else(|| "persona".into()),
    };
    let request = request(query, by)?;
    let report = strata::job_strata(store, id, &request, &DEFAULT_KS)
        .await
        .map_err(super::super::api::strata_error)?;
    Ok(of_report(&report))
}

fn of_report(r: &StrataReport) -> StrataSection {
    let attributes = r
        .attributes
        .iter()
        .map(|name| AttributeLink {
            query: serde_urlencoded::to_string([("by", name.as_str())]).unwrap_or_default(),
            selected: *name == r.by,
            name: name.clone(),
        })
        .collect();
    let dots = r
        .cells
        .iter()
        .filter_map(|c| c.reward.map(|m| (c, m)))
        .enumerate()
        .map(|(i, (c, m))| {
            let y = TOP + i as u32 * ROW;
            let (lo, hi) = m.ci95.unwrap_or((m.mean, m.mean));
            let value = format!("{} (n={})", display::score(m.mean), c.scored);
            Dot {
                label: display::one_line(&c.value, 20),
                title: format!(
                    "{} = {}: mean reward {} [{}, {}], n = {}{}",
                    r.by,
                    c.value,
                    display::score(m.mean),
                    display::score(lo),
                    display::score(hi),
                    c.scored,
                    if c.too_small { ", too small" } else { "" }
                ),
                y: y + 9,
                text_y: y + 13,
                x: x(m.mean),
                lo_x: x(lo),
                hi_x: x(hi),
                value_x: x(hi) + 6,
                value,
                tone: tone(c),
            }
        })
        .collect::<Vec<_>>();
    let height = TOP + dots.len() as u32 * ROW + AXIS;
    let ticks = [0.0, 0.25, 0.5, 0.75, 1.0]
        .into_iter()
        .map(|v| Tick {
            x: x(v),
            label: display::score(v),
        })
        .collect();
    let rows = r
        .cells
        .iter()
        .map(|c| StrataRow {
            value: c.value.clone(),
            conversations: c.conversations,
            scored: c.scored,
            reward: c.reward.map_or_else(
                || "–".into(),
                |m| display::mean_with_interval(m.mean, m.ci95),
            ),
            difference: c
                .difference
                .map_or_else(|| "–".into(), |d| format!("{d:+.3}")),
            any_flag: c
                .simulated_user
                .any_flag
                .as_ref()
                .and_then(|a| a.rate)
                .map_or_else(|| "–".into(), |m| format!("{:.0}%", 100.0 * m.mean)),
            terminations: c
                .terminations
                .iter()
                .map(|t| format!("{} {}", t.reason, t.count))
                .collect::<Vec<_>>()
                .join(", "),
            too_small: c.too_small,
        })
        .collect();
    StrataSection {
        by: r.by.clone(),
        attributes,
        chart: StrataChart {
            width: WIDTH,
            height,
            x0: X0,
            ticks,
            job_x: r.reward.map(|m| x(m.mean)),
            dots,
        },
        rows,
        job_line: r.reward.map_or_else(
            || "nothing scored".into(),
            |m| format!("job mean reward {:.3} over {} scored", m.mean, r.scored),
        ),
        min_cell: r.min_cell,
        binning: r
            .binning
            .as_ref()
            .map(|b| format!("numbers cut into at most {} bins: {}", b.bins, b.rule))
            .unwrap_or_default(),
    }
}

fn tone(c: &Cell) -> &'static str {
    if c.too_small {
        "small"
    } else if c.difference.is_some_and(|d| d < 0.0) {
        "below"
    } else {
        "plain"
    }
}
