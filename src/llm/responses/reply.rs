//! A Responses API reply as read: every field optional, the output items
//! kept raw until [`super::output`] reads them. A reply whose `status` is
//! `failed` is an error of its class here, inside the retry loop: the HTTP
//! exchange succeeded, the generation did not.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::llm::error::{is_identifier, LlmError};

#[derive(Debug, Deserialize)]
pub struct WireReply {
    #[serde(default)]
    pub(super) status: Option<String>,
    #[serde(default)]
    error: Option<WireError>,
    #[serde(default)]
    pub(super) incomplete_details: Option<Incomplete>,
    #[serde(default)]
    pub(super) output: Option<Vec<Box<RawValue>>>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
struct WireError {
    #[serde(default)]
    code: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Incomplete {
    #[serde(default)]
    pub(super) reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub(super) input_tokens: Option<u64>,
    #[serde(default)]
    pub(super) output_tokens: Option<u64>,
}

impl WireReply {
    /// The input and output tokens the server reported, if it reported both.
    pub fn reported_usage(&self) -> Option<(u64, u64)> {
        let usage = self.usage.as_ref()?;
        Some((usage.input_tokens?, usage.output_tokens?))
    }

    /// The error a failed reply stands for: `rate_limit_exceeded` is a rate
    /// limit, a code naming the request (`invalid_prompt`, `invalid_*`) a
    /// rejection, anything else a server error (retried). Only the code is
    /// kept, when it is an identifier, never the message (see
    /// `LlmError::from_status`).
    pub fn failure(&self) -> Option<LlmError> {
        let failed = self.status.as_deref() == Some("failed")
            || (self.status.is_none() && self.error.is_some());
        if !failed {
            return None;
        }
        let code = self
            .error
            .as_ref()
            .and_then(|e| e.code.as_ref())
            .and_then(|c| c.as_str())
            .filter(|c| is_identifier(c));
        let message = match code {
            Some(code) => format!("the response failed: {code}"),
            None => "the response failed without an error code".to_string(),
        };
        Some(match code {
            Some("rate_limit_exceeded") => LlmError::RateLimited {
                message,
                retry_after: None,
            },
            Some(c) if c.starts_with("invalid") => LlmError::Rejected {
                status: 200,
                message,
            },
            _ => LlmError::Server {
                status: 200,
                message,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(json: &str) -> Option<LlmError> {
        serde_json::from_str::<WireReply>(json).unwrap().failure()
    }

    #[test]
    fn a_failed_reply_is_an_error_of_its_class_that_keeps_the_code_but_not_the_message() {
        let e =
            failure(r#"{"status":"failed","error":{"code":"server_error","message":"secret"}}"#)
                .unwrap();
        assert_eq!(e.class(), "server_error");
        assert!(e.is_retryable());
        assert!(!e.to_string().contains("secret"), "{e}");
        let e = failure(r#"{"status":"failed","error":{"code":"rate_limit_exceeded"}}"#).unwrap();
        assert_eq!(e.class(), "rate_limited");
        let e = failure(r#"{"status":"failed","error":{"code":"invalid_prompt"}}"#).unwrap();
        assert_eq!(e.class(), "rejected");
        assert!(!e.is_retryable());
        let e = failure(r#"{"status":"failed","error":{"code":"not an id: x"}}"#).unwrap();
        assert!(e.to_string().contains("without an error code"), "{e}");
    }

    #[test]
    fn completed_and_incomplete_replies_are_not_failures() {
        assert!(failure(r#"{"status":"completed","error":null,"output":[]}"#).is_none());
        assert!(failure(
            r#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}"#
        )
        .is_none());
        assert!(failure(r#"{"output":[]}"#).is_none());
    }
}
