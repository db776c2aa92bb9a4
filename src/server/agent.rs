//! The routes of `sparring agent`: NeMo Gym's agent-server contract, answered
//! by `crate::agent` for one job config. NeMo Gym's `ServerClient` calls
//! them at the server's root, without a token: `POST /run`, `POST
//! /v1/responses` (also under `/ng-rollout/{rollout_id}/` and
//! `/ng-rollout/{rollout_id}/training-token-capture/`, as NeMo Gym's agents
//! register them), `POST /aggregate_metrics`, and `GET /health`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use crate::agent::{metrics, Agent, RunFailure, RunRequest};

/// Largest run request accepted (rows carry long system prompts and tools).
pub const AGENT_BODY_LIMIT: usize = 32 * 1024 * 1024;

/// What the handlers share: the agent, its cap on rollouts in flight (the
/// job's `concurrency`; more requests wait for a slot) and the token every
/// route but `/health` wants, if any (`super::agent_auth`).
#[derive(Clone)]
pub struct AgentState {
    pub agent: Arc<Agent>,
    pub slots: Arc<Semaphore>,
    pub token: Option<Arc<str>>,
}

impl AgentState {
    pub fn new(agent: Arc<Agent>, concurrency: usize) -> AgentState {
        AgentState {
            agent,
            slots: Arc::new(Semaphore::new(concurrency.max(1))),
            token: None,
        }
    }

    /// The same, wanting `token` on every route but `/health`.
    pub fn with_token(self, token: Option<String>) -> AgentState {
        AgentState {
            token: token.map(Arc::from),
            ..self
        }
    }
}

pub fn agent_router(state: AgentState) -> Router {
    let token = state.token.clone();
    Router::new()
        .route("/run", post(run))
        .route("/v1/responses", post(responses))
        .route("/ng-rollout/{rollout_id}/v1/responses", post(responses))
        .route(
            "/ng-rollout/{rollout_id}/training-token-capture/v1/responses",
            post(responses),
        )
        .route("/aggregate_metrics", post(aggregate_metrics))
        .route("/health", get(health))
        .layer(DefaultBodyLimit::max(AGENT_BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(
            token,
            super::agent_auth::require_agent_token,
        ))
        .layer(axum::middleware::from_fn(
            super::json_errors::json_detail_errors,
        ))
        .layer(super::json_errors::nosniff())
        .with_state(state)
}

/// Serve until Ctrl-C or SIGTERM; requests in flight finish first.
pub async fn serve_agent(
    listener: tokio::net::TcpListener,
    state: AgentState,
) -> std::io::Result<()> {
    axum::serve(listener, agent_router(state))
        .with_graceful_shutdown(async {
            let signal = crate::jobs::shutdown_signal().await;
            tracing::info!(signal = signal.name(), "the agent server stops");
        })
        .await
}

fn answer(status: u16, body: Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(body)).into_response()
}

fn failure(e: RunFailure) -> Response {
    match &e {
        RunFailure::Invalid(_) => {}
        RunFailure::Rollout { .. } => tracing::warn!("run request failed: {e}"),
        RunFailure::Store(_) => tracing::error!("run request failed: {e}"),
    }
    answer(e.status(), e.body())
}

#[tracing::instrument(skip_all)]
async fn run(State(state): State<AgentState>, body: Bytes) -> Response {
    let request = match RunRequest::read(&body) {
        Ok(request) => request,
        Err(e) => return failure(e.into()),
    };
    // Closed only when the process stops.
    let Ok(_slot) = state.slots.acquire().await else {
        return answer(503, json!({"detail": "the agent server is stopping"}));
    };
    match state.agent.run(&request).await {
        Ok(rollout) => answer(200, rollout),
        Err(e) => failure(e),
    }
}

#[tracing::instrument(skip_all)]
async fn responses(State(state): State<AgentState>, body: Bytes) -> Response {
    let Ok(_slot) = state.slots.acquire().await else {
        return answer(503, json!({"detail": "the agent server is stopping"}));
    };
    match state.agent.responses(&body).await {
        Ok(response) => answer(200, response),
        Err(e) => failure(e),
    }
}

async fn aggregate_metrics(body: Bytes) -> Response {
    match metrics::aggregate(&body) {
        Ok(metrics) => answer(200, metrics),
        Err(e) => answer(422, e.detail()),
    }
}

async fn health(State(state): State<AgentState>) -> Response {
    answer(
        200,
        json!({"status": "ok", "agent": state.agent.name(), "job_id": state.agent.job().id}),
    )
}
