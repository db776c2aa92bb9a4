//! The service's errors and how each becomes a response. Client errors say
//! what was wrong; internal ones are logged whole and answered without detail.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::config::Problem;
use crate::export::ExportError;
use crate::jobs::RunError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("the job config has problems")]
    Invalid(Vec<Problem>),
    #[error("{0}")]
    Conflict(String),
    #[error("a bearer token is required: send `Authorization: Bearer TOKEN`")]
    Unauthorized,
    /// Logged with its detail; the client sees a generic message.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    pub fn status_code(&self) -> StatusCode {
        match self {
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn no_job(id: i64) -> ApiError {
        ApiError::NotFound(format!("job {id} does not exist"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status_code();
        let body = match &self {
            ApiError::Invalid(problems) => json!({
                "errors": problems
                    .iter()
                    .map(|p| json!({
                        "file": p.file.display().to_string(),
                        "location": p.location,
                        "message": p.message,
                    }))
                    .collect::<Vec<_>>()
            }),
            ApiError::Internal(detail) => {
                tracing::error!("request failed: {detail}");
                json!({"error": "internal error; the server log has the detail"})
            }
            other => json!({"error": other.to_string()}),
        };
        let mut response = (status, Json(body)).into_response();
        if matches!(self, ApiError::Unauthorized) {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        ApiError::Internal(error_chain(&e))
    }
}

impl From<ExportError> for ApiError {
    fn from(e: ExportError) -> Self {
        ApiError::Internal(error_chain(&e))
    }
}

impl From<RunError> for ApiError {
    fn from(e: RunError) -> Self {
        match e {
            RunError::Invalid(problems) => ApiError::Invalid(problems),
            e @ RunError::ConfigChanged { .. } => ApiError::Conflict(e.to_string()),
            RunError::NoSuchJob(id) => ApiError::no_job(id),
            e @ RunError::NothingToWork { .. } => ApiError::Conflict(e.to_string()),
            e @ (RunError::Store(_) | RunError::Models(_) | RunError::Batch(_)) => {
                ApiError::Internal(error_chain(&e))
            }
        }
    }
}

pub use crate::error_chain::error_chain;
