//! How an endpoint's requests reach its server: one POST of a JSON body,
//! answered by a status, maybe a `Retry-After`, and a body read whole (at
//! most [`framing::MAX_BODY_BYTES`]). What to retry and when is the
//! endpoint's business (`llm::retry`), not the transport's: neither client
//! sends a request twice on its own.
//!
//! - `http://` endpoints (local model servers: vLLM, llama.cpp, NIM, the
//!   mock) go through [`http1`], a lean HTTP/1.1 client whose idle and
//!   waiting connections hold no buffers: with a thousand calls in flight
//!   there are a thousand connections.
//! - `https://` endpoints, Azure OpenAI deployments, `http2 = true`, and any
//!   endpoint while a proxy is set in the environment go through
//!   async-openai's client ([`openai`]) over reqwest.

// The fence (clippy.toml) keeps reqwest::Client and tokio's TcpStream in
// this module: these files are where connections are made.
#[allow(clippy::disallowed_types)]
mod capped_service;
mod framing;
#[cfg(test)]
mod framing_properties;
#[allow(clippy::disallowed_types)]
mod http1;
#[allow(clippy::disallowed_types)]
pub mod http_client;
#[allow(clippy::disallowed_types)]
mod openai;
#[allow(clippy::disallowed_types)]
mod pool;
#[allow(clippy::disallowed_types)]
pub mod raw;

use std::time::Duration;

use async_openai::config::{AzureConfig, Config, OpenAIConfig};
use http::{HeaderMap, HeaderValue, Uri};

use super::rate_headers::RateHeaders;
use super::LlmError;
use crate::config::{Api, EndpointConfig};

pub use framing::MAX_BODY_BYTES;
pub use http_client::install_crypto_provider;

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    /// The raw `Retry-After` value, if the server sent one.
    pub retry_after: Option<String>,
    /// The rate-limit headers (remaining tokens and their reset), if sent.
    pub rate: RateHeaders,
    pub body: Vec<u8>,
}

/// Makes a request's body again, for a transport that dropped it while a
/// connection opened (the body is not kept while the call waits).
pub type Encode<'a> = &'a (dyn Fn() -> Result<String, LlmError> + Sync);

pub enum Transport {
    Http1(http1::Http1),
    OpenAi(openai::OpenAiClient),
}

/// Environment variables through which reqwest picks up a proxy for plain
/// HTTP; when one is set, requests go through reqwest so that it is used.
const PROXY_VARIABLES: [&str; 4] = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"];

fn proxy_configured() -> bool {
    PROXY_VARIABLES
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|value| !value.is_empty()))
}

/// async-openai's config for `endpoint`, its requests sent to `base_url`:
/// Azure's (deployment, `api-version`, `api-key` header) or OpenAI's.
fn openai_config(endpoint: &EndpointConfig, base_url: &str) -> Result<Box<dyn Config>, LlmError> {
    let api_key = endpoint.api_key.clone().unwrap_or_default();
    // async-openai builds its headers with `parse().unwrap()`: check first.
    if HeaderValue::from_str(&format!("Bearer {api_key}")).is_err() {
        return Err(LlmError::InvalidRequest(format!(
            "endpoint '{}': api_key holds characters an HTTP header cannot carry \
             (a line break or a control character?)",
            endpoint.name
        )));
    }
    Ok(match &endpoint.azure {
        Some(azure) => Box::new(
            AzureConfig::new()
                .with_api_base(base_url)
                .with_api_key(api_key)
                .with_deployment_id(&azure.deployment)
                .with_api_version(&azure.api_version),
        ),
        None => Box::new(
            OpenAIConfig::new()
                .with_api_base(base_url)
                .with_api_key(api_key),
        ),
    })
}

/// Where an API's calls are posted, below the base URL.
pub fn path_of(api: Api) -> &'static str {
    match api {
        Api::Chat => "/chat/completions",
        Api::Responses => "/responses",
    }
}

impl Transport {
    /// Requests of `endpoint` to `base_url` (its URL, or the mock's address).
    pub fn new(endpoint: &EndpointConfig, base_url: &str) -> Result<Transport, LlmError> {
        Self::choose(endpoint, base_url, proxy_configured())
    }

    /// [`Transport::new`], told whether a proxy is set.
    fn choose(
        endpoint: &EndpointConfig,
        base_url: &str,
        proxy: bool,
    ) -> Result<Transport, LlmError> {
        let config = openai_config(endpoint, base_url)?;
        let url = config.url(path_of(endpoint.settings.api));
        let uri: Uri = url
            .parse()
            .map_err(|e| LlmError::InvalidRequest(format!("invalid endpoint URL {url:?}: {e}")))?;
        let lean = uri.scheme_str() == Some("http")
            && endpoint.azure.is_none()
            && !endpoint.settings.http2
            && !proxy;
        // Credentials in the URL (`http://user:pass@host`) are reqwest's to send.
        let authority = uri.authority().filter(|a| !a.as_str().contains('@'));
        match authority {
            Some(authority) if lean => {
                let host = authority.host();
                let host = host
                    .strip_prefix('[')
                    .and_then(|h| h.strip_suffix(']'))
                    .unwrap_or(host);
                let path = uri.path_and_query().map_or("/", |p| p.as_str());
                let headers: HeaderMap = config.headers();
                Ok(Transport::Http1(http1::Http1::new(
                    host,
                    authority.port_u16().unwrap_or(80),
                    authority.as_str(),
                    path,
                    &headers,
                )))
            }
            _ => {
                let http =
                    http_client::client_for(endpoint.settings.http2, endpoint.ca_pem.as_deref())?;
                Ok(Transport::OpenAi(openai::OpenAiClient::new(
                    config,
                    http,
                    endpoint.settings.api,
                )))
            }
        }
    }

    /// Which client carries the requests, for logs and tests.
    pub fn client(&self) -> &'static str {
        match self {
            Transport::Http1(_) => "http1",
            Transport::OpenAi(_) => "async-openai",
        }
    }

    /// POST `body` with `extra` headers, within `timeout` for the whole
    /// exchange, on a new connection when `new_connection` (the resend of a
    /// request a connection closed unanswered). `body` is dropped once sent;
    /// `encode` makes it again when it was dropped while a connection opened.
    pub async fn post(
        &self,
        body: String,
        extra: &[(&str, &HeaderValue)],
        timeout: Duration,
        new_connection: bool,
        encode: Encode<'_>,
    ) -> Result<Reply, LlmError> {
        let exchange = async {
            match self {
                Transport::Http1(client) => client.post(body, extra, new_connection, encode).await,
                // reqwest's pool replaces a connection it saw closed by itself.
                Transport::OpenAi(client) => client.post(body, extra).await,
            }
        };
        match tokio::time::timeout(timeout, exchange).await {
            Ok(result) => result,
            Err(_) => Err(LlmError::Timeout(timeout)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AzureDeployment, Target};

    fn endpoint(url: &str, http2: bool) -> EndpointConfig {
        let mut endpoint = EndpointConfig::new("e", Target::Url(url.into()), "m").unwrap();
        let settings = &mut endpoint.settings;
        settings.max_tokens = 16;
        settings.timeout_secs = 1.0;
        settings.max_in_flight = 1;
        settings.max_retries = 0;
        settings.http2 = http2;
        endpoint
    }

    fn client(url: &str, http2: bool, proxy: bool) -> &'static str {
        let base = url.trim_end_matches("/chat/completions");
        Transport::choose(&endpoint(base, http2), base, proxy)
            .unwrap()
            .client()
    }

    #[test]
    fn plain_http_goes_through_the_lean_client_and_the_rest_through_async_openai() {
        assert_eq!(
            client("http://127.0.0.1:8000/v1/chat/completions", false, false),
            "http1"
        );
        assert_eq!(
            client("http://[::1]:8000/v1/chat/completions", false, false),
            "http1"
        );
        assert_eq!(
            client("http://vllm/v1/chat/completions", false, false),
            "http1"
        );
        assert_eq!(
            client("https://api.openai.com/v1/chat/completions", false, false),
            "async-openai"
        );
        assert_eq!(
            client("http://127.0.0.1:8000/v1/chat/completions", true, false),
            "async-openai"
        );
        assert_eq!(
            client("http://127.0.0.1:8000/v1/chat/completions", false, true),
            "async-openai"
        );
        assert_eq!(
            client(
                "http://u:p@127.0.0.1:8000/v1/chat/completions",
                false,
                false
            ),
            "async-openai"
        );
    }

    #[test]
    fn an_azure_deployment_goes_through_async_openai_with_its_url_and_api_version() {
        let base = "https://example.openai.azure.com";
        let azure = {
            let mut endpoint = endpoint(base, false);
            endpoint.azure = Some(AzureDeployment {
                deployment: "gpt-4o".into(),
                api_version: "2024-10-21".into(),
            });
            endpoint
        };
        let transport = Transport::choose(&azure, base, false).unwrap();
        let Transport::OpenAi(client) = &transport else {
            panic!("Azure through {}", transport.client());
        };
        assert_eq!(
            client.url(),
            "https://example.openai.azure.com/openai/deployments/gpt-4o/chat/completions"
        );
        let plain = Transport::choose(&azure, "http://127.0.0.1:1", false).unwrap();
        assert_eq!(plain.client(), "async-openai", "Azure even over http://");
    }

    #[test]
    fn a_responses_endpoint_posts_to_responses_through_either_client() {
        let responses = |url: &str| {
            let mut endpoint = endpoint(url, false);
            endpoint.settings.api = Api::Responses;
            endpoint
        };
        let base = "https://api.openai.com/v1";
        let Transport::OpenAi(client) = Transport::choose(&responses(base), base, false).unwrap()
        else {
            panic!("https through async-openai");
        };
        assert_eq!(client.url(), "https://api.openai.com/v1/responses");
        let base = "http://127.0.0.1:8000/v1";
        let Transport::Http1(client) = Transport::choose(&responses(base), base, false).unwrap()
        else {
            panic!("http through the lean client");
        };
        assert_eq!(client.path(), "/v1/responses");
    }

    #[test]
    fn an_unusable_url_is_an_invalid_request_naming_it() {
        let Err(e) = Transport::choose(&endpoint("not a url", false), "not a url", false) else {
            panic!("accepted");
        };
        assert_eq!(e.class(), "invalid_request");
        assert!(e.to_string().contains("not a url"), "{e}");
    }
}
