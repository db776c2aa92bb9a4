//! The JSON API under `/v1`.

use std::convert::Infallible;
use std::path::PathBuf;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use crate::config::{self, Job, Problem, Trust};
use crate::jobs;

use crate::report::strata::{self, StrataError, StrataRequest};

use super::filters::{self, RawConversationsQuery};
use super::query_values::{refuse_unparsed, Number};
use super::views::{self, ConversationEntry};
use super::{openapi, ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/jobs", post(create_job).get(list_jobs))
        .route("/v1/jobs/{id}", get(get_job))
        .route("/v1/jobs/{id}/cancel", post(cancel_job))
        .route("/v1/jobs/{id}/resume", post(resume_job))
        .route("/v1/jobs/{id}/conversations", get(list_conversations))
        .route("/v1/jobs/{id}/export", get(super::export::export_job))
        .route("/v1/jobs/{id}/events", get(job_events))
        .route("/v1/jobs/{id}/stats", get(job_stats))
        .route("/v1/compare-users", get(compare_users))
        .route("/v1/conversations/{id}", get(get_conversation))
        .merge(super::judging::router())
        .merge(super::evaluations::router())
        .merge(super::imports::router())
        .merge(super::synthesis::router())
        .merge(super::rollouts::router())
        .route(
            "/v1/openapi.json",
            get(|| async { Json(openapi::document()) }),
        )
}

#[derive(Debug, Deserialize, Default)]
pub(super) struct CreateQuery {
    /// Start a new job even if one with this name or config exists.
    #[serde(default)]
    pub new_job: bool,
    /// Folder (on the server, relative to its data root, and inside it) that
    /// relative paths in the config resolve against.
    pub base: Option<String>,
}

pub(super) const BODY_LABEL: &str = "request body";

/// A submitted config's text and the folder its relative paths resolve
/// against (`?base=`, which must lie inside the data root).
pub(super) fn submitted<'a>(
    state: &AppState,
    query: &CreateQuery,
    body: &'a [u8],
) -> Result<(&'a str, PathBuf), ApiError> {
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::Invalid(vec![Problem::in_file(BODY_LABEL, "is not UTF-8 text")]))?;
    let base = state.boundary.base(query.base.as_deref()).ok_or_else(|| {
        ApiError::Invalid(vec![Problem::at_field(
            BODY_LABEL,
            "?base",
            "must name a folder inside the service's data root, relative to it (no absolute \
                 path, no `..` or symlink out of it)",
        )])
    })?;
    Ok((text, base))
}

/// Read the config in the body: JSON when the content type says so, TOML otherwise.
fn job_from_body(
    state: &AppState,
    headers: &HeaderMap,
    query: &CreateQuery,
    body: &[u8],
) -> Result<Job, ApiError> {
    let (text, base) = submitted(state, query, body)?;
    let trust = Trust::Submitted(&state.boundary);
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    let loaded = if is_json {
        config::load::from_json(BODY_LABEL, text, &base, trust)
    } else {
        config::load::from_toml(BODY_LABEL, text, &base, trust)
    };
    let mut job = loaded.map_err(ApiError::Invalid)?;
    job.database = state.database.clone();
    Ok(job)
}

#[tracing::instrument(skip_all)]
async fn create_job(
    State(state): State<AppState>,
    Query(query): Query<CreateQuery>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let submitting = state.clone();
    let (row, existed) = super::blocking::off_the_workers(async move {
        let job = job_from_body(&submitting, &headers, &query, &body)?;
        Ok(jobs::check_and_submit(submitting.store.as_ref(), &job, query.new_job).await?)
    })
    .await?;
    start_submitted(&state, row.id, existed).await
}

/// Start working a job just submitted (unless nothing is left to do) and
/// answer with it: 201 when new, 200 when it existed.
pub(super) async fn start_submitted(
    state: &AppState,
    id: i64,
    existed: bool,
) -> Result<Response, ApiError> {
    let counts = state.store.item_counts(id).await?;
    if counts.pending + counts.leased > 0 {
        state.runs.start(state.jobs_context(), id, false);
    }
    let status = if existed {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    let view = views::job_view(state, views::job_row(state.store.as_ref(), id).await?).await?;
    let location = format!("/v1/jobs/{id}");
    Ok((status, [(header::LOCATION, location)], Json(view)).into_response())
}

async fn list_jobs(State(state): State<AppState>) -> Result<Response, ApiError> {
    let mut jobs = Vec::new();
    for row in state.store.all_jobs().await? {
        jobs.push(views::job_view(&state, row).await?);
    }
    Ok(Json(json!({ "jobs": jobs })).into_response())
}

async fn get_job(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
) -> Result<Response, ApiError> {
    Ok(Json(views::job_detail(&state, id).await?).into_response())
}

/// `?k=1,2,4`: the k of pass^k (each at least 1).
#[derive(Debug, Deserialize, Default)]
struct StatsQuery {
    k: Option<String>,
    /// `compare-users`: the baseline job and the job compared with it.
    a: Option<i64>,
    b: Option<i64>,
    /// The job's strata by this attribute (`sparring stats --by`).
    by: Option<String>,
    min_cell: Option<String>,
    bins: Option<String>,
    /// `compare-users`: hold A's users against B's real ones (`--realism`).
    #[serde(default)]
    realism: bool,
}

impl StatsQuery {
    fn ks(&self) -> Result<Vec<u64>, ApiError> {
        let Some(text) = self.k.as_deref() else {
            return Ok(crate::report::DEFAULT_KS.to_vec());
        };
        text.split(',')
            .map(|k| match k.trim().parse::<i64>() {
                Ok(k) if (1..=1_000).contains(&k) => Ok(k.unsigned_abs()),
                Err(_) => Err(ApiError::BadRequest(format!(
                    "query parameter `k`: '{k}' is not a number; give whole numbers from 1 to \
                     1,000, comma-separated (e.g. k=1,2,4), or leave `k` out"
                ))),
                Ok(_) => Err(ApiError::Invalid(vec![Problem::at_field(
                    "query",
                    "k",
                    format!("'{k}' is not a k of pass^k: give whole numbers from 1 to 1,000, comma-separated (e.g. k=1,2,4)"),
                )])),
            })
            .collect()
    }
}

fn stats_error(e: crate::report::StatsError) -> ApiError {
    match e {
        crate::report::StatsError::NoSuchJob(id) => ApiError::no_job(id),
        e => ApiError::Internal(crate::error_chain::error_chain(&e)),
    }
}

/// `sparring stats --job ID --json`: rewards, pass^k, judges, the simulated user.
#[tracing::instrument(skip(state))]
async fn job_stats(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
    Query(query): Query<StatsQuery>,
) -> Result<Response, ApiError> {
    let ks = query.ks()?;
    if let Some(request) = query.strata()? {
        let report = strata::job_strata(state.store.as_ref(), id, &request, &ks)
            .await
            .map_err(strata_error)?;
        return Ok(Json(report).into_response());
    }
    let report = crate::report::job_stats(state.store.as_ref(), id, &ks)
        .await
        .map_err(stats_error)?;
    Ok(Json(report).into_response())
}

impl StatsQuery {
    /// `by`, `min_cell` and `bins` checked: a number that does not read is a
    /// 400, one out of range (or given without `by`) a 422 naming its field.
    fn strata(&self) -> Result<Option<StrataRequest>, ApiError> {
        refuse_unparsed(&[
            (
                "min_cell",
                &self.min_cell,
                Number::Whole,
                "a whole number from 1 to 1,000,000",
            ),
            (
                "bins",
                &self.bins,
                Number::Whole,
                "a whole number from 2 to 20",
            ),
        ])?;
        let whole = |text: &Option<String>, default: u64| {
            text.as_deref()
                .and_then(|t| t.trim().parse::<i64>().ok())
                .map_or(default, |n| u64::try_from(n).unwrap_or(0))
        };
        let Some(by) = self.by.as_deref() else {
            if let Some(field) = [("min_cell", &self.min_cell), ("bins", &self.bins)]
                .into_iter()
                .find_map(|(field, value)| value.as_ref().map(|_| field))
            {
                return Err(ApiError::Invalid(vec![Problem::at_field(
                    "query",
                    field,
                    "is read only with `by` (the attribute the strata are of); give by=ATTR too, \
                     or leave it out",
                )]));
            }
            return Ok(None);
        };
        StrataRequest::new(
            by,
            whole(&self.min_cell, strata::DEFAULT_MIN_CELL),
            whole(&self.bins, strata::DEFAULT_BINS),
        )
        .map(Some)
        .map_err(|p| ApiError::Invalid(vec![Problem::at_field("query", p.field, p.message)]))
    }
}

/// A strata error as the API and the job page answer it: an unknown
/// attribute is a 422 naming `by`, with the attributes the job has.
pub(super) fn strata_error(e: StrataError) -> ApiError {
    match e {
        StrataError::NoSuchJob(id) => ApiError::no_job(id),
        e @ StrataError::UnknownAttribute { .. } => {
            let message = e.to_string();
            let message = message.strip_prefix("by: ").unwrap_or(&message).to_string();
            ApiError::Invalid(vec![Problem::at_field("query", "by", message)])
        }
        e => ApiError::Internal(crate::error_chain::error_chain(&e)),
    }
}

/// `sparring compare-users A B --json`, or with `realism=true`,
/// `sparring compare-users A B --realism --json`.
#[tracing::instrument(skip(state))]
async fn compare_users(
    State(state): State<AppState>,
    Query(query): Query<StatsQuery>,
) -> Result<Response, ApiError> {
    let ks = query.ks()?;
    let (Some(a), Some(b)) = (query.a, query.b) else {
        return Err(ApiError::Invalid(vec![Problem::at_field(
            "query",
            "a",
            "give both jobs: a=JOB_A&b=JOB_B (differences are B − A)",
        )]));
    };
    if query.realism {
        let realism = crate::report::realism::realism(state.store.as_ref(), a, b)
            .await
            .map_err(stats_error)?;
        return Ok(Json(realism).into_response());
    }
    let comparison = crate::report::compare_users::compare_users(state.store.as_ref(), a, b, &ks)
        .await
        .map_err(stats_error)?;
    Ok(Json(comparison).into_response())
}

#[tracing::instrument(skip(state))]
async fn cancel_job(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
) -> Result<Response, ApiError> {
    let row = views::job_row(state.store.as_ref(), id).await?;
    if !state.runs.stop(id) {
        use crate::store::JobStatus;
        match row.status {
            JobStatus::Pending | JobStatus::Running => {
                state.store.set_job_status(id, JobStatus::Cancelled).await?;
            }
            status => {
                return Err(ApiError::Conflict(format!(
                    "job {id} is {} already; only a pending or running job can be cancelled",
                    status.as_str()
                )))
            }
        }
    }
    let view = views::job_view(&state, views::job_row(state.store.as_ref(), id).await?).await?;
    Ok((StatusCode::ACCEPTED, Json(view)).into_response())
}

#[derive(Debug, Deserialize, Default)]
struct ResumeQuery {
    /// Put failed items back to pending first.
    #[serde(default)]
    retry_failed: bool,
}

#[tracing::instrument(skip(state))]
async fn resume_job(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
    Query(query): Query<ResumeQuery>,
) -> Result<Response, ApiError> {
    views::job_row(state.store.as_ref(), id).await?;
    if state.runs.is_running(id) {
        return Err(ApiError::Conflict(format!(
            "job {id} is running here already"
        )));
    }
    state
        .runs
        .start(state.jobs_context(), id, query.retry_failed);
    let view = views::job_view(&state, views::job_row(state.store.as_ref(), id).await?).await?;
    Ok((StatusCode::ACCEPTED, Json(view)).into_response())
}

async fn list_conversations(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
    Query(query): Query<RawConversationsQuery>,
) -> Result<Response, ApiError> {
    query.refuse_unparsed()?;
    let query = query.check()?;
    views::job_row(state.store.as_ref(), id).await?;
    let page = filters::conversations_page(state.store.as_ref(), id, &query).await?;
    let conversations: Vec<ConversationEntry> = page
        .conversations
        .iter()
        .map(ConversationEntry::from)
        .collect();
    Ok(Json(json!({
        "conversations": conversations,
        "next": page.next.map(|n| n.to_string()),
    }))
    .into_response())
}

async fn get_conversation(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
) -> Result<Response, ApiError> {
    Ok(Json(views::conversation_detail(state.store.as_ref(), id).await?).into_response())
}

/// Progress as server-sent events: a `progress` event with the job and its
/// counts at once and then every interval; once the job is no longer pending
/// or running (and not worked here), a last `progress` and a `done` event.
async fn job_events(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
) -> Result<Response, ApiError> {
    views::job_row(state.store.as_ref(), id).await?;
    let interval = state.event_interval;
    let stream =
        futures_util::stream::unfold((state, Next::First), move |(state, next)| async move {
            match next {
                Next::End => return None,
                Next::Done => {
                    let done = Event::default().event("done").data("{}");
                    return Some((Ok::<_, Infallible>(done), (state, Next::End)));
                }
                Next::Later => tokio::time::sleep(interval).await,
                Next::First => {}
            }
            let (event, next) = match progress_event(&state, id).await {
                Ok((event, true)) => (event, Next::Done),
                Ok((event, false)) => (event, Next::Later),
                Err(e) => {
                    tracing::error!(job = id, "progress event failed: {e}");
                    let event = Event::default()
                        .event("error")
                        .data("cannot read the job's progress");
                    (event, Next::End)
                }
            };
            Some((Ok(event), (state, next)))
        });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}

enum Next {
    First,
    Later,
    Done,
    End,
}

async fn progress_event(state: &AppState, id: i64) -> Result<(Event, bool), ApiError> {
    let view = views::job_view(state, views::job_row(state.store.as_ref(), id).await?).await?;
    let finished = view.finished();
    let event = Event::default()
        .event("progress")
        .json_data(&view)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok((event, finished))
}
