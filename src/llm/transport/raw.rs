//! The client of raw calls ([`crate::llm::raw`]): reqwest's, as async-openai's
//! requests use it (no redirects, no retries of its own), the body read under
//! the same cap and failures classified as the model clients classify them.
//! Agents are not hot paths the lean client was built for: an agent's turn
//! takes its own model calls' time, so one more client is not worth it here.

use std::time::Duration;

use http::header::{AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue};

use super::capped_service::{read_capped, sending_error};
use crate::llm::raw::{join, RawRequest};
use crate::llm::LlmError;

/// A status, the headers and the body of one exchange, whatever the status.
pub struct RawExchange {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

pub struct RawClient {
    http: reqwest::Client,
    base_url: String,
    authorization: Option<HeaderValue>,
}

impl RawClient {
    /// Calls below `base_url`, with `Authorization: Bearer KEY` when a key is
    /// given; certificates of `ca_pem` trusted besides the system's.
    pub fn new(
        base_url: &str,
        api_key: Option<&str>,
        ca_pem: Option<&str>,
    ) -> Result<RawClient, LlmError> {
        let authorization = match api_key.filter(|k| !k.is_empty()) {
            None => None,
            Some(key) => Some(
                HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    LlmError::InvalidRequest(
                        "api_key holds characters an HTTP header cannot carry".into(),
                    )
                })?,
            ),
        };
        Ok(RawClient {
            http: super::http_client::client_for(false, ca_pem)?,
            base_url: base_url.to_string(),
            authorization,
        })
    }

    /// The URL `request` goes to: its path normalised below the base URL,
    /// or a request never sent when the path would climb above it.
    pub fn url(&self, request: &RawRequest) -> Result<String, LlmError> {
        join(&self.base_url, &request.path)
            .map_err(|why| LlmError::InvalidRequest(format!("the path {:?} {why}", request.path)))
    }

    /// One exchange within `timeout`.
    pub async fn send(
        &self,
        request: &RawRequest,
        timeout: Duration,
    ) -> Result<RawExchange, LlmError> {
        let url = self.url(request)?;
        let mut builder = self.http.request(request.method.clone(), &url);
        if let Some(auth) = &self.authorization {
            builder = builder.header(AUTHORIZATION, auth.clone());
        }
        for (name, value) in &request.headers {
            builder = builder.header(name.clone(), value.clone());
        }
        if let Some(body) = &request.body {
            builder = builder
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone());
        }
        let exchange = async {
            let response = builder.send().await.map_err(|e| sending_error(&e))?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = read_capped(status, response).await?;
            Ok(RawExchange {
                status,
                headers,
                body,
            })
        };
        match tokio::time::timeout(timeout, exchange).await {
            Ok(result) => result,
            Err(_) => Err(LlmError::Timeout(timeout)),
        }
    }
}
