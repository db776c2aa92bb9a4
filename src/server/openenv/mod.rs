//! The routes of `sparring openenv`: OpenEnv's environment-server wire
//! protocol (as `openenv-core`'s `HTTPEnvServer` serves it) over one job
//! config's stepped sessions. `GET /health`, `/metadata`, `/schema` and
//! `/state`; `POST /reset` and `/step`; and the WebSocket session protocol
//! on `/ws` (`ws`). OpenEnv's clients send no token, as NeMo Gym's do not:
//! bind a loopback address or put it behind one.
//!
//! OpenEnv's own HTTP `/reset` and `/step` each run on a fresh environment
//! that is closed after the call; a conversation cannot be stepped that
//! way, so here `/reset` opens a session kept for `/step` (its id in the
//! observation's `metadata.session_id`, sent back as `session_id`) until
//! it ends or idles out.

mod ws;

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::stepped::{schema, Host, Invalid, OpenRequest, SessionError, Sessions};

/// Largest HTTP body accepted: an action's limit and room for its envelope.
pub const OPENENV_BODY_LIMIT: usize = crate::stepped::MAX_ACTION_BYTES + 64 * 1024;

/// What the handlers share: the job config's host and the open sessions.
#[derive(Clone)]
pub struct OpenEnvState {
    pub host: Arc<Host>,
    pub sessions: Arc<Sessions>,
}

pub fn openenv_router(state: OpenEnvState) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/metadata", get(metadata))
        .route("/schema", get(schemas))
        .route("/state", get(get_state))
        .route("/reset", post(reset))
        .route("/step", post(step))
        .route("/ws", get(ws::upgrade))
        .layer(DefaultBodyLimit::max(OPENENV_BODY_LIMIT))
        .with_state(state)
}

/// Serve until Ctrl-C or SIGTERM.
pub async fn serve_openenv(
    listener: tokio::net::TcpListener,
    state: OpenEnvState,
) -> std::io::Result<()> {
    state.sessions.spawn_reaper();
    axum::serve(listener, openenv_router(state))
        .with_graceful_shutdown(async {
            let signal = crate::jobs::shutdown_signal().await;
            tracing::info!(signal = signal.name(), "the OpenEnv server stops");
        })
        .await
}

/// An error as OpenEnv's FastAPI server answers it: a 422 in FastAPI's
/// `detail` list naming the field, anything else `{"detail": MESSAGE}`
/// with the WebSocket protocol's `code` beside it.
pub(super) fn error_response(e: &SessionError) -> Response {
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let SessionError::Store(inner) = e {
        tracing::error!("stepped session: the store failed: {inner}");
    }
    let body = match e {
        SessionError::Invalid(invalid) => fastapi_detail(invalid),
        other => {
            let mut body = json!({"detail": other.message(), "code": other.ws_code().as_str()});
            if let (Some(map), Value::Object(details)) = (body.as_object_mut(), other.details()) {
                map.extend(details);
            }
            body
        }
    };
    (status, Json(body)).into_response()
}

fn fastapi_detail(invalid: &Invalid) -> Value {
    let mut loc = vec![Value::from("body")];
    loc.extend(
        invalid
            .field
            .split('.')
            .filter(|f| !f.is_empty())
            .map(Value::from),
    );
    json!({
        "detail": [{"type": "value_error", "loc": loc, "msg": invalid.to_string()}],
        "code": "VALIDATION_ERROR",
        "kind": "invalid",
        "field": invalid.field,
    })
}

async fn health() -> Response {
    Json(json!({"status": "healthy"})).into_response()
}

async fn metadata(State(state): State<OpenEnvState>) -> Response {
    let host = &state.host;
    Json(json!({
        "name": format!("sparring: {}", host.name()),
        "description": format!(
            "sparring's simulated users and environment of job config '{}' as an OpenEnv \
             environment: the action is the policy's assistant message, the observation the \
             tool results, the simulated user's reply, or the end with its reward. Every \
             episode is stored as a conversation of job {}.",
            host.name(),
            host.job().id
        ),
        "readme_content": null,
        "version": env!("CARGO_PKG_VERSION"),
        "author": "sparring",
        "documentation_url": null,
    }))
    .into_response()
}

async fn schemas() -> Response {
    Json(json!({
        "action": schema::action(),
        "observation": schema::observation(),
        "state": schema::state(),
    }))
    .into_response()
}

#[derive(Debug, Deserialize)]
struct StateQuery {
    session_id: Option<String>,
}

/// A session's state (`?session_id=`), or the server's without one: no
/// episode, and how many places are taken.
async fn get_state(State(state): State<OpenEnvState>, query: Query<StateQuery>) -> Response {
    match &query.session_id {
        Some(id) => match state.sessions.state(id).await {
            Ok(s) => Json(s).into_response(),
            Err(e) => error_response(&e),
        },
        None => Json(json!({
            "episode_id": null,
            "step_count": 0,
            "active_sessions": state.sessions.active(),
            "max_sessions": state.sessions.limits().max_sessions,
            "job_id": state.host.job().id,
        }))
        .into_response(),
    }
}

/// The body as a JSON object, or a 422 naming it.
fn object_body(body: &Bytes) -> Result<Map<String, Value>, SessionError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Invalid::at("", "is not a JSON object").into()),
        Err(e) => Err(Invalid::at("", format!("is not JSON ({e})")).into()),
    }
}

async fn reset(State(state): State<OpenEnvState>, body: Bytes) -> Response {
    match open_http(&state, &body).await {
        Ok(observation) => Json(observation.openenv_json()).into_response(),
        Err(e) => error_response(&e),
    }
}

async fn open_http(
    state: &OpenEnvState,
    body: &Bytes,
) -> Result<crate::stepped::Observation, SessionError> {
    let request = OpenRequest::read(&Value::Object(object_body(body)?))?;
    let slot = state.sessions.reserve()?;
    let id = Sessions::new_id();
    let (live, observation) = state.host.open_session(&id, request).await?;
    // An episode that ended at once (the user stopped) is stored already;
    // it is kept all the same, so that its state can be read.
    state.sessions.keep(live, slot);
    Ok(observation)
}

/// OpenEnv's `StepRequest` fields besides the action, and ours.
const STEP_FIELDS: &[&str] = &["action", "timeout_s", "request_id", "session_id"];

async fn step(State(state): State<OpenEnvState>, body: Bytes) -> Response {
    match step_http(&state, &body).await {
        Ok(observation) => Json(observation.openenv_json()).into_response(),
        Err(e) => error_response(&e),
    }
}

async fn step_http(
    state: &OpenEnvState,
    body: &Bytes,
) -> Result<crate::stepped::Observation, SessionError> {
    let mut request = object_body(body)?;
    if let Some(unknown) = request.keys().find(|k| !STEP_FIELDS.contains(&k.as_str())) {
        return Err(Invalid::at(
            unknown.as_str(),
            format!(
                "is not a field of a step request; known: {}",
                STEP_FIELDS.join(", ")
            ),
        )
        .into());
    }
    let id = match request.get("session_id") {
        Some(Value::String(id)) => id.clone(),
        Some(other) => {
            return Err(Invalid::at(
                "session_id",
                format!("is {other}; give the id /reset answered"),
            )
            .into())
        }
        None => {
            return Err(Invalid::at(
                "session_id",
                "is missing: HTTP /step continues the session that /reset opened; send its \
                 observation's metadata.session_id as `session_id` (or use the WebSocket /ws, \
                 one session per connection)",
            )
            .into())
        }
    };
    let Some(action) = request.remove("action") else {
        return Err(
            Invalid::at("action", "is missing; send the policy's assistant message").into(),
        );
    };
    state.sessions.step(&id, &action).await
}
