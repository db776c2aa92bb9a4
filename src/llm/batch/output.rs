//! The lines of a batch's output and error files: each names its request's
//! `custom_id` and holds either the response (`status_code`, `body`) or an
//! error. Only a 200 response with a readable completion is an answer;
//! anything else is a failed request, to be sent again, never a verdict.

use serde::Deserialize;

use crate::llm::wire::{from_response, WireResponse};
use crate::llm::Usage;

/// One line, read.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputLine {
    pub custom_id: String,
    pub outcome: LineOutcome,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LineOutcome {
    /// A 200 response: the assistant's text and the usage it reported.
    Answered { content: String, usage: Usage },
    /// An error line, a non-200 status, or a body that is not a completion:
    /// `class: message`.
    Failed(String),
}

#[derive(Deserialize)]
struct RawLine {
    custom_id: Option<String>,
    #[serde(default)]
    response: Option<RawResponse>,
    #[serde(default)]
    error: Option<RawError>,
}

#[derive(Deserialize)]
struct RawResponse {
    #[serde(default)]
    status_code: Option<u16>,
    #[serde(default)]
    body: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawError {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

/// Read one line of an output or error file. `Err` when the line is not a
/// batch line at all (not JSON, or no `custom_id`): it names no request.
pub fn parse_line(line: &str) -> Result<OutputLine, String> {
    let raw: RawLine =
        serde_json::from_str(line).map_err(|e| format!("not a batch output line: {e}"))?;
    let custom_id = raw
        .custom_id
        .filter(|id| !id.is_empty())
        .ok_or_else(|| "a batch output line without a custom_id".to_string())?;
    let outcome = outcome(raw.response, raw.error);
    Ok(OutputLine { custom_id, outcome })
}

fn outcome(response: Option<RawResponse>, error: Option<RawError>) -> LineOutcome {
    if let Some(error) = error {
        return LineOutcome::Failed(format!(
            "batch_error: {}: {}",
            error.code.as_deref().unwrap_or("error"),
            error.message.as_deref().unwrap_or("no message")
        ));
    }
    let Some(response) = response else {
        return LineOutcome::Failed("batch_error: a line with neither response nor error".into());
    };
    let body = response.body.unwrap_or(serde_json::Value::Null);
    match response.status_code {
        Some(200) => {}
        status => {
            let message = body
                .pointer("/error/message")
                .and_then(|m| m.as_str())
                .unwrap_or("no message");
            let status = status.map_or_else(|| "no status".to_string(), |s| s.to_string());
            return LineOutcome::Failed(format!("batch_status: HTTP {status}: {message}"));
        }
    }
    let read = serde_json::from_value::<WireResponse>(body)
        .map_err(|e| e.to_string())
        .and_then(|wire| {
            let usage = wire.reported_usage();
            from_response(wire, "batch")
                .map(|(message, _, fallback)| {
                    let usage = usage.map_or(fallback, |(p, c)| Usage {
                        prompt_tokens: p,
                        completion_tokens: c,
                    });
                    (message.content.to_string(), usage)
                })
                .map_err(|e| e.to_string())
        });
    match read {
        Ok((content, usage)) => LineOutcome::Answered { content, usage },
        Err(e) => LineOutcome::Failed(format!("malformed_response: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn answer_line(id: &str, content: &str, p: u64, c: u64) -> String {
        serde_json::json!({
            "id": "batch_req_1", "custom_id": id,
            "response": {"status_code": 200, "request_id": "r", "body": {
                "id": "x", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}},
            "error": null
        })
        .to_string()
    }

    #[test]
    fn a_200_line_is_an_answer_with_its_usage() {
        let line = parse_line(&answer_line("a-1", "Rating: [[7]]", 30, 4)).unwrap();
        assert_eq!(line.custom_id, "a-1");
        assert_eq!(
            line.outcome,
            LineOutcome::Answered {
                content: "Rating: [[7]]".into(),
                usage: Usage {
                    prompt_tokens: 30,
                    completion_tokens: 4
                }
            }
        );
    }

    #[test]
    fn an_error_line_and_a_non_200_status_are_failures_not_answers() {
        let error = r#"{"id":"e","custom_id":"b-2","response":null,"error":{"code":"server_error","message":"boom"}}"#;
        assert_eq!(
            parse_line(error).unwrap().outcome,
            LineOutcome::Failed("batch_error: server_error: boom".into())
        );
        let status = r#"{"custom_id":"c-3","response":{"status_code":500,"body":{"error":{"message":"overloaded"}}},"error":null}"#;
        assert_eq!(
            parse_line(status).unwrap().outcome,
            LineOutcome::Failed("batch_status: HTTP 500: overloaded".into())
        );
        let empty = r#"{"custom_id":"d","response":{"status_code":200,"body":{"choices":[]}}}"#;
        assert!(matches!(
            parse_line(empty).unwrap().outcome,
            LineOutcome::Failed(m) if m.starts_with("malformed_response")
        ));
    }

    #[test]
    fn a_line_without_a_custom_id_names_no_request() {
        assert!(parse_line(r#"{"response":null}"#).is_err());
        assert!(parse_line("not json").is_err());
        assert!(parse_line(r#"{"custom_id":""}"#).is_err());
    }

    proptest! {
        #[test]
        fn any_text_is_read_or_refused_without_panicking(line in ".{0,300}") {
            let _ = parse_line(&line);
        }

        #[test]
        fn any_answer_line_reads_back_what_it_holds(
            id in "[A-Za-z0-9_.-]{1,64}",
            content in "\\PC{0,200}",
            p in 0u64..1_000_000,
            c in 0u64..1_000_000,
        ) {
            let line = parse_line(&answer_line(&id, &content, p, c)).unwrap();
            prop_assert_eq!(line.custom_id, id);
            prop_assert_eq!(line.outcome, LineOutcome::Answered {
                content,
                usage: Usage { prompt_tokens: p, completion_tokens: c },
            });
        }

        #[test]
        fn any_non_200_status_is_a_failure(id in "[a-z0-9-]{1,20}", status in 100u16..600) {
            prop_assume!(status != 200);
            let line = serde_json::json!({"custom_id": id, "response": {"status_code": status, "body": {}}}).to_string();
            let parsed = parse_line(&line).unwrap();
            prop_assert!(matches!(parsed.outcome, LineOutcome::Failed(_)));
        }
    }
}
