//! Nothing the service answers shows where its data root lies: in every JSON
//! and HTML response (a job's stored config, a 422's problems, a page that
//! says which file could not be read), a path inside the data root is written
//! relative to it, as the token holder names files. Streams (exports, events)
//! pass untouched: they are built from stored rows, not from paths.

use std::path::Path;

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
        Kind::Json => relative_text(state.boundary.data_root(), text),
        Kind::Html => relative_html(state.boundary.data_root(), text),
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

/// `text` with the data root's path taken out: a path inside it becomes
/// relative to it (the root itself `.`), written raw or inside a JSON or
/// TOML string. For what the service shows of stored configs and problems:
/// the token holder names files relative to the root, and where the root
/// lies on the server is not theirs to know.
pub fn relative_text(data_root: &Path, text: &str) -> String {
    let root = data_root.display().to_string();
    let escaped = serde_json::to_string(&root).unwrap_or_default();
    let mut out = without_root(text, &root, "/");
    if let Some(escaped) = escaped.strip_prefix('"').and_then(|e| e.strip_suffix('"')) {
        if escaped != root {
            out = without_root(&out, escaped, "/");
        }
    }
    out
}

/// [`relative_text`] for an HTML page, whose text escapes `/` (and
/// `&<>"'`) as tera does.
pub fn relative_html(data_root: &Path, html: &str) -> String {
    let root = data_root.display().to_string();
    let mut escaped = String::with_capacity(root.len() * 2);
    for c in root.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#x27;"),
            '/' => escaped.push_str("&#x2F;"),
            c => escaped.push(c),
        }
    }
    without_root(&relative_text(data_root, html), &escaped, "&#x2F;")
}

/// `text` with every `root` + `separator` taken out and every `root` that
/// ends a path (not followed by a character a file name holds) written `.`.
/// A root of `/` (or none) is left alone: every path is inside it.
fn without_root(text: &str, root: &str, separator: &str) -> String {
    if root.is_empty() || root == separator {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(root) {
        out.push_str(&rest[..at]);
        let after = &rest[at + root.len()..];
        if let Some(inside) = after.strip_prefix(separator) {
            rest = inside;
            continue;
        }
        match after.chars().next() {
            Some(c) if c.is_alphanumeric() || "-_.~".contains(c) => out.push_str(root),
            _ => out.push('.'),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_root_is_taken_out_of_what_the_service_shows() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let r = root.display().to_string();
        let toml = format!(
            "scenarios = \"{r}/sub/a.txt\"\nbase = \"{r}\"\nother = \"{r}2/x\"\nlabel = \"simulated:{r}/t.json\"\n"
        );
        assert_eq!(
            relative_text(&root, &toml),
            "scenarios = \"sub/a.txt\"\nbase = \".\"\nother = \"".to_string()
                + &r
                + "2/x\"\nlabel = \"simulated:t.json\"\n"
        );
        let html = format!(
            "<pre>p = &quot;{}&#x2F;sub&#x2F;a.txt&quot;</pre>",
            r.replace('/', "&#x2F;")
        );
        assert_eq!(
            relative_html(&root, &html),
            "<pre>p = &quot;sub&#x2F;a.txt&quot;</pre>"
        );
        // A root whose name JSON escapes.
        let odd = root.join("odd \"dir\"");
        std::fs::create_dir_all(&odd).unwrap();
        let json = serde_json::json!({"file": odd.join("x.tera")}).to_string();
        assert_eq!(relative_text(&odd, &json), r#"{"file":"x.tera"}"#);
    }
}
