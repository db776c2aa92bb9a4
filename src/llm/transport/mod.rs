//! How an endpoint's requests reach its server: one POST of a JSON body,
//! answered by a status, maybe a `Retry-After`, and a body read whole. What
//! to retry and when is the endpoint's business, not the transport's.
//!
//! - `http://` endpoints (local model servers: vLLM, llama.cpp, NIM, the
//!   mock) go through [`http1`], a lean HTTP/1.1 client whose idle and
//!   waiting connections hold no buffers: with a thousand calls in flight
//!   there are a thousand connections.
//! - `https://` endpoints, `http2 = true`, and any endpoint while a proxy is
//!   set in the environment go through reqwest ([`hyper_client`]).

mod framing;
mod http1;
mod hyper_client;
mod pool;

use std::time::Duration;

use http::{HeaderMap, HeaderValue, Uri};

use super::LlmError;

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    /// The raw `Retry-After` value, if the server sent one.
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

/// Makes a request's body again, for a transport that must resend it after
/// dropping it (the body is not kept while the call waits).
pub type Encode<'a> = &'a (dyn Fn() -> Result<String, LlmError> + Sync);

pub enum Transport {
    Http1(http1::Http1),
    Hyper(hyper_client::HyperClient),
}

/// Environment variables through which reqwest picks up a proxy for plain
/// HTTP; when one is set, requests go through reqwest so that it is used.
const PROXY_VARIABLES: [&str; 4] = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"];

fn proxy_configured() -> bool {
    PROXY_VARIABLES
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|value| !value.is_empty()))
}

impl Transport {
    /// Requests to `url` (the endpoint's chat completions URL) with `headers`
    /// on each.
    pub fn new(url: &str, headers: HeaderMap, http2: bool) -> Result<Transport, LlmError> {
        Self::choose(url, headers, http2, proxy_configured())
    }

    /// [`Transport::new`], told whether a proxy is set.
    fn choose(
        url: &str,
        headers: HeaderMap,
        http2: bool,
        proxy: bool,
    ) -> Result<Transport, LlmError> {
        let uri: Uri = url
            .parse()
            .map_err(|e| LlmError::InvalidRequest(format!("invalid endpoint URL {url:?}: {e}")))?;
        let plain = uri.scheme_str() == Some("http");
        // Credentials in the URL (`http://user:pass@host`) are reqwest's to send.
        let authority = uri.authority().filter(|a| !a.as_str().contains('@'));
        match authority {
            Some(authority) if plain && !http2 && !proxy => {
                let host = authority.host();
                let host = host
                    .strip_prefix('[')
                    .and_then(|h| h.strip_suffix(']'))
                    .unwrap_or(host);
                let path = uri.path_and_query().map_or("/", |p| p.as_str());
                Ok(Transport::Http1(http1::Http1::new(
                    host,
                    authority.port_u16().unwrap_or(80),
                    authority.as_str(),
                    path,
                    &headers,
                )))
            }
            _ => Ok(Transport::Hyper(hyper_client::HyperClient::new(
                url, headers, http2,
            )?)),
        }
    }

    /// Which client carries the requests, for logs and tests.
    pub fn client(&self) -> &'static str {
        match self {
            Transport::Http1(_) => "http1",
            Transport::Hyper(_) => "reqwest",
        }
    }

    /// POST `body` with `extra` headers, within `timeout` for the whole
    /// exchange. `body` is dropped once sent; `encode` makes it again if it
    /// has to be resent on a new connection.
    pub async fn post(
        &self,
        body: String,
        extra: &[(&str, &HeaderValue)],
        timeout: Duration,
        encode: Encode<'_>,
    ) -> Result<Reply, LlmError> {
        match self {
            Transport::Http1(client) => {
                match tokio::time::timeout(timeout, client.post(body, extra, encode)).await {
                    Ok(result) => result,
                    Err(_) => Err(LlmError::Timeout(timeout)),
                }
            }
            Transport::Hyper(client) => client.post(body, extra, timeout).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(url: &str, http2: bool, proxy: bool) -> &'static str {
        Transport::choose(url, HeaderMap::new(), http2, proxy)
            .unwrap()
            .client()
    }

    #[test]
    fn plain_http_goes_through_the_lean_client_and_the_rest_through_reqwest() {
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
            "reqwest"
        );
        assert_eq!(
            client("http://127.0.0.1:8000/v1/chat/completions", true, false),
            "reqwest"
        );
        assert_eq!(
            client("http://127.0.0.1:8000/v1/chat/completions", false, true),
            "reqwest"
        );
        assert_eq!(
            client(
                "http://u:p@127.0.0.1:8000/v1/chat/completions",
                false,
                false
            ),
            "reqwest"
        );
    }

    #[test]
    fn an_unusable_url_is_an_invalid_request_naming_it() {
        let Err(e) = Transport::choose("not a url", HeaderMap::new(), false, false) else {
            panic!("accepted");
        };
        assert_eq!(e.class(), "invalid_request");
        assert!(e.to_string().contains("not a url"), "{e}");
    }
}
