//! The session API of `sparring serve` (docs/sessions.md): stepped sessions
//! for a trainer or harness that owns the loop, behind the service's token
//! and under its data root and egress allowlist.
//!
//! - `POST /v1/sessions`: a job config (`config`, a file inside the data
//!   root, or `config_toml`) and what opens the episode; 201 with the first
//!   observation, `Location: /v1/sessions/ID`.
//! - `POST /v1/sessions/{id}/step`: the policy's message; the observation.
//! - `GET /v1/sessions/{id}`: the session's state.
//! - `DELETE /v1/sessions/{id}`: close it (an episode not ended is dropped,
//!   nothing of it stored).
//!
//! These routes have no request timeout (a step waits for the simulated
//! user's model); a step runs to its end even when its client goes away,
//! so a session is never left half a step.

mod service;

use std::path::Path;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Map, Value};

use crate::config::{self, Job, Trust};
use crate::stepped::{OpenRequest, SessionError, Sessions};

use super::AppState;

pub use service::{SessionService, MAX_HOSTS};

/// Where problems with the request's own fields are said to be.
const BODY: &str = "request body";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/sessions", post(open))
        .route("/v1/sessions/{id}", get(state).delete(close))
        .route("/v1/sessions/{id}/step", post(step))
        .layer(DefaultBodyLimit::max(super::BODY_LIMIT))
}

/// A session error in the service's shapes: a wrong field (or config) a
/// 422 `{"errors": [...]}` naming it, anything else `{"error": MESSAGE}`
/// with `kind`, OpenEnv's `code` and the case's details beside it.
fn answer_error(e: &SessionError) -> Response {
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = match e {
        SessionError::Invalid(invalid) => json!({"errors": [{
            "file": BODY, "location": invalid.field, "message": invalid.message,
        }]}),
        SessionError::Config(problems) => json!({"errors": problems.iter().map(|p| json!({
            "file": p.file.display().to_string(), "location": p.location, "message": p.message,
        })).collect::<Vec<_>>()}),
        other => {
            if let SessionError::Store(inner) = other {
                tracing::error!("stepped session: the store failed: {inner}");
            }
            let mut body = json!({"error": other.message(), "code": other.ws_code().as_str()});
            if let (Some(map), Value::Object(details)) = (body.as_object_mut(), other.details()) {
                map.extend(details);
            }
            body
        }
    };
    (status, Json(body)).into_response()
}

fn invalid(field: &str, message: impl Into<String>) -> SessionError {
    crate::stepped::Invalid::at(field, message).into()
}

/// The body as a JSON object.
fn object(body: &Bytes) -> Result<Map<String, Value>, SessionError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(invalid("", "is not a JSON object")),
        Err(e) => Err(invalid(
            "",
            format!("is not JSON ({e}); send a JSON object"),
        )),
    }
}

/// The config a request names, loaded as a submitted job config is: its
/// paths inside the data root, its URLs under the egress allowlist, keys
/// only through operator endpoints.
fn submitted_config(
    state: &AppState,
    request: &mut Map<String, Value>,
) -> Result<Job, SessionError> {
    let boundary = &state.boundary;
    let root = boundary.data_root().to_path_buf();
    let text_field = |request: &mut Map<String, Value>, field: &str| match request.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(field, "is not a string")),
    };
    let file = text_field(request, "config")?;
    let inline = text_field(request, "config_toml")?;
    let (label, text, base) = match (file, inline) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "config_toml",
                "give either `config` (a job config file inside the data root) or \
                 `config_toml` (the config itself), not both",
            ))
        }
        (None, None) => {
            return Err(invalid(
                "config",
                "is missing; name a job config file inside the data root (e.g. \
                 \"quickstart.toml\"), or give the config as `config_toml`",
            ))
        }
        (None, Some(text)) => ("config_toml".to_string(), text, root.clone()),
        (Some(file), None) => {
            let path = boundary
                .contain(Path::new(BODY), "config", &root, Path::new(&file))
                .map_err(|p| SessionError::Config(vec![p]))?;
            let text = std::fs::read_to_string(&path).map_err(|_| {
                invalid(
                    "config",
                    format!("'{file}' cannot be read as a text file inside the data root"),
                )
            })?;
            let base = path.parent().map_or(root.clone(), Path::to_path_buf);
            (file, text, base)
        }
    };
    let mut job = config::load::from_toml(&label, &text, &base, Trust::Submitted(boundary))
        .map_err(SessionError::Config)?;
    job.database = state.database.clone();
    Ok(job)
}

#[tracing::instrument(skip_all)]
async fn open(State(state): State<AppState>, body: Bytes) -> Response {
    match open_session(&state, &body).await {
        Ok((id, observation)) => (
            StatusCode::CREATED,
            [(header::LOCATION, format!("/v1/sessions/{id}"))],
            Json(observation.json()),
        )
            .into_response(),
        Err(e) => answer_error(&e),
    }
}

async fn open_session(
    state: &AppState,
    body: &Bytes,
) -> Result<(String, crate::stepped::Observation), SessionError> {
    let mut request = object(body)?;
    let job = submitted_config(state, &mut request)?;
    let open = OpenRequest::read(&Value::Object(request))?;
    let service = &state.sessions;
    service.start();
    let slot = service.sessions.reserve()?;
    let host = service.host_for(&state.jobs_context(), job).await?;
    let id = Sessions::new_id();
    let (live, observation) = host.open_session(&id, open).await?;
    service.sessions.keep(live, slot);
    Ok((id, observation))
}

#[tracing::instrument(skip_all, fields(session = %id))]
async fn step(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    body: Bytes,
) -> Response {
    let action = match serde_json::from_slice::<Value>(&body) {
        Ok(action) => action,
        Err(e) => {
            return answer_error(&invalid(
                "",
                format!("is not JSON ({e}); send the policy's message"),
            ))
        }
    };
    match state.sessions.sessions.step(&id, &action).await {
        Ok(observation) => Json(observation.json()).into_response(),
        Err(e) => answer_error(&e),
    }
}

async fn state(State(state): State<AppState>, UrlPath(id): UrlPath<String>) -> Response {
    match state.sessions.sessions.state(&id).await {
        Ok(s) => Json(s).into_response(),
        Err(e) => answer_error(&e),
    }
}

async fn close(State(state): State<AppState>, UrlPath(id): UrlPath<String>) -> Response {
    match state.sessions.sessions.close(&id).await {
        Ok(mut s) => {
            if let Some(map) = s.as_object_mut() {
                map.insert("closed".into(), json!(true));
            }
            Json(s).into_response()
        }
        Err(e) => answer_error(&e),
    }
}
