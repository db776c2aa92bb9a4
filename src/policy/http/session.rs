//! `[policy.http.session_create]`: the request that makes the agent's own
//! session before a conversation's first turn (ADK's `api_server` answers
//! `/run` with 404 "Session not found" for a session it was not asked to
//! make: `POST /apps/{app}/users/{user}/sessions/{id}` makes it). The path
//! and body are templates over the first turn's variables; the answer must
//! be the `status` asked for (any 2xx by default), and with an `id` pointer
//! its JSON names the session, which later templates read as `session_id`.
//! The agent's cookies are kept as on any turn. A failure fails the item
//! with the class of the endpoint's errors (a status that is not the one
//! asked for is `malformed_response`), never a reward.

use serde_json::Value;

use super::pointer::resolve;
use crate::config::policy::http::SessionCreateKeys;
use crate::llm::raw::RawRequest;
use crate::llm::{ChatModel, LlmError};
use crate::policy::reply::text_of;
use crate::sim::episode_error::EpisodeError;
use crate::sim::PolicySession;

use super::templates::HttpTemplates;
use super::variables::Variables;

/// Make the conversation's session; its id, when `create.id` names where the
/// answer holds it, is kept as the session's `context_id`.
pub async fn create(
    model: &dyn ChatModel,
    create: &SessionCreateKeys,
    templates: &HttpTemplates,
    variables: &Variables,
    session: &mut PolicySession,
) -> Result<(), EpisodeError> {
    let invalid = |m: String| crate::policy::failed(LlmError::InvalidRequest(m));
    let path = templates
        .create_path(variables)
        .map_err(|e| invalid(e.to_string()))?;
    let body = templates
        .create_body(variables)
        .map_err(|e| invalid(e.to_string()))?;
    let mut request = RawRequest::post(path, body);
    if let Some(cookies) = session
        .cookie_header()
        .and_then(|c| http::HeaderValue::from_str(&c).ok())
    {
        request.headers.push((http::header::COOKIE, cookies));
    }
    let reply = model
        .call_raw(request)
        .await
        .map_err(|e| crate::policy::failed(about_session(e)))?;
    session.keep_set_cookies(&reply.headers);
    if let Some(expected) = create.status.filter(|s| *s != reply.status) {
        return Err(crate::policy::malformed(format!(
            "policy.http.session_create: the agent answered {} where status = {expected} was \
             asked for",
            reply.status
        )));
    }
    if let Some(pointer) = &create.id {
        session.context_id = Some(id_at(&reply.body, pointer).map_err(crate::policy::malformed)?);
    }
    Ok(())
}

/// The session id at `pointer` of an answer: a string or a number.
fn id_at(body: &[u8], pointer: &str) -> Result<String, String> {
    let document: Value = serde_json::from_slice(body).map_err(|e| {
        format!("policy.http.session_create: the agent's answer is not JSON ({e}), so it has no id")
    })?;
    match resolve(&document, pointer) {
        Some(id @ (Value::String(_) | Value::Number(_))) => {
            let id = text_of(id);
            if id.is_empty() {
                return Err(format!(
                    "policy.http.session_create.id = {pointer:?} points at an empty string"
                ));
            }
            Ok(id)
        }
        Some(_) => Err(format!(
            "policy.http.session_create.id = {pointer:?} points at something that is not a \
             string or a number"
        )),
        None => Err(format!(
            "policy.http.session_create.id = {pointer:?} points at nothing in the agent's answer"
        )),
    }
}

/// An error of the session request, saying it was that request.
fn about_session(error: LlmError) -> LlmError {
    let about = |m: String| format!("policy.http.session_create: {m}");
    match error {
        LlmError::Rejected { status, message } => LlmError::Rejected {
            status,
            message: about(message),
        },
        LlmError::Server { status, message } => LlmError::Server {
            status,
            message: about(message),
        },
        LlmError::Connection(m) => LlmError::Connection(about(m)),
        LlmError::Unanswered(m) => LlmError::Unanswered(about(m)),
        LlmError::Malformed(m) => LlmError::Malformed(about(m)),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_a_string_or_a_number_at_its_pointer() {
        assert_eq!(id_at(br#"{"id": "s1"}"#, "/id"), Ok("s1".into()));
        assert_eq!(
            id_at(br#"{"session": {"id": 7}}"#, "/session/id"),
            Ok("7".into())
        );
        assert!(id_at(br#"{"id": ""}"#, "/id")
            .unwrap_err()
            .contains("empty"));
        assert!(id_at(br#"{"id": {}}"#, "/id")
            .unwrap_err()
            .contains("not a string"));
        assert!(id_at(br#"{}"#, "/id")
            .unwrap_err()
            .contains("points at nothing"));
        assert!(id_at(b"<html>", "/id").unwrap_err().contains("not JSON"));
    }

    #[test]
    fn a_refused_session_request_says_it_was_the_session_request() {
        let e = about_session(LlmError::Rejected {
            status: 404,
            message: "an empty body".into(),
        });
        assert_eq!(e.class(), "rejected");
        assert!(e.to_string().contains("policy.http.session_create"), "{e}");
    }
}
