//! Bearer-token auth. API clients send `Authorization: Bearer TOKEN`. A
//! browser cannot add that header to a link, so GET requests (the web UI,
//! export downloads, events) may instead carry `?token=TOKEN` once: the
//! response then sets an HttpOnly, SameSite=Strict cookie that later GETs
//! send. Requests that change something (POST) take only the header, so the
//! cookie cannot be used to forge them from another site.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{ApiError, AppState};

pub const COOKIE: &str = "sparring_token";

pub async fn require_token(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = state.token.as_deref() else {
        return next.run(request).await;
    };
    let headers = request.headers();
    let readonly = matches!(*request.method(), Method::GET | Method::HEAD);
    let from_query = readonly
        .then(|| query_token(request.uri().query()))
        .flatten();
    let accepted = bearer(headers).is_some_and(|t| same(t, expected))
        || (readonly && cookie(headers).is_some_and(|t| same(t, expected)))
        || from_query.as_deref().is_some_and(|t| same(t, expected));
    if !accepted {
        return ApiError::Unauthorized.into_response();
    }
    let set_cookie = from_query.is_some();
    let mut response = next.run(request).await;
    if set_cookie {
        let value = format!("{COOKIE}={expected}; Path=/; HttpOnly; SameSite=Strict");
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response
}

/// The credentials of `Authorization: Bearer TOKEN`; the scheme's name is
/// case-insensitive (RFC 7235 §2.1), so `bearer` and `BEARER` are Bearer too.
pub(super) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once([' ', '\t'])?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('='))
}

fn query_token(query: Option<&str>) -> Option<String> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
        .map(percent_decode)
}

/// Tokens are compared in time independent of where they differ.
pub(super) fn same(given: &str, expected: &str) -> bool {
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn percent_decode(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = match bytes.get(i..i + 3) {
            Some([b'%', hi, lo]) => hex(*hi).zip(hex(*lo)).map(|(h, l)| h * 16 + l),
            _ => None,
        };
        match (escaped, bytes[i]) {
            (Some(b), _) => {
                out.push(b);
                i += 3;
                continue;
            }
            (None, b'+') => out.push(b' '),
            (None, b) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_in_the_query_is_percent_decoded() {
        assert_eq!(
            query_token(Some("a=1&token=s%2Fx+y")).as_deref(),
            Some("s/x y")
        );
        assert_eq!(query_token(Some("a=1")), None);
    }

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        let token = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            bearer(&headers).map(str::to_string)
        };
        for value in ["Bearer t0k", "bearer t0k", "BEARER  t0k ", "bEaReR\tt0k"] {
            assert_eq!(token(value).as_deref(), Some("t0k"), "{value}");
        }
        for value in ["Basic t0k", "Bearer", "Bearer ", "Bearert0k", "t0k"] {
            assert_eq!(token(value), None, "{value}");
        }
    }

    #[test]
    fn tokens_of_other_lengths_or_bytes_differ() {
        assert!(same("abc", "abc"));
        assert!(!same("abd", "abc"));
        assert!(!same("ab", "abc"));
    }
}
