//! Every error the service answers is the documented JSON shape
//! `{"error": "..."}`, including those axum and tower answer before a handler
//! runs: a path or query value that does not parse (400), a body over the
//! limit (413), an unknown route (404), a method a route does not take (405),
//! a request that took too long (408). Their plain-text message becomes the
//! `error`; HTML error pages of the web UI are left as they are. The agent
//! server's are `{"detail": "..."}`, as its own errors are.
//!
//! Every response, error or not, also says `X-Content-Type-Options:
//! nosniff`, so a browser never reads a JSON error that echoes a request's
//! text as HTML.

use axum::body::{to_bytes, Body};
use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::json;

/// Most bytes of a plain-text error body read into the JSON message.
const MAX_TEXT: usize = 64 * 1024;

pub async fn json_errors(request: Request, next: Next) -> Response {
    as_json(next.run(request).await, "error").await
}

/// The same for `sparring agent`, whose errors are NeMo Gym's (FastAPI's)
/// shape: `{"detail": "..."}`.
pub async fn json_detail_errors(request: Request, next: Next) -> Response {
    as_json(next.run(request).await, "detail").await
}

/// A plain-text error `response` as `{key: its text}`.
async fn as_json(response: Response, key: &str) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || !is_plain(&response) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = match to_bytes(body, MAX_TEXT).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => String::new(),
    };
    let message = if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("request failed")
            .to_lowercase()
    } else {
        text
    };
    let body = json!({ key: message }).to_string();
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

/// Whether a response is not already JSON, HTML or a stream of events.
fn is_plain(response: &Response) -> bool {
    let Some(kind) = response.headers().get(header::CONTENT_TYPE) else {
        return true;
    };
    let kind = kind.to_str().unwrap_or("");
    !["application/json", "text/html", "text/event-stream"]
        .iter()
        .any(|k| kind.starts_with(k))
}

/// `X-Content-Type-Options: nosniff` on every response of a router.
pub fn nosniff() -> tower_http::set_header::SetResponseHeaderLayer<HeaderValue> {
    tower_http::set_header::SetResponseHeaderLayer::overriding(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    )
}
