//! `POST /v1/imports`: conversations sparring did not generate, stored as an
//! import job, as `sparring import` does. The request names files inside the
//! data root (`{"name", "files", "format", "skip_invalid"}`), or is itself
//! the conversations, one JSON object per line (`Content-Type:
//! application/x-ndjson`, `?name=` and the rest in the query), within the
//! body limit.

use std::path::Path;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use crate::config::Problem;
use crate::import::{Format, ImportRequest, Source};
use crate::jobs::import::{self as importing, ImportReport};
use crate::jobs::RunOptions;

use super::views;
use super::{ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/imports", post(create_import))
}

const BODY_LABEL: &str = "request body";

/// The JSON request: files inside the data root.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilesRequest {
    name: String,
    /// Paths relative to the data root.
    files: Vec<String>,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    skip_invalid: bool,
}

/// The query of an NDJSON body (a JSON request has none).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BodyQuery {
    name: Option<String>,
    format: Option<String>,
    skip_invalid: Option<bool>,
}

#[derive(Debug, Serialize)]
struct ImportView {
    job: views::JobView,
    /// Made by this import (201), not added to (200).
    created: bool,
    conversations: u64,
    added: u64,
    invalid: u64,
    sources: Vec<SourceView>,
    /// The invalid lines skipped (`skip_invalid`), the first 1,000.
    skipped: Vec<ProblemView>,
}

#[derive(Debug, Serialize)]
struct SourceView {
    source: String,
    format: &'static str,
    detected: bool,
    conversations: u64,
    added: u64,
    invalid: u64,
    /// Tools inferred from the calls, simulations that seem paired with the
    /// wrong tasks (see `SourceReport::warnings`).
    warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
struct ProblemView {
    file: String,
    location: Option<String>,
    message: String,
}

fn format_of(field: &str, name: Option<&str>) -> Result<Option<Format>, Problem> {
    match name {
        None => Ok(None),
        Some(name) => {
            Format::from_user(name).map_err(|why| Problem::at_field(BODY_LABEL, field, why))
        }
    }
}

fn is_ndjson(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| {
            let v = v.trim();
            v.eq_ignore_ascii_case("application/x-ndjson")
                || v.eq_ignore_ascii_case("application/jsonl")
        })
}

/// The request as an [`ImportRequest`], every problem at once.
fn request_of(
    state: &AppState,
    headers: &HeaderMap,
    query: BodyQuery,
    body: &Bytes,
) -> Result<ImportRequest, ApiError> {
    if is_ndjson(headers) {
        let text = std::str::from_utf8(body).map_err(|e| {
            ApiError::Invalid(vec![Problem::in_file(
                BODY_LABEL,
                format!("not UTF-8 text ({e}); send one JSON object per line"),
            )])
        })?;
        let format = format_of("format", query.format.as_deref()).map_err(one)?;
        return Ok(ImportRequest {
            name: query.name.unwrap_or_default(),
            sources: vec![Source::text(text, BODY_LABEL)],
            format,
            skip_invalid: query.skip_invalid.unwrap_or(false),
        });
    }
    let request: FilesRequest = serde_json::from_slice(body).map_err(|e| {
        let problem = Problem::from_json_error(BODY_LABEL, &e);
        ApiError::Invalid(vec![Problem::new(
            BODY_LABEL,
            problem.location,
            format!(
                "{}; send {{\"name\": NAME, \"files\": [PATH, …]}} with paths relative to the \
                 data root, or the conversations themselves as NDJSON \
                 (Content-Type: application/x-ndjson, ?name=NAME)",
                problem.message
            ),
        )])
    })?;
    let mut problems = Vec::new();
    let format = format_of("format", request.format.as_deref()).unwrap_or_else(|p| {
        problems.push(p);
        None
    });
    let root = state.boundary.data_root();
    let mut sources = Vec::new();
    for (i, file) in request.files.iter().enumerate() {
        let field = format!("files[{i}]");
        match state
            .boundary
            .contain(Path::new(BODY_LABEL), &field, root, Path::new(file))
        {
            Ok(path) => sources.push(Source::file(path, file.clone())),
            Err(problem) => problems.push(problem),
        }
    }
    if !problems.is_empty() {
        return Err(ApiError::Invalid(problems));
    }
    Ok(ImportRequest {
        name: request.name,
        sources,
        format,
        skip_invalid: request.skip_invalid,
    })
}

fn one(problem: Problem) -> ApiError {
    ApiError::Invalid(vec![problem])
}

#[tracing::instrument(skip_all)]
async fn create_import(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<BodyQuery>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let reading = state.clone();
    let checked = super::blocking::off_the_workers(async move {
        let request = request_of(&reading, &headers, query, &body)?;
        let problems = request.problems("name", "files");
        if !problems.is_empty() {
            return Err(ApiError::Invalid(problems));
        }
        Ok(importing::check(&request, &RunOptions::default()).await?)
    })
    .await?;
    let options = RunOptions::default();
    // Its own task: a request that outlives the service's timeout ends, and
    // the import goes on to the end (the job shows it).
    let store = state.store.clone();
    let report = tokio::spawn(async move { importing::import(store, checked, &options).await })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))??;
    let status = if report.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let view = view_of(&state, &report).await?;
    Ok((status, Json(view)).into_response())
}

async fn view_of(state: &AppState, report: &ImportReport) -> Result<ImportView, ApiError> {
    Ok(ImportView {
        job: views::job_view(state, report.job.clone()).await?,
        created: report.created,
        conversations: report.conversations(),
        added: report.added(),
        invalid: report.invalid(),
        sources: report
            .sources
            .iter()
            .map(|s| SourceView {
                source: s.shown.clone(),
                format: s.format.as_str(),
                detected: s.detected,
                conversations: s.conversations,
                added: s.added,
                invalid: s.invalid,
                warnings: s.warnings(),
            })
            .collect(),
        skipped: report
            .skipped
            .iter()
            .map(|p| ProblemView {
                file: p.file.display().to_string(),
                location: p.location.clone(),
                message: p.message.clone(),
            })
            .collect(),
    })
}
