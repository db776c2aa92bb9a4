//! Requests through reqwest (hyper): for `https://` endpoints (TLS), for
//! endpoints that speak HTTP/2 (`http2 = true`: one connection carries every
//! call in flight), and for any endpoint when a proxy is configured in the
//! environment, which reqwest honours.

use std::sync::{Once, OnceLock};
use std::time::Duration;

use http::{HeaderMap, HeaderValue};

use super::Reply;
use crate::llm::LlmError;

fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Fails only if another provider was installed first, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// One client for the whole process (per protocol), so endpoints on the same
/// server share one pool of connections. Timeouts are set per request.
///
/// HTTP/1.1 unless the endpoint opts in to HTTP/2. HTTP/2 is not the default
/// because a server's stream limit (often 100 to 250) would then cap the calls
/// in flight, and vLLM and llama.cpp servers speak only HTTP/1.1.
fn shared_client(http2: bool) -> Result<reqwest::Client, LlmError> {
    static HTTP1: OnceLock<reqwest::Client> = OnceLock::new();
    static HTTP2: OnceLock<reqwest::Client> = OnceLock::new();
    let cell = if http2 { &HTTP2 } else { &HTTP1 };
    if let Some(client) = cell.get() {
        return Ok(client.clone());
    }
    install_crypto_provider();
    let builder = reqwest::Client::builder().connect_timeout(Duration::from_secs(10));
    let builder = if http2 {
        builder.http2_prior_knowledge()
    } else {
        builder.http1_only()
    };
    let client = builder
        .build()
        .map_err(|e| LlmError::InvalidRequest(format!("cannot build the HTTP client: {e}")))?;
    Ok(cell.get_or_init(|| client).clone())
}

pub struct HyperClient {
    client: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
}

impl HyperClient {
    pub fn new(url: &str, headers: HeaderMap, http2: bool) -> Result<Self, LlmError> {
        let url = reqwest::Url::parse(url)
            .map_err(|e| LlmError::InvalidRequest(format!("invalid endpoint URL {url:?}: {e}")))?;
        let mut headers = headers;
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        Ok(HyperClient {
            client: shared_client(http2)?,
            url,
            headers,
        })
    }

    pub async fn post(
        &self,
        body: String,
        extra: &[(&str, &HeaderValue)],
        timeout: Duration,
    ) -> Result<Reply, LlmError> {
        let mut request = reqwest::Request::new(reqwest::Method::POST, self.url.clone());
        let headers = request.headers_mut();
        headers.clone_from(&self.headers);
        for (name, value) in extra {
            let name = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| LlmError::InvalidRequest(format!("header {name:?}: {e}")))?;
            headers.insert(name, (*value).clone());
        }
        *request.timeout_mut() = Some(timeout);
        // A streamed body, not a reusable one: reqwest keeps a copy of a
        // reusable body for redirects until the response, and the call would
        // hold its request while it waits.
        *request.body_mut() = Some(reqwest::Body::wrap(body));
        let response = self
            .client
            .execute(request)
            .await
            .map_err(|e| transport_error(e, timeout))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = response
            .bytes()
            .await
            .map_err(|e| transport_error(e, timeout))?;
        Ok(Reply {
            status,
            retry_after,
            body: Vec::from(body),
        })
    }
}

fn transport_error(e: reqwest::Error, timeout: Duration) -> LlmError {
    if e.is_timeout() {
        LlmError::Timeout(timeout)
    } else if e.is_builder() {
        LlmError::InvalidRequest(e.to_string())
    } else {
        // Connection refused/reset, a body cut short, a protocol error: transient.
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            message.push_str(": ");
            message.push_str(&s.to_string());
            source = s.source();
        }
        LlmError::Connection(message)
    }
}
