//! Nothing the service answers shows where its data root lies: in every JSON
//! and HTML response (a job's stored config, a 422's problems, a page that
//! says which file could not be read), a path inside the data root is written
//! relative to it, as the token holder names files. Streams (exports, events)
//! pass untouched: they are built from stored rows, not from paths.

use axum::body::{to_bytes, Body};
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;

use super::AppState;

#[derive(Clone, Copy)]
enum Kind {
    Json,
    Html,
}

pub async fn relative_paths(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let response = next.run(request).await;
    let Some(kind) = kind_of(&response) else {
        return response;
    };
    let (mut parts, body) = response.into_parts();
    // JSON and HTML answers are built whole in memory before they are sent.
    let bytes = match to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(e) => {
            tracing::error!("cannot read a response to rewrite its paths: {e}");
            return Response::from_parts(parts, Body::empty());
        }
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let rewritten = match kind {
        Kind::Json => state.boundary.relative_text(text),
        Kind::Html => state.boundary.relative_html(text),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(rewritten))
}

/// JSON (not JSON lines) or HTML, by the media type.
fn kind_of(response: &Response) -> Option<Kind> {
    let value = response
        .headers()
        .get(header::CONTENT_TYPE)?
        .to_str()
        .ok()?;
    let media = value.split(';').next().unwrap_or("").trim();
    if media.eq_ignore_ascii_case("application/json") {
        Some(Kind::Json)
    } else if media.eq_ignore_ascii_case("text/html") {
        Some(Kind::Html)
    } else {
        None
    }
}
