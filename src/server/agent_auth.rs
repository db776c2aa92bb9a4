//! `sparring agent --token`: whoever reaches the agent server may run
//! rollouts of its job, with its models (and their keys and cost) and its
//! environment, and store them. On a loopback address that is the machine's
//! own users; on any other address it needs a token, or `--no-auth` said on
//! purpose. With a token every route but `GET /health` wants it, as
//! `Authorization: Bearer TOKEN` or as the password of
//! `Authorization: Basic`, which is what NeMo Gym's client sends when the
//! agent's `host` in its server config carries `USER:TOKEN@` (docs/agent.md).

use std::net::SocketAddr;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::json;

use super::auth::{bearer, same};
use super::MIN_OPEN_TOKEN_CHARS;

/// Why `sparring agent` will not listen.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AgentBindError {
    #[error(
        "refusing to serve the agent on {0} without a token: anyone who can reach that address \
         could run rollouts of this job with its models, at its cost, and store them. Give \
         --token (or SPARRING_AGENT_TOKEN; NeMo Gym sends it when its config's agent host is \
         USER:TOKEN@HOST, see docs/agent.md), bind a loopback address such as 127.0.0.1:8090, or \
         pass --no-auth to serve it open on purpose"
    )]
    OpenWithoutToken(SocketAddr),
    #[error("--token is blank; give a token of at least 16 characters, or leave it out on a loopback address")]
    BlankToken,
    #[error(
        "--token has {chars} characters, too short for {addr}, which others can reach: give at \
         least 16 (e.g. `openssl rand -hex 16`)"
    )]
    ShortToken { addr: SocketAddr, chars: usize },
    #[error("--token and --no-auth contradict each other; give one")]
    TokenAndNoAuth,
}

/// Whether the agent server may listen on `addr` with `token`, or open with `no_auth`.
pub fn check_agent_bind(
    addr: SocketAddr,
    token: Option<&str>,
    no_auth: bool,
) -> Result<(), AgentBindError> {
    match (token, no_auth) {
        (Some(_), true) => Err(AgentBindError::TokenAndNoAuth),
        (Some(t), false) if t.trim().is_empty() => Err(AgentBindError::BlankToken),
        (Some(t), false)
            if !addr.ip().is_loopback() && t.chars().count() < MIN_OPEN_TOKEN_CHARS =>
        {
            Err(AgentBindError::ShortToken {
                addr,
                chars: t.chars().count(),
            })
        }
        (None, false) if !addr.ip().is_loopback() => Err(AgentBindError::OpenWithoutToken(addr)),
        _ => Ok(()),
    }
}

/// What `--no-auth` on a reachable address exposes, said when it starts.
pub fn open_warning(addr: SocketAddr) -> String {
    format!(
        "warning: --no-auth on {addr}: anyone who reaches it can POST /run and /v1/responses \
         (rollouts of this job with its models, their keys and cost, stored in its database) and \
         POST /aggregate_metrics; keep it on a network only the trainer reaches"
    )
}

/// The agent server's token check; `None` lets every request in.
pub async fn require_agent_token(
    State(token): State<Option<std::sync::Arc<str>>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = token else {
        return next.run(request).await;
    };
    if request.uri().path() == "/health" || presented(request.headers(), &expected) {
        return next.run(request).await;
    }
    let mut response = (
        StatusCode::UNAUTHORIZED,
        axum::Json(
            json!({"detail": "a token is required: send `Authorization: Bearer TOKEN` \
                           (or Basic with the token as the password)"}),
        ),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// Whether `headers` carry `expected` as a bearer token or a Basic password.
fn presented(headers: &HeaderMap, expected: &str) -> bool {
    if bearer(headers).is_some_and(|t| same(t, expected)) {
        return true;
    }
    basic_password(headers).is_some_and(|p| same(&p, expected))
}

/// The password of `Authorization: Basic BASE64(USER:PASSWORD)`.
fn basic_password(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, encoded) = value.split_once([' ', '\t'])?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    text.split_once(':')
        .map(|(_, password)| password.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_reachable_address_needs_a_long_token_or_no_auth_said_on_purpose() {
        let open = addr("0.0.0.0:8090");
        let local = addr("127.0.0.1:8090");
        let long = "0123456789abcdef";
        assert_eq!(check_agent_bind(local, None, false), Ok(()));
        assert_eq!(check_agent_bind(local, Some("short"), false), Ok(()));
        assert_eq!(check_agent_bind(open, Some(long), false), Ok(()));
        assert_eq!(check_agent_bind(open, None, true), Ok(()));
        assert_eq!(
            check_agent_bind(open, None, false),
            Err(AgentBindError::OpenWithoutToken(open))
        );
        assert!(matches!(
            check_agent_bind(open, Some("short"), false),
            Err(AgentBindError::ShortToken { chars: 5, .. })
        ));
        assert_eq!(
            check_agent_bind(local, Some("  "), false),
            Err(AgentBindError::BlankToken)
        );
        assert_eq!(
            check_agent_bind(open, Some(long), true),
            Err(AgentBindError::TokenAndNoAuth)
        );
    }

    #[test]
    fn the_token_is_taken_as_a_bearer_token_or_a_basic_password() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            presented(&headers, "s3cret")
        };
        assert!(with("Bearer s3cret"));
        // base64("nemo-gym:s3cret"), as aiohttp sends a URL's user info.
        assert!(with("Basic bmVtby1neW06czNjcmV0"));
        assert!(!with("Basic bmVtby1neW06d3Jvbmc="));
        assert!(!with("Bearer wrong"));
        assert!(!with("Basic !!!"));
        assert!(!presented(&HeaderMap::new(), "s3cret"));
    }
}
