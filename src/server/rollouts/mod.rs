//! `POST /v1/rollouts`: rollouts on demand for a trainer that is not NeMo
//! Gym. The request names a job config (for the simulated user, the
//! environment and the limits), the scenarios, `k` and the policy's
//! endpoint; the answer streams each finished rollout as a line of NDJSON,
//! with its group's statistics once the group's k rollouts are finished.
//! Every rollout is stored in a job of its own (stats, exports and the UI see
//! it); the conversations in flight are bounded by the job's concurrency, the
//! stream reads the store by cursor, and a request that goes away cancels
//! its job. docs/rollouts.md is the contract.

mod groups;
mod inline;
mod lines;
mod request;
mod stream;

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;

use crate::jobs::{self, RunOptions};

use super::{ApiError, AppState};
use lines::Line;
use request::{Asked, RolloutsRequest};
use stream::Signal;

pub(super) use request::{K, MAX_ROLLOUTS};

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/rollouts", post(rollouts))
}

#[tracing::instrument(skip_all)]
async fn rollouts(State(state): State<AppState>, body: Bytes) -> Result<Response, ApiError> {
    let request = RolloutsRequest::read(&body)?;
    let checking = state.clone();
    let Asked {
        job,
        prepared,
        k,
        kept,
    } = super::blocking::off_the_workers(async move { request.job(&checking).await }).await?;
    let groups = prepared.scenarios.len();
    // Refused here, the request's inline scenarios go with `kept`.
    let (row, _) = jobs::submit(state.store.as_ref(), &job, &prepared, true).await?;
    if let Some(kept) = kept {
        kept.accepted();
    }
    let job_id = row.id;
    let first = Line::Job {
        job_id,
        name: &row.name,
        k,
        groups,
        rollouts: groups as u64 * u64::from(k),
    }
    .text();
    let signal = Arc::new(Signal::default());
    let ctx = state.jobs_context();
    let sink = signal.clone();
    let started = state
        .runs
        .start_with(job_id, state.store.clone(), move |stop| async move {
            let options = RunOptions {
                new_job: true,
                progress: Some(sink.clone()),
                stop: Some(stop),
                ..RunOptions::default()
            };
            let worked = jobs::work_submitted(&ctx, row, &job, prepared, &options).await;
            sink.end();
            worked.map(|report| (report.job.status, report.counts))
        });
    if !started {
        return Err(ApiError::Internal(format!(
            "job {job_id}, just made, already runs here"
        )));
    }
    let lines = stream::rollouts(
        state.store.clone(),
        state.runs.clone(),
        (job_id, k),
        first,
        signal,
    );
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/x-ndjson".to_string()),
            (header::LOCATION, format!("/v1/jobs/{job_id}")),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        Body::from_stream(lines),
    )
        .into_response())
}
