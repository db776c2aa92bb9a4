//! A raw JSON call on an endpoint: a request of a black-box agent (`policy/`)
//! rather than a model's, carried by the same endpoint so that it shares its
//! limits (rpm, tpm, in flight), its pause after a 429, the one retry policy,
//! the error classes and the telemetry of model calls.
//!
//! The endpoint's `base_url` is the agent's address: a call names a path
//! below it, never another host, so the service's egress rules and endpoint
//! pinning, which check `base_url`, hold for agent calls too.

use http::{HeaderMap, HeaderName, HeaderValue, Method};

use crate::url_path::{normalize_path, PathRefused};

/// One request: `method` to the endpoint's base URL joined with `path`.
#[derive(Debug, Clone)]
pub struct RawRequest {
    pub method: Method,
    /// Below the base URL: `""` is the base URL itself, else it starts with `/`
    /// (a query may follow).
    pub path: String,
    /// JSON, sent with `Content-Type: application/json`; `None`: no body.
    pub body: Option<String>,
    /// Extra headers (a session header, the cookies of a conversation).
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl RawRequest {
    /// `POST path` with a JSON body.
    pub fn post(path: impl Into<String>, body: String) -> RawRequest {
        RawRequest {
            method: Method::POST,
            path: path.into(),
            body: Some(body),
            headers: Vec::new(),
        }
    }

    /// `GET path`.
    pub fn get(path: impl Into<String>) -> RawRequest {
        RawRequest {
            method: Method::GET,
            path: path.into(),
            body: None,
            headers: Vec::new(),
        }
    }
}

/// A success reply (2xx), read whole (at most [`super::MAX_BODY_BYTES`]).
/// Any other status is an [`super::LlmError`] of its class.
#[derive(Debug, Clone)]
pub struct RawReply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

/// `base` and `path` as one URL: `path` is empty or starts with `/`, and the
/// base URL's trailing `/` is not doubled. Every agent call of every policy
/// kind goes to the URL made here, so this is where its path is normalised
/// ([`normalize_path`]: percent-decoded, dot segments resolved, written back
/// in one form) and refused when it would climb above the base URL's path,
/// the part the service's egress allowlist checked.
pub fn join(base: &str, path: &str) -> Result<String, PathRefused> {
    let path = normalize_path(path)?;
    let base = base.trim_end_matches('/');
    if path.is_empty() {
        return Ok(base.to_string());
    }
    Ok(format!("{base}{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_joins_the_base_url_without_a_doubled_slash() {
        assert_eq!(
            join("http://h:1/v1/", "/responses").unwrap(),
            "http://h:1/v1/responses"
        );
        assert_eq!(join("http://h:1", "/a?b=1").unwrap(), "http://h:1/a?b=1");
        assert_eq!(join("http://h:1/", "").unwrap(), "http://h:1");
    }

    #[test]
    fn a_path_is_joined_normalised_and_never_above_the_base_urls_path() {
        assert_eq!(
            join("http://h:1/agent", "/x/%2e%2e/run").unwrap(),
            "http://h:1/agent/run"
        );
        for path in [
            "/../admin/secret",
            "/%2e%2e/admin",
            "/.%2E/admin",
            "/a/../../b",
        ] {
            assert_eq!(
                join("http://h:1/agent", path),
                Err(PathRefused::LeavesPrefix),
                "{path}"
            );
        }
    }
}
