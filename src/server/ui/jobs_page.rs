//! `/`: every job, newest first, with its dates, progress and mean reward
//! (a synthesis job: its scenarios accepted of its target).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use serde::Serialize;

use crate::store::JobRow;
use crate::synth::tally::tally;

use super::super::views::{self, JobView};
use super::super::{ApiError, AppState};
use super::names::{self, Kind};
use super::{display, proposals, templates};

#[derive(Serialize)]
struct JobsPage {
    title: &'static str,
    refresh: bool,
    jobs: Vec<JobLine>,
    evaluations: Vec<EvaluationLine>,
}

/// A stored evaluation (`sparring evaluate`), newest first.
#[derive(Serialize)]
struct EvaluationLine {
    id: i64,
    name: String,
    policies: String,
}

#[derive(Serialize)]
pub struct JobLine {
    pub id: i64,
    pub name: String,
    pub label: String,
    pub kind: Kind,
    pub status: &'static str,
    pub created: String,
    pub updated: String,
    pub progress: Progress,
    pub conversations: Option<i64>,
    pub mean_reward: String,
    /// A synthesis job's `12 of 200 accepted`.
    pub accepted: Option<String>,
}

#[derive(Serialize)]
pub struct Progress {
    pub max: i64,
    pub value: i64,
    pub done: i64,
    pub failed: i64,
    pub left: i64,
    /// Items leased right now: conversations (or judgments) in progress.
    pub in_progress: i64,
}

pub fn progress(job: &JobView) -> Progress {
    Progress {
        max: job.total.max(1),
        value: job.counts.done + job.counts.failed,
        done: job.counts.done,
        failed: job.counts.failed,
        left: job.counts.pending + job.counts.leased,
        in_progress: job.counts.leased,
    }
}

pub async fn render(state: &AppState) -> Result<String, ApiError> {
    let mut jobs = Vec::new();
    let mut refresh = false;
    let mut rows = state.store.all_jobs().await?;
    rows.sort_by_key(|r| std::cmp::Reverse(r.id));
    for row in rows {
        let label = names::label(&row);
        let kind = names::kind(&row);
        let (conversations, mean_reward) = match kind {
            Kind::Generation | Kind::Import => {
                let summary = state.store.job_summary(row.id).await?;
                (Some(summary.conversations), summary.mean_reward)
            }
            Kind::Judging | Kind::Synthesis => (None, None),
        };
        let synthesis = (kind == Kind::Synthesis).then(|| row.clone());
        let job = views::job_view(state, row).await?;
        let accepted = match synthesis {
            Some(row) => Some(accepted(state, &row, job.finished()).await?),
            None => None,
        };
        refresh |= !job.finished();
        jobs.push(JobLine {
            id: job.id,
            label,
            kind,
            status: job.status.as_str(),
            created: display::date(job.created_at),
            updated: display::date(job.updated_at),
            progress: progress(&job),
            conversations,
            mean_reward: display::reward(mean_reward),
            accepted,
            name: job.name,
        });
    }
    let evaluations = state
        .store
        .all_evaluations()
        .await?
        .into_iter()
        .map(|e| EvaluationLine {
            id: e.id,
            name: e.name,
            policies: e
                .policies
                .iter()
                .map(|p| p.policy.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
        .collect();
    templates::render(
        "jobs.html",
        &JobsPage {
            title: "jobs",
            refresh,
            jobs,
            evaluations,
        },
    )
}

/// A job of a database: (its URL, the job's id).
type JobKey = (String, i64);

/// The accepted count of finished synthesis jobs, with the `updated_at` it
/// was counted at: deciding it walks every proposal, and a finished job's
/// proposals change only when it is resumed (which updates it).
static FINISHED_COUNTS: LazyLock<Mutex<HashMap<JobKey, (i64, String)>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// `12 of 200 accepted`, decided from the stored proposals as the job
/// decides them.
async fn accepted(state: &AppState, row: &JobRow, finished: bool) -> Result<String, ApiError> {
    let key = (state.database.clone(), row.id);
    let remembered = |counts: &HashMap<JobKey, (i64, String)>| {
        counts
            .get(&key)
            .filter(|(at, _)| *at == row.updated_at)
            .map(|(_, text)| text.clone())
    };
    if finished {
        if let Some(text) = FINISHED_COUNTS.lock().ok().and_then(|c| remembered(&c)) {
            return Ok(text);
        }
    }
    let config = proposals::stored_config(row)?;
    let summary = tally(state.store.as_ref(), row.id, &config, |_, _| {})
        .await?
        .summary;
    let text = format!("{} of {} accepted", summary.accepted, config.head.target);
    if finished {
        if let Ok(mut counts) = FINISHED_COUNTS.lock() {
            counts.insert(key, (row.updated_at, text.clone()));
        }
    }
    Ok(text)
}
