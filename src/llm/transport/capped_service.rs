//! The tower service async-openai's client executes its requests through, in
//! place of its default one (which wraps them in its own retry layer): one
//! exchange, no retry, the response body read under the same cap as the
//! lean client's, and failures told apart as the lean client tells them.
//!
//! A successful response goes back to async-openai, which parses it. Any
//! other status comes back as a [`StatusReply`] (status, `Retry-After`, body),
//! so that the endpoint classifies it as it classifies the lean client's,
//! `Retry-After` included (async-openai's own error drops the headers).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;

use super::framing::MAX_BODY_BYTES;
use super::Reply;
use crate::error_chain::{error_chain_with, Repeats};
use crate::llm::rate_headers::RateHeaders;
use crate::llm::LlmError;

/// The rate-limit headers of the latest successful reply, which async-openai
/// parses without handing its headers on; the endpoint reads them from here.
pub type LatestRate = Arc<Mutex<Option<RateHeaders>>>;

/// A complete response whose status is not a success, as read.
#[derive(Debug)]
pub struct StatusReply(pub Reply);

impl std::fmt::Display for StatusReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HTTP {}", self.0.status)
    }
}

impl std::error::Error for StatusReply {}

#[derive(Clone)]
pub struct CappedService {
    client: reqwest::Client,
    latest_rate: LatestRate,
}

impl CappedService {
    pub fn new(client: reqwest::Client, latest_rate: LatestRate) -> Self {
        CappedService {
            client,
            latest_rate,
        }
    }
}

type Exchange = Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send>>;

impl tower::Service<HttpRequestFactory> for CappedService {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = Exchange;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: HttpRequestFactory) -> Self::Future {
        let client = self.client.clone();
        let latest_rate = self.latest_rate.clone();
        Box::pin(async move {
            let request = request.build().await?;
            let response = client
                .execute(request)
                .await
                .map_err(|e| boxed(sending_error(&e)))?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = read_capped(status.as_u16(), response)
                .await
                .map_err(boxed)?;
            if !status.is_success() {
                let retry_after = headers
                    .get(http::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                return Err(OpenAIError::Boxed(Box::new(StatusReply(Reply {
                    status: status.as_u16(),
                    retry_after,
                    rate: RateHeaders::from_map(&headers),
                    body,
                }))));
            }
            let rate = RateHeaders::from_map(&headers);
            if rate != RateHeaders::default() {
                *latest_rate
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(rate);
            }
            let mut read = http::Response::new(body);
            *read.status_mut() = status;
            *read.headers_mut() = headers;
            Ok(reqwest::Response::from(read))
        })
    }
}

fn boxed(e: LlmError) -> OpenAIError {
    OpenAIError::Boxed(Box::new(e))
}

/// The body, whole, unless it is larger than [`MAX_BODY_BYTES`] (by its
/// `Content-Length` or as it arrives).
pub(super) async fn read_capped(
    status: u16,
    mut response: reqwest::Response,
) -> Result<Vec<u8>, LlmError> {
    let length = response.content_length();
    if let Some(n) = length {
        if n > MAX_BODY_BYTES as u64 {
            return Err(LlmError::Malformed(format!(
                "the response body of {n} bytes is larger than the {MAX_BODY_BYTES} accepted"
            )));
        }
    }
    let mut body = Vec::with_capacity(length.unwrap_or(0) as usize);
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => return Err(cut_short(status, body.len(), length, &e)),
        };
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(LlmError::Malformed(format!(
                "the response body is larger than the {MAX_BODY_BYTES} bytes accepted"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The error and its causes, in one line.
fn chain(e: &reqwest::Error) -> String {
    error_chain_with(e, Repeats::Written)
}

/// hyper's error in the chain of `e`, if any.
fn hyper_error(e: &reqwest::Error) -> Option<&hyper::Error> {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(hyper) = s.downcast_ref::<hyper::Error>() {
            return Some(hyper);
        }
        source = s.source();
    }
    None
}

/// A failure before the response head: the request could not be built, the
/// connection failed, or it closed unanswered (which `llm::retry` resends).
pub(super) fn sending_error(e: &reqwest::Error) -> LlmError {
    let hyper = hyper_error(e);
    if e.is_builder() {
        LlmError::InvalidRequest(chain(e))
    } else if hyper.is_some_and(hyper::Error::is_incomplete_message) {
        LlmError::Unanswered(format!(
            "the server closed the connection without answering ({})",
            chain(e)
        ))
    } else if hyper.is_some_and(hyper::Error::is_parse) {
        LlmError::Malformed(format!("invalid HTTP response head ({})", chain(e)))
    } else {
        LlmError::Connection(chain(e))
    }
}

/// A failure while the body arrives: transient, worded as the lean
/// client's.
fn cut_short(status: u16, received: usize, length: Option<u64>, e: &reqwest::Error) -> LlmError {
    LlmError::Connection(format!(
        "the server closed the connection before the response was complete \
         (HTTP {status}, {received} bytes of body received{}): {}",
        length.map_or(String::new(), |n| format!(" of {n}")),
        chain(e)
    ))
}
