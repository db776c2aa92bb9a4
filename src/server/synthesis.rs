//! Synthesis jobs over HTTP. `POST /v1/synthesis-jobs` reads a SYNTH.toml
//! body (checked as the submitter's: paths inside the data root, keys only
//! through operator endpoints), submits it with the library call `sparring
//! synthesize` makes, and works it here like any job (events, cancel,
//! resume, stats). `GET /v1/jobs/{id}/scenarios` is the accepted scenarios as
//! the JSONL `sparring run` reads: the service writes no file.

use std::path::Path;

use axum::body::Bytes;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::config::synth::{from_stored, from_toml};
use crate::config::Trust;
use crate::jobs::synthesis::submit_synthesis;
use crate::store::JobKind;
use crate::synth::tally::tally;

use super::api::{start_submitted, submitted, CreateQuery, BODY_LABEL};
use super::{views, ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/synthesis-jobs", post(create_synthesis_job))
        .route("/v1/jobs/{id}/scenarios", get(scenarios))
}

#[tracing::instrument(skip_all)]
async fn create_synthesis_job(
    State(state): State<AppState>,
    Query(query): Query<CreateQuery>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let submitting = state.clone();
    let (row, existed) = super::blocking::off_the_workers(async move {
        let (text, base) = submitted(&submitting, &query, &body)?;
        let mut config = from_toml(
            Path::new(BODY_LABEL),
            text,
            &base,
            Trust::Submitted(&submitting.boundary),
        )
        .map_err(ApiError::Invalid)?;
        config.head.database = submitting.database.clone();
        Ok(submit_synthesis(submitting.store.as_ref(), &config, query.new_job).await?)
    })
    .await?;
    start_submitted(&state, row.id, existed).await
}

/// The accepted scenarios of a synthesis job so far, in proposal order.
#[tracing::instrument(skip(state))]
async fn scenarios(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
) -> Result<Response, ApiError> {
    let row = views::job_row(state.store.as_ref(), id).await?;
    if row.kind != JobKind::Synthesis {
        return Err(ApiError::Conflict(format!(
            "job {id} is a {} job; only synthesis jobs have scenarios (its conversations are at /v1/jobs/{id}/export)",
            row.kind
        )));
    }
    let config = from_stored(row.id, &row.config_snapshot).map_err(|problems| {
        ApiError::Internal(format!(
            "job {id}'s stored config cannot be read: {}",
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ))
    })?;
    let accepted = tally(state.store.as_ref(), id, &config, |_, _| {})
        .await?
        .acceptance
        .into_accepted();
    let mut body = String::new();
    for scenario in &accepted {
        body.push_str(
            &serde_json::to_string(scenario).map_err(|e| ApiError::Internal(e.to_string()))?,
        );
        body.push('\n');
    }
    let file = format!("attachment; filename=\"job{id}-scenarios.jsonl\"");
    Ok((
        [
            (header::CONTENT_TYPE, "application/jsonl".to_string()),
            (header::CONTENT_DISPOSITION, file),
        ],
        body,
    )
        .into_response())
}
