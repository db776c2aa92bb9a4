//! The reqwest client under async-openai's: one per process (per protocol),
//! so endpoints on the same server share one pool of connections, unless an
//! endpoint trusts certificates of its own.

use std::sync::{Once, OnceLock};
use std::time::Duration;

use crate::llm::LlmError;

/// rustls's ring provider, for every TLS client of the process.
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Fails only if another provider was installed first, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// HTTP/1.1 unless the endpoint opts in to HTTP/2. HTTP/2 is not the default
/// because a server's stream limit (often 100 to 250) would then cap the calls
/// in flight, and vLLM and llama.cpp servers speak only HTTP/1.1.
///
/// reqwest's own retries (of HTTP/2 refusals) are off: `llm::retry` is the
/// only retry policy. Timeouts are the transport's, per request.
fn build(http2: bool, ca_pem: Option<&str>) -> Result<reqwest::Client, LlmError> {
    install_crypto_provider();
    let builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .retry(reqwest::retry::never())
        // A redirect could lead past the service's egress allowlist, and
        // would resend the prompt (and the key) to wherever it points.
        .redirect(reqwest::redirect::Policy::none());
    let builder = if http2 {
        builder.http2_prior_knowledge()
    } else {
        builder.http1_only()
    };
    let builder = match ca_pem {
        None => builder,
        Some(pem) => {
            let certificates = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                .map_err(|e| LlmError::InvalidRequest(format!("ca_pem: {e}")))?;
            if certificates.is_empty() {
                return Err(LlmError::InvalidRequest(
                    "ca_pem holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into(),
                ));
            }
            builder.tls_certs_merge(certificates)
        }
    };
    builder
        .build()
        .map_err(|e| LlmError::InvalidRequest(format!("cannot build the HTTP client: {e}")))
}

/// The client for an endpoint: the shared one, or its own when it trusts
/// certificates besides the system's (`ca_pem`).
pub fn client_for(http2: bool, ca_pem: Option<&str>) -> Result<reqwest::Client, LlmError> {
    if ca_pem.is_some() {
        return build(http2, ca_pem);
    }
    static HTTP1: OnceLock<reqwest::Client> = OnceLock::new();
    static HTTP2: OnceLock<reqwest::Client> = OnceLock::new();
    let cell = if http2 { &HTTP2 } else { &HTTP1 };
    if let Some(client) = cell.get() {
        return Ok(client.clone());
    }
    let client = build(http2, None)?;
    Ok(cell.get_or_init(|| client).clone())
}
