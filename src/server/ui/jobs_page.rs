//! `/`: every job, newest first, with its dates, progress and mean reward.

use serde::Serialize;

use super::super::views::{self, JobView};
use super::super::{ApiError, AppState};
use super::names::{self, Kind};
use super::{display, templates};

#[derive(Serialize)]
struct JobsPage {
    title: &'static str,
    refresh: bool,
    jobs: Vec<JobLine>,
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
            Kind::Generation => {
                let summary = state.store.job_summary(row.id).await?;
                (Some(summary.conversations), summary.mean_reward)
            }
            Kind::Judging | Kind::Synthesis => (None, None),
        };
        let job = views::job_view(state, row).await?;
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
            name: job.name,
        });
    }
    templates::render(
        "jobs.html",
        &JobsPage {
            title: "jobs",
            refresh,
            jobs,
        },
    )
}
