//! The service: a JSON API under `/v1`, server-sent progress events,
//! Prometheus metrics and a server-rendered web UI, over the same library the
//! CLI uses. Jobs submitted here run in this process with the CLI's runner
//! (`jobs::work_stored`); `sparring worker` processes may share them (Postgres).

pub mod agent;
pub mod agent_auth;
mod api;
mod auth;
mod blocking;
mod error;
mod evaluations;
mod export;
mod export_refusal;
mod filters;
mod imports;
mod json_errors;
mod judging;
mod metrics;
mod openapi;
pub mod openenv;
mod prometheus;
mod query_values;
mod relative_paths;
mod rollouts;
mod runs;
pub mod sessions;
mod synthesis;
mod ui;
mod views;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use tower_http::timeout::TimeoutLayer;

use crate::config::{Boundary, OperatorEndpoints};
use crate::jobs::{self, MockStarter};
use crate::mock_llm::InProcessMock;
use crate::store::Store;

pub use error::ApiError;
pub use runs::Runs;

/// Largest request body accepted (a job config).
pub const BODY_LIMIT: usize = 2 * 1024 * 1024;
/// How long a request may take until its response starts. Streams (exports,
/// events) start at once and then run as long as they need.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What the handlers share.
#[derive(Clone)]
pub struct AppState {
    pub store: Arc<dyn Store>,
    /// The URL `store` was opened from: jobs submitted here are stored and
    /// run in it, whatever database their config names.
    pub database: String,
    /// Required as `Authorization: Bearer TOKEN` when set.
    pub token: Option<String>,
    /// What a submitted config may reach: files under the data root (where
    /// its relative paths resolve), keys only through operator endpoints.
    pub boundary: Arc<Boundary>,
    pub runs: Runs,
    /// Starts the mock model server for submitted jobs' `mock = true` endpoints.
    pub mock: Option<Arc<dyn MockStarter>>,
    /// How often `/v1/jobs/{id}/events` reports progress.
    pub event_interval: Duration,
    /// Stepped sessions (`/v1/sessions`) and the job configs they play.
    pub sessions: Arc<sessions::SessionService>,
}

impl AppState {
    pub fn new(store: Arc<dyn Store>, database: &str, token: Option<String>) -> AppState {
        AppState {
            store,
            database: database.to_string(),
            token: token.filter(|t| !t.is_empty()),
            boundary: Arc::new(working_directory_boundary()),
            runs: Runs::default(),
            mock: Some(Arc::new(InProcessMock)),
            event_interval: Duration::from_secs(1),
            sessions: sessions::SessionService::new(crate::stepped::Limits::default()),
        }
    }
}

impl AppState {
    /// What a job run here is given: this server's store and mock starter.
    pub fn jobs_context(&self) -> jobs::Context {
        jobs::Context::new(self.store.clone(), self.mock.clone())
    }
}

/// The default boundary: the working directory as the data root, no operator
/// endpoints.
fn working_directory_boundary() -> Boundary {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    Boundary::new(cwd, OperatorEndpoints::default())
}

/// Shortest token a non-loopback bind accepts: anyone who can reach the
/// address may guess, so the token must be long enough not to be guessed.
pub const MIN_OPEN_TOKEN_CHARS: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "refusing to listen on {0} without an API token: anyone who can reach that address could \
         run jobs and read every conversation. Set --token or SPARRING_API_TOKEN (at least 16 \
         characters), or bind a loopback address such as 127.0.0.1:8080"
    )]
    OpenWithoutToken(SocketAddr),
    #[error(
        "--token is blank: a token of only whitespace would be matched by a blank `?token=+`; \
         give a token of at least 16 characters, or leave --token and SPARRING_API_TOKEN unset on \
         a loopback address"
    )]
    BlankToken,
    #[error(
        "--token has {chars} characters, too short to listen on {addr}, which others can reach: \
         give at least 16 characters (e.g. `openssl rand -hex 16`), or bind a loopback address \
         such as 127.0.0.1:8080"
    )]
    ShortToken { addr: SocketAddr, chars: usize },
    #[error("cannot listen on {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("the server stopped")]
    Io(#[from] std::io::Error),
}

/// A token is never blank, and a non-loopback address is only served with a
/// token of at least [`MIN_OPEN_TOKEN_CHARS`] characters.
pub fn check_bind(addr: SocketAddr, token: Option<&str>) -> Result<(), ServeError> {
    let token = match token {
        Some(t) if t.trim().is_empty() => return Err(ServeError::BlankToken),
        Some(t) => Some(t),
        None => None,
    };
    if addr.ip().is_loopback() {
        return Ok(());
    }
    match token {
        None => Err(ServeError::OpenWithoutToken(addr)),
        Some(t) if t.chars().count() < MIN_OPEN_TOKEN_CHARS => Err(ServeError::ShortToken {
            addr,
            chars: t.chars().count(),
        }),
        Some(_) => Ok(()),
    }
}

/// Every route of the service.
pub fn router(state: AppState) -> Router {
    let api = api::router().layer(axum::middleware::from_fn(query_values::refuse_blank_values));
    let protected = Router::new()
        .merge(api)
        .merge(ui::router())
        .route("/metrics", get(metrics::metrics))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_token,
        ));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(protected)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ))
        // After the timeout: a session's step waits for the simulated user.
        .merge(
            sessions::router().layer(axum::middleware::from_fn_with_state(
                state.clone(),
                auth::require_token,
            )),
        )
        .layer(axum::middleware::from_fn(json_errors::json_errors))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            relative_paths::relative_paths,
        ))
        .layer(json_errors::nosniff())
        .with_state(state)
}

/// Serve `state` on `listener` until Ctrl-C or SIGTERM. Jobs running here are
/// stopped first (no new leases; items in flight released, to be redone when
/// the job is resumed), then open connections are let finish.
pub async fn serve(listener: tokio::net::TcpListener, state: AppState) -> Result<(), ServeError> {
    let runs = state.runs.clone();
    let stopping = runs.clone();
    axum::serve(listener, router(state))
        .with_graceful_shutdown(async move {
            let signal = crate::jobs::shutdown_signal().await;
            tracing::info!(signal = signal.name(), "stopping the jobs running here");
            // Before the connections drain: a progress stream stays open
            // until its job stops.
            stopping.stop_all_and_wait().await;
        })
        .await?;
    runs.stop_all_and_wait().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_blank_token_is_refused_on_any_address() {
        for bind in ["127.0.0.1:8080", "0.0.0.0:8080"] {
            for token in ["", " ", "\t \n"] {
                assert!(matches!(
                    check_bind(addr(bind), Some(token)),
                    Err(ServeError::BlankToken)
                ));
            }
        }
    }

    #[test]
    fn a_non_loopback_bind_needs_a_token_of_sixteen_characters() {
        let open = addr("0.0.0.0:8080");
        assert!(matches!(
            check_bind(open, None),
            Err(ServeError::OpenWithoutToken(_))
        ));
        assert!(matches!(
            check_bind(open, Some("fifteen-chars-x")),
            Err(ServeError::ShortToken { chars: 15, .. })
        ));
        assert!(check_bind(open, Some("sixteen-chars-xx")).is_ok());
        assert!(check_bind(addr("127.0.0.1:8080"), None).is_ok());
        assert!(check_bind(addr("[::1]:8080"), Some("short")).is_ok());
    }
}
