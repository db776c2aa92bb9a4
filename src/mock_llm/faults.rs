//! Injected latency and faults. Each request's draw comes from a small RNG seeded
//! with a fixed seed and the request's arrival index, so a run of N requests gets
//! the same delays and faults every time, whichever roles send them. Also what
//! each failure looks like on the wire, for injected faults and model-name modifiers.

use std::sync::OnceLock;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::config::{MockConfig, MockFault};

/// The fixed seed of every draw ("sparring" in ASCII).
const FAULT_SEED: u64 = 0x0075_7365_7273_696d;

/// How long a `Timeout` fault holds a request before answering.
pub const TIMEOUT_HOLD: Duration = Duration::from_secs(60);

/// What the mock does to one request before answering it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Draw {
    pub delay: Duration,
    pub fault: Option<MockFault>,
}

/// The draw for the request that arrived `index`-th (0-based). The three draws are
/// always made in the same order, so changing the latency never changes the faults.
pub fn draw(config: &MockConfig, index: u64) -> Draw {
    let mut rng = SmallRng::seed_from_u64(FAULT_SEED.wrapping_add(index));
    let roll: f64 = rng.random();
    let pick = rng.random_range(0..config.faults.len().max(1));
    let jitter_micros = u64::try_from(config.latency_jitter().as_micros()).unwrap_or(u64::MAX);
    let jitter = Duration::from_micros(rng.random_range(0..=jitter_micros));
    let fault = if roll < config.fault_rate {
        config.faults.get(pick).copied()
    } else {
        None
    };
    Draw {
        delay: config.latency().saturating_add(jitter),
        fault,
    }
}

/// An OpenAI-style JSON error.
pub fn openai_error(status: StatusCode, message: &str, code: &str) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": code, "code": code}})),
    )
        .into_response()
}

/// 429 with `Retry-After: 1` and an OpenAI-style body.
pub fn rate_limited() -> Response {
    let mut response = openai_error(
        StatusCode::TOO_MANY_REQUESTS,
        "Rate limit reached (mock); retry after 1 second",
        "rate_limit_exceeded",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// 500 with an HTML body, as a crashed proxy or framework sends.
pub fn server_error() -> Response {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        [(header::CONTENT_TYPE, "text/html")],
        "<html><body>Internal Server Error</body></html>",
    )
        .into_response()
}

/// 503 with an OpenAI-style body.
pub fn unavailable() -> Response {
    openai_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "The server is overloaded (mock); try again later",
        "service_unavailable",
    )
}

/// 200 with a complete body that is JSON cut off mid-string.
pub fn malformed() -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        "{\"id\":\"mock\",\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"Hel",
    )
        .into_response()
}

/// The size of the body a `Truncated` fault declares; it sends the first half.
pub const TRUNCATED_DECLARED_BYTES: usize = 1 << 20;

/// A whole completion of [`TRUNCATED_DECLARED_BYTES`], built once and shared.
fn truncated_completion() -> &'static Bytes {
    static WHOLE: OnceLock<Bytes> = OnceLock::new();
    WHOLE.get_or_init(|| {
        let head = "{\"id\":\"mockcmpl-truncated\",\"object\":\"chat.completion\",\"created\":0,\"model\":\"mock\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"";
        let tail = "\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}";
        let filler = "This answer never arrives whole. ";
        let mut text = String::with_capacity(TRUNCATED_DECLARED_BYTES);
        text.push_str(head);
        while text.len() + filler.len() + tail.len() <= TRUNCATED_DECLARED_BYTES {
            text.push_str(filler);
        }
        while text.len() + tail.len() < TRUNCATED_DECLARED_BYTES {
            text.push(' ');
        }
        text.push_str(tail);
        Bytes::from(text)
    })
}

/// 200 declaring the `Content-Length` of a whole completion, sending only its first
/// half, then closing the connection: the client gets the status and headers, and
/// the connection ends before the body is complete.
///
/// How, with the crates at hand: the body is a stream of unknown length, so hyper
/// trusts the declared length; when the stream ends short, hyper aborts the
/// connection, dropping whatever it has not written yet. The half is larger than
/// hyper's write buffer (about 400 KiB), which makes hyper write the status, headers
/// and most of the half to the socket before it polls the stream's end. A small body
/// would be dropped whole and the client would see no response at all; a stream that
/// pauses before ending would avoid that, but needs `futures` or `http-body`, which
/// are not direct dependencies.
pub fn truncated() -> Response {
    let whole = truncated_completion();
    let half = whole.slice(..whole.len() / 2);
    let body = Body::from_stream(Body::from(half).into_data_stream());
    (
        StatusCode::OK,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::CONTENT_LENGTH, HeaderValue::from(whole.len())),
        ],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(fault_rate: f64, faults: Vec<MockFault>) -> MockConfig {
        MockConfig {
            latency_ms: 100,
            latency_jitter_ms: 50,
            fault_rate,
            faults,
            ..MockConfig::default()
        }
    }

    #[test]
    fn draws_are_a_function_of_the_arrival_index() {
        let c = config(0.5, vec![MockFault::RateLimited, MockFault::Timeout]);
        let first: Vec<_> = (0..200).map(|i| draw(&c, i)).collect();
        let again: Vec<_> = (0..200).map(|i| draw(&c, i)).collect();
        assert_eq!(first, again);
        assert!(first
            .iter()
            .any(|d| d.fault == Some(MockFault::RateLimited)));
        assert!(first.iter().any(|d| d.fault == Some(MockFault::Timeout)));
        assert!(first.iter().any(|d| d.fault.is_none()));
    }

    #[test]
    fn delays_are_the_latency_plus_a_bounded_jitter() {
        let c = config(0.0, Vec::new());
        let delays: Vec<_> = (0..200).map(|i| draw(&c, i).delay).collect();
        assert!(delays
            .iter()
            .all(|d| *d >= Duration::from_millis(100) && *d <= Duration::from_millis(150)));
        assert!(delays.iter().any(|d| *d < Duration::from_millis(110)));
        assert!(delays.iter().any(|d| *d > Duration::from_millis(140)));
    }

    #[test]
    fn the_latency_never_changes_which_requests_fail() {
        let slow = config(0.3, vec![MockFault::ServerError, MockFault::Malformed]);
        let fast = MockConfig {
            latency_ms: 0,
            latency_jitter_ms: 0,
            ..slow.clone()
        };
        for i in 0..200 {
            assert_eq!(draw(&slow, i).fault, draw(&fast, i).fault);
        }
    }

    #[test]
    fn no_faults_listed_or_a_zero_rate_injects_nothing() {
        let none_listed = config(1.0, Vec::new());
        let zero_rate = config(0.0, vec![MockFault::ServerError]);
        for i in 0..200 {
            assert_eq!(draw(&none_listed, i).fault, None);
            assert_eq!(draw(&zero_rate, i).fault, None);
        }
    }

    #[test]
    fn the_truncated_completion_is_valid_json_of_the_declared_size() {
        let whole = truncated_completion();
        assert_eq!(whole.len(), TRUNCATED_DECLARED_BYTES);
        let v: serde_json::Value = serde_json::from_slice(whole).unwrap();
        assert_eq!(v["choices"][0]["finish_reason"], "stop");
    }

    #[test]
    fn every_fault_has_its_config_name() {
        for name in MockFault::NAMES {
            let fault = MockFault::parse(name).unwrap();
            assert_eq!(fault.name(), *name);
        }
    }
}
