//! Errors of a model call, classified so the retry policy and the job runner can
//! decide what to do. Adding a variant forces a decision in `class` and `is_retryable`.

use std::time::Duration;

#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    #[error("rate limited (HTTP 429): {message}")]
    RateLimited {
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("server error (HTTP {status}): {message}")]
    Server { status: u16, message: String },
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    #[error("connection failed: {0}")]
    Connection(String),
    /// The connection closed before a byte of an answer arrived: most often a
    /// kept-alive connection the server closed while idle, just as the
    /// request went out. `llm::retry` sends such a request once more at
    /// once, on a new connection, without spending a retry; after that it is
    /// a connection failure like any other (its class is `connection`).
    #[error("connection failed: {0}")]
    Unanswered(String),
    #[error("malformed response: {0}")]
    Malformed(String),
    #[error("request rejected (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },
    #[error("quota exhausted: {0}")]
    QuotaExhausted(String),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// Never sent: its calibrated token estimate is more than the endpoint's
    /// whole `tokens_per_minute` (see `llm::limiter`).
    #[error(
        "request of an estimated {estimated} tokens can never fit tokens_per_minute = \
         {tokens_per_minute}: one request may take at most {per_request} (it then runs \
         alone), and the estimate, learned from the usage this server reported, counts \
         the prompt plus the largest recent completion (at most max_tokens); raise \
         tokens_per_minute to at least {estimated}, lower max_tokens, or shorten the prompt"
    )]
    ExceedsTokenLimit {
        estimated: u64,
        per_request: u64,
        tokens_per_minute: u32,
    },
    /// A black-box agent (`crate::policy`) answered, in its own protocol, that
    /// it failed: an A2A task `failed`, `rejected`, `canceled` or waiting for
    /// authentication, or a JSON-RPC error object. Its call went through; the
    /// agent's answer is the failure, so the call is not sent again.
    #[error("the agent failed: {0}")]
    AgentFailed(String),
    /// A black-box agent answered, after the endpoint's retries, with no
    /// reply: empty text, no reply where its protocol puts one, or a task
    /// that ended without a message. The conversation did not run, so it is
    /// a failed item, never a stored reward of 0.
    #[error("the agent gave no reply: {0}")]
    EmptyReply(String),
}

impl LlmError {
    /// Every failure class, in the order of [`LlmError::class_index`].
    pub const CLASSES: [&'static str; 11] = [
        "rate_limited",
        "server_error",
        "timeout",
        "connection",
        "malformed_response",
        "rejected",
        "quota_exhausted",
        "invalid_request",
        "exceeds_token_limit",
        "agent_failed",
        "empty_reply",
    ];

    /// A short stable name for the failure class, stored with failed items.
    pub fn class(&self) -> &'static str {
        Self::CLASSES[self.class_index()]
    }

    /// The position of this error's class in [`LlmError::CLASSES`], so a
    /// counter per class is an array index.
    pub fn class_index(&self) -> usize {
        match self {
            LlmError::RateLimited { .. } => 0,
            LlmError::Server { .. } => 1,
            LlmError::Timeout(_) => 2,
            LlmError::Connection(_) | LlmError::Unanswered(_) => 3,
            LlmError::Malformed(_) => 4,
            LlmError::Rejected { .. } => 5,
            LlmError::QuotaExhausted(_) => 6,
            LlmError::InvalidRequest(_) => 7,
            LlmError::ExceedsTokenLimit { .. } => 8,
            LlmError::AgentFailed(_) => 9,
            LlmError::EmptyReply(_) => 10,
        }
    }

    /// Transient failures worth another attempt; permanent ones (bad key, bad
    /// request, no quota) fail at once.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::RateLimited { .. }
            | LlmError::Server { .. }
            | LlmError::Timeout(_)
            | LlmError::Connection(_)
            | LlmError::Unanswered(_)
            | LlmError::Malformed(_) => true,
            LlmError::Rejected { .. }
            | LlmError::QuotaExhausted(_)
            | LlmError::InvalidRequest(_)
            | LlmError::ExceedsTokenLimit { .. }
            | LlmError::AgentFailed(_)
            | LlmError::EmptyReply(_) => false,
        }
    }

    /// Classify a non-success HTTP status and its body (which may not be JSON).
    /// The error keeps only what [`reply_summary`] takes from the body: a
    /// submitted job may name any URL as its model server, and the error is
    /// shown to whoever submitted it. The body itself goes to the log
    /// (`SPARRING_LOG=sparring=debug`), which is the operator's.
    pub fn from_status(status: u16, body: &[u8], retry_after: Option<Duration>) -> Self {
        tracing::debug!(status, reply = %body_excerpt(body), "a model server's error reply");
        let (message, identifiers) = reply_summary(body);
        if identifiers.iter().any(|i| i == "insufficient_quota") {
            return LlmError::QuotaExhausted(message);
        }
        match status {
            429 => LlmError::RateLimited {
                message,
                retry_after,
            },
            408 => LlmError::Timeout(Duration::ZERO),
            500..=599 => LlmError::Server { status, message },
            _ => LlmError::Rejected { status, message },
        }
    }
}

/// What an error reply may say about itself in sparring's messages: OpenAI's
/// `error.type` and `error.code` when they are identifiers
/// (`invalid_request_error`, `context_length_exceeded`), else only what kind
/// of body it was. Never the body's text: see [`LlmError::from_status`].
/// Returns the message and the identifiers found.
fn reply_summary(body: &[u8]) -> (String, Vec<String>) {
    let text = String::from_utf8_lossy(body);
    if text.trim().is_empty() {
        return ("an empty body".to_string(), Vec::new());
    }
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return ("a body that is not JSON".to_string(), Vec::new());
    };
    let error = value.get("error").unwrap_or(&value);
    let mut identifiers: Vec<String> = Vec::new();
    for key in ["type", "code"] {
        if let Some(id) = error.get(key).and_then(|v| v.as_str()) {
            if is_identifier(id) && !identifiers.iter().any(|known| known == id) {
                identifiers.push(id.to_string());
            }
        }
    }
    if identifiers.is_empty() {
        return (
            "a JSON body without an OpenAI error type or code".to_string(),
            identifiers,
        );
    }
    (identifiers.join(" / "), identifiers)
}

/// A success reply whose body is not a chat completion, said without quoting
/// the body: serde's own message can quote a value (`invalid type: string
/// "…"`), so only its kind and position are kept, or the missing field's name.
pub fn not_a_completion(e: &serde_json::Error, body: &[u8]) -> LlmError {
    use serde_json::error::Category;
    tracing::debug!(reply = %body_excerpt(body), "a model server's reply that is not a chat completion");
    let what = match e.classify() {
        Category::Data => match e.to_string().strip_prefix("missing field ") {
            Some(rest) => format!("missing field {}", rest.split(' ').next().unwrap_or(rest)),
            None => "a value of the wrong type".to_string(),
        },
        Category::Syntax => "not JSON".to_string(),
        Category::Eof => "JSON cut short".to_string(),
        Category::Io => "unreadable".to_string(),
    };
    LlmError::Malformed(format!(
        "the body is not a chat completion ({what} at line {} column {}; the body is logged at \
         debug level: SPARRING_LOG=sparring=debug)",
        e.line(),
        e.column()
    ))
}

/// A short name a server's error vocabulary uses, and nothing else.
pub(crate) fn is_identifier(text: &str) -> bool {
    (1..=64).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// The body as text, cut short, for the log.
fn body_excerpt(body: &[u8]) -> String {
    const MAX: usize = 500;
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_error_bodies_give_message_and_code() {
        let body = br#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
        let e = LlmError::from_status(429, body, None);
        assert_eq!(e.class(), "quota_exhausted");
        assert!(!e.is_retryable());
    }

    #[test]
    fn an_error_keeps_no_text_of_the_body() {
        let e = LlmError::from_status(502, b"<html>Bad Gateway at 10.0.0.7</html>", None);
        assert_eq!(e.class(), "server_error");
        assert_eq!(
            e.to_string(),
            "server error (HTTP 502): a body that is not JSON"
        );
        assert!(e.is_retryable());
        let e = LlmError::from_status(
            400,
            br#"{"error":{"message":"secret internal text","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
            None,
        );
        assert_eq!(
            e.to_string(),
            "request rejected (HTTP 400): invalid_request_error / context_length_exceeded"
        );
        let e = LlmError::from_status(404, br#"{"detail":"the admin page says hello"}"#, None);
        assert!(!e.to_string().contains("hello"), "{e}");
        let e = LlmError::from_status(400, br#"{"error":{"code":"not an id: secret"}}"#, None);
        assert!(!e.to_string().contains("secret"), "{e}");
        let e = LlmError::from_status(500, b"", None);
        assert_eq!(e.to_string(), "server error (HTTP 500): an empty body");
    }

    #[test]
    fn client_errors_are_permanent() {
        for status in [400, 401, 403, 404, 422] {
            let e = LlmError::from_status(status, b"{\"error\":\"nope\"}", None);
            assert!(!e.is_retryable(), "{status} must not be retried");
        }
    }
}
