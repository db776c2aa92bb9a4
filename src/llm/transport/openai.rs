//! Requests through async-openai's client: `https://` endpoints, Azure
//! OpenAI deployments, and any endpoint that speaks HTTP/2 or must go through
//! a proxy. async-openai builds each request from its config (URL, query,
//! authorization headers) and parses the completion; it sends them through
//! [`CappedService`], so its own retry layer never runs.
//!
//! Its `byot` requests take our body as it is (already JSON) and give the
//! completion (or Responses API reply) back as raw JSON for `llm::wire` (or
//! `llm::responses`) to read, as the lean client's.

use async_openai::config::Config;
use async_openai::error::OpenAIError;
use async_openai::traits::RequestOptionsBuilder;
use http::HeaderValue;
use serde_json::value::RawValue;

use super::capped_service::{CappedService, LatestRate, StatusReply};
use super::Reply;
use crate::config::Api;
use crate::llm::LlmError;

pub struct OpenAiClient {
    client: async_openai::Client<Box<dyn Config>>,
    latest_rate: LatestRate,
    api: Api,
}

impl OpenAiClient {
    pub fn new(config: Box<dyn Config>, http: reqwest::Client, api: Api) -> Self {
        let latest_rate = LatestRate::default();
        let client = async_openai::Client::build(http.clone(), config)
            .with_http_service(CappedService::new(http, latest_rate.clone()));
        OpenAiClient {
            client,
            latest_rate,
            api,
        }
    }

    /// The URL a call is posted to (without the query).
    pub fn url(&self) -> String {
        self.client.config().url(super::path_of(self.api))
    }

    pub async fn post(
        &self,
        body: String,
        extra: &[(&str, &HeaderValue)],
    ) -> Result<Reply, LlmError> {
        let request = RawValue::from_string(body)
            .map_err(|e| LlmError::InvalidRequest(format!("the request is not JSON: {e}")))?;
        let mut headers = http::HeaderMap::with_capacity(extra.len());
        for (name, value) in extra {
            let name = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| LlmError::InvalidRequest(format!("header {name:?}: {e}")))?;
            headers.insert(name, (*value).clone());
        }
        let reply = match self.api {
            Api::Chat => {
                let chat = self.client.chat().headers(headers);
                chat.create_byot::<_, Box<RawValue>>(request).await
            }
            Api::Responses => {
                let responses = self.client.responses().headers(headers);
                responses.create_byot::<_, Box<RawValue>>(request).await
            }
        };
        match reply {
            Ok(completion) => Ok(Reply {
                status: 200,
                retry_after: None,
                rate: self
                    .latest_rate
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take()
                    .unwrap_or_default(),
                body: completion.get().as_bytes().to_vec(),
            }),
            Err(e) => failure(e),
        }
    }
}

/// What an error of async-openai's client means here: a status other than
/// success is a reply for the endpoint to classify, like the lean client's.
fn failure(e: OpenAIError) -> Result<Reply, LlmError> {
    match e {
        OpenAIError::Boxed(boxed) => {
            let boxed = match boxed.downcast::<StatusReply>() {
                Ok(reply) => return Ok(reply.0),
                Err(other) => other,
            };
            match boxed.downcast::<LlmError>() {
                Ok(e) => Err(*e),
                Err(other) => Err(LlmError::Connection(other.to_string())),
            }
        }
        OpenAIError::JSONDeserialize(e, content) => {
            Err(crate::llm::error::not_a_completion(&e, content.as_bytes()))
        }
        OpenAIError::InvalidArgument(message) => Err(LlmError::InvalidRequest(message)),
        OpenAIError::Reqwest(e) => Err(LlmError::InvalidRequest(e.to_string())),
        other => Err(LlmError::Malformed(other.to_string())),
    }
}
