//! The mock's Batch API: `/v1/files` (upload a JSONL of requests, read a
//! file's content) and `/v1/batches` (create, read, list, cancel). A batch
//! answers each request as `/v1/chat/completions` would, once its completion
//! delay has passed, with the failures, expiry and cancellation of the
//! mock's [`MockConfig`] batch keys; the stats count every request submitted and
//! every custom_id submitted again, so tests can check nothing is sent twice.

mod multipart;
mod process;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use super::faults::openai_error as error;
use super::server::MockState;
use crate::config::MockConfig;

/// Requests one batch may hold, as the real API.
const MAX_REQUESTS: usize = 50_000;
/// Bytes of an uploaded file, as the real API (and the multipart form around it).
const MAX_FILE_BYTES: usize = 200 * 1000 * 1000 + 64 * 1024;

/// Files and batches the mock holds.
#[derive(Default)]
pub(super) struct BatchState {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    files: HashMap<String, Arc<Vec<u8>>>,
    next_file: u64,
    /// In creation order: batch `n` (from 1) is `batches[n - 1]`.
    batches: Vec<MockBatch>,
    /// Every custom_id ever submitted in a valid batch.
    seen: HashSet<String>,
}

struct MockBatch {
    id: String,
    /// 1 for the first batch created.
    number: u64,
    input_file_id: String,
    created: Instant,
    created_at: u64,
    status: String,
    output_file_id: Option<String>,
    error_file_id: Option<String>,
    total: u64,
    completed: u64,
    failed: u64,
    errors: Option<serde_json::Value>,
    /// The requests, until the batch is answered.
    requests: Vec<Request>,
}

/// One request line of a batch.
#[derive(Debug, Clone)]
struct Request {
    custom_id: String,
    body: serde_json::Value,
}

impl MockBatch {
    fn object(&self) -> serde_json::Value {
        json!({
            "id": self.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": self.errors,
            "input_file_id": self.input_file_id,
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "request_counts": {"total": self.total, "completed": self.completed, "failed": self.failed},
            "metadata": null,
        })
    }
}

pub(super) fn routes() -> Router<Arc<MockState>> {
    Router::new()
        // A batch file may hold 200 MB; axum's default limit is 2 MB.
        .route(
            "/v1/files",
            post(upload).layer(axum::extract::DefaultBodyLimit::max(MAX_FILE_BYTES)),
        )
        .route("/v1/files/{id}/content", get(content))
        .route("/v1/batches", post(create).get(list))
        .route("/v1/batches/{id}", get(retrieve))
        .route("/v1/batches/{id}/cancel", post(cancel))
}

fn lock(state: &MockState) -> std::sync::MutexGuard<'_, Inner> {
    // A panic while holding it leaves plain data: keep serving.
    state
        .batch
        .inner
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn invalid(message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, message, "invalid_request_error")
}

fn not_found(what: &str, id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        &format!("no {what} with id '{id}'"),
        "not_found",
    )
}

async fn upload(State(state): State<Arc<MockState>>, headers: HeaderMap, body: Bytes) -> Response {
    let content_type = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let Some(boundary) = multipart::boundary(content_type) else {
        return invalid("upload a file as multipart/form-data with fields purpose and file");
    };
    let parts = match multipart::parts(&body, boundary) {
        Ok(parts) => parts,
        Err(why) => return invalid(&format!("the form cannot be read: {why}")),
    };
    let purpose = parts.iter().find(|p| p.name == "purpose");
    if purpose.map(|p| p.data.as_slice()) != Some(b"batch") {
        return invalid("purpose must be 'batch' (the mock keeps batch input files only)");
    }
    let Some(file) = parts.into_iter().find(|p| p.name == "file") else {
        return invalid("the form has no field 'file'");
    };
    let mut inner = lock(&state);
    inner.next_file += 1;
    let id = format!("file-mock{}", inner.next_file);
    let bytes = file.data.len();
    inner.files.insert(id.clone(), Arc::new(file.data));
    Json(json!({
        "id": id, "object": "file", "bytes": bytes, "created_at": process::unix_second(),
        "filename": file.filename.unwrap_or_default(), "purpose": "batch",
    }))
    .into_response()
}

async fn content(State(state): State<Arc<MockState>>, Path(id): Path<String>) -> Response {
    let file = lock(&state).files.get(&id).cloned();
    match file {
        Some(bytes) => (
            [(axum::http::header::CONTENT_TYPE, "application/octet-stream")],
            bytes.as_ref().clone(),
        )
            .into_response(),
        None => not_found("file", &id),
    }
}

#[derive(Deserialize)]
struct CreateBody {
    input_file_id: String,
    endpoint: String,
    completion_window: String,
}

async fn create(State(state): State<Arc<MockState>>, body: Bytes) -> Response {
    let request: CreateBody = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return invalid(&format!("invalid request body: {e}")),
    };
    if request.endpoint != "/v1/chat/completions" {
        return invalid("the mock's batches serve endpoint /v1/chat/completions only");
    }
    if request.completion_window != "24h" {
        return invalid("completion_window must be '24h'");
    }
    let mut inner = lock(&state);
    let Some(file) = inner.files.get(&request.input_file_id).cloned() else {
        return not_found("file", &request.input_file_id);
    };
    let number = inner.batches.len() as u64 + 1;
    let (requests, errors) = match read_requests(&file) {
        Ok(requests) => (requests, None),
        Err(errors) => (Vec::new(), Some(errors)),
    };
    let status = if errors.is_some() {
        "failed"
    } else {
        "validating"
    };
    if errors.is_none() {
        let mut repeated = 0;
        for r in &requests {
            if !inner.seen.insert(r.custom_id.clone()) {
                repeated += 1;
            }
        }
        if let Ok(mut stats) = state.stats.lock() {
            stats.batches_created += 1;
            stats.batch_requests_submitted += requests.len() as u64;
            stats.batch_requests_repeated += repeated;
        }
    }
    let batch = MockBatch {
        id: format!("batch_mock{number}"),
        number,
        input_file_id: request.input_file_id,
        created: Instant::now(),
        created_at: process::unix_second(),
        status: status.into(),
        output_file_id: None,
        error_file_id: None,
        total: requests.len() as u64,
        completed: 0,
        failed: 0,
        errors,
        requests,
    };
    let object = batch.object();
    inner.batches.push(batch);
    Json(object).into_response()
}

/// A batch file's requests, or the batch's `errors` (as the real API puts a
/// batch whose file does not validate in status `failed`).
fn read_requests(file: &[u8]) -> Result<Vec<Request>, serde_json::Value> {
    let mut requests = Vec::new();
    let mut ids = HashSet::new();
    let mut errors = Vec::new();
    for (n, line) in String::from_utf8_lossy(file).lines().enumerate() {
        let line_no = n + 1;
        let problem = match serde_json::from_str::<serde_json::Value>(line) {
            Err(e) => Some(("invalid_json", format!("not JSON: {e}"))),
            Ok(v) => {
                let custom_id = v["custom_id"].as_str().unwrap_or("").to_string();
                if custom_id.is_empty() {
                    Some(("missing_custom_id", "no custom_id".to_string()))
                } else if v["method"] != "POST" || v["url"] != "/v1/chat/completions" {
                    Some((
                        "invalid_url",
                        "method must be POST and url /v1/chat/completions".to_string(),
                    ))
                } else if !v["body"].is_object() {
                    Some(("missing_body", "body must be an object".to_string()))
                } else if !ids.insert(custom_id.clone()) {
                    Some((
                        "duplicate_custom_id",
                        format!("custom_id '{custom_id}' is used twice in this file"),
                    ))
                } else {
                    requests.push(Request {
                        custom_id,
                        body: v["body"].clone(),
                    });
                    None
                }
            }
        };
        if let Some((code, message)) = problem {
            errors.push(json!({"code": code, "line": line_no, "message": message, "param": null}));
        }
    }
    if requests.is_empty() && errors.is_empty() {
        errors.push(json!({"code": "empty_file", "line": null, "message": "the file holds no requests", "param": null}));
    }
    if requests.len() > MAX_REQUESTS {
        errors.push(json!({"code": "too_many_requests", "line": null, "message": format!("at most {MAX_REQUESTS} requests per batch"), "param": null}));
    }
    if errors.is_empty() {
        Ok(requests)
    } else {
        Err(json!({"object": "list", "data": errors}))
    }
}

async fn retrieve(State(state): State<Arc<MockState>>, Path(id): Path<String>) -> Response {
    match process::advance(&state, &id).await {
        Some(object) => Json(object).into_response(),
        None => not_found("batch", &id),
    }
}

async fn cancel(State(state): State<Arc<MockState>>, Path(id): Path<String>) -> Response {
    let mut inner = lock(&state);
    let Some(batch) = inner.batches.iter_mut().find(|b| b.id == id) else {
        return not_found("batch", &id);
    };
    if matches!(batch.status.as_str(), "validating" | "in_progress") {
        batch.status = "cancelling".into();
    }
    Json(batch.object()).into_response()
}

#[derive(Deserialize)]
struct ListQuery {
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    after: Option<String>,
}

async fn list(State(state): State<Arc<MockState>>, Query(q): Query<ListQuery>) -> Response {
    let inner = lock(&state);
    let limit = q.limit.unwrap_or(20).clamp(1, 100);
    let newest_first: Vec<&MockBatch> = inner.batches.iter().rev().collect();
    let start = match &q.after {
        Some(after) => newest_first
            .iter()
            .position(|b| &b.id == after)
            .map_or(newest_first.len(), |i| i + 1),
        None => 0,
    };
    let page: Vec<serde_json::Value> = newest_first
        .iter()
        .skip(start)
        .take(limit)
        .map(|b| b.object())
        .collect();
    let has_more = start + page.len() < newest_first.len();
    Json(json!({
        "object": "list",
        "data": page,
        "first_id": page.first().map(|b| b["id"].clone()),
        "last_id": page.last().map(|b| b["id"].clone()),
        "has_more": has_more,
    }))
    .into_response()
}

/// The config the batches follow.
fn config(state: &MockState) -> &MockConfig {
    &state.config
}
