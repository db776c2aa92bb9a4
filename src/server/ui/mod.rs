//! The web UI, rendered on the server from tera templates
//! (`src/server/templates/`, autoescaped; no script, no build step): jobs
//! with progress, a job's conversations with plots, filters and sorting, a
//! conversation as a chat with why it failed, a judgment side by side, a
//! synthesis job's proposals with every attempt of each, and an evaluation's
//! leaderboard with its pictures.
//! Auth: see `auth.rs` (open `/?token=TOKEN` once).

mod browse;
mod conversation_page;
mod dataset;
mod display;
/// Its sorts name the values the OpenAPI document gives `sort`.
pub(super) mod evaluation_page;
mod evaluation_plots;
mod job_page;
mod jobs_page;
mod judgment_page;
mod names;
mod pager;
mod plots;
mod probe_section;
mod proposal_page;
/// Its fates name the values the OpenAPI document gives `fate`.
pub(super) mod proposals;
mod strata_plot;
mod synthesis_page;
mod templates;
mod transcript;
mod why;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Serialize;

use super::{ApiError, AppState};
use browse::BrowseQuery;
use proposals::RawProposalsQuery;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(jobs))
        .route("/jobs/{id}", get(job))
        .route("/jobs/{id}/proposals/{index}", get(proposal))
        .route("/conversations/{id}", get(conversation))
        .route("/judgments/{id}", get(judgment))
        .route("/evaluations/{id}", get(evaluation))
}

async fn jobs(State(state): State<AppState>) -> Response {
    page(jobs_page::render(&state).await)
}

/// A generation job's page applies the conversation filters of the query, a
/// synthesis job's the proposal filters; both are checked on either.
async fn job(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
    query: Result<Query<BrowseQuery>, QueryRejection>,
    proposals: Result<Query<RawProposalsQuery>, QueryRejection>,
    strata: Result<Query<strata_plot::StrataQuery>, QueryRejection>,
) -> Response {
    match (checked(query), checked(proposals), checked(strata)) {
        (Ok(query), Ok(proposals), Ok(strata)) => {
            page(job_page::render(&state, id, &query, &proposals, &strata).await)
        }
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => error_page(e),
    }
}

async fn proposal(
    State(state): State<AppState>,
    UrlPath((id, index)): UrlPath<(i64, i64)>,
    query: Result<Query<RawProposalsQuery>, QueryRejection>,
) -> Response {
    match checked(query) {
        Ok(query) => page(proposal_page::render(&state, id, index, &query).await),
        Err(e) => error_page(e),
    }
}

async fn conversation(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
    query: Result<Query<BrowseQuery>, QueryRejection>,
) -> Response {
    match checked(query) {
        Ok(query) => page(conversation_page::render(&state, id, &query).await),
        Err(e) => error_page(e),
    }
}

async fn evaluation(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
    query: Result<Query<evaluation_page::EvaluationQuery>, QueryRejection>,
) -> Response {
    match checked(query) {
        Ok(query) => page(evaluation_page::render(&state, id, &query).await),
        Err(e) => error_page(e),
    }
}

async fn judgment(State(state): State<AppState>, UrlPath(id): UrlPath<i64>) -> Response {
    page(judgment_page::render(&state, id).await)
}

/// The browser's query; one that does not even read as text pairs is a 400
/// that says which part.
fn checked<T>(query: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    query.map(|Query(q)| q).map_err(|e| {
        ApiError::BadRequest(format!("the query string does not read: {}", e.body_text()))
    })
}

fn page(rendered: Result<String, ApiError>) -> Response {
    match rendered {
        Ok(html) => Html(html).into_response(),
        Err(e) => error_page(e),
    }
}

#[derive(Serialize)]
struct ErrorPage {
    title: String,
    status: String,
    message: String,
    problems: Vec<String>,
}

/// Errors as HTML pages; detail of internal ones only in the log.
fn error_page(e: ApiError) -> Response {
    let status = e.status_code();
    let (message, problems) = match &e {
        ApiError::Internal(detail) => {
            tracing::error!("page failed: {detail}");
            (
                "internal error; the server log has the detail".to_string(),
                Vec::new(),
            )
        }
        ApiError::Invalid(problems) => (
            "The address has values that cannot be used:".to_string(),
            problems
                .iter()
                .map(|p| match &p.location {
                    Some(field) => format!("{field}: {}", p.message),
                    None => p.message.clone(),
                })
                .collect(),
        ),
        other => (other.to_string(), Vec::new()),
    };
    let shown = ErrorPage {
        title: "error".into(),
        status: status.to_string(),
        message,
        problems,
    };
    match templates::render("error.html", &shown) {
        Ok(html) => (status, Html(html)).into_response(),
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, shown.message).into_response(),
    }
}
