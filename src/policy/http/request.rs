//! One turn's request: `POST` of the rendered body to the rendered path,
//! the session id in `session_header` when one is named, and the
//! conversation's cookies (those the agent set, and `session_cookie` with
//! the session id when one is named) as `Cookie`.

use http::header::COOKIE;
use http::{HeaderName, HeaderValue};

use crate::config::policy::HttpKeys;
use crate::llm::raw::RawRequest;
use crate::llm::LlmError;
use crate::sim::PolicySession;

/// Give the conversation its session cookie, unless the agent has set a
/// cookie of that name since (the agent's value is then the session's).
pub fn add_session_cookie(config: &HttpKeys, session: &mut PolicySession) {
    let Some(name) = &config.session_cookie else {
        return;
    };
    if !session.cookies.iter().any(|(n, _)| n == name) {
        session.cookies.push((name.clone(), session.id.clone()));
    }
}

/// The request of a turn.
pub fn build(
    config: &HttpKeys,
    path: String,
    body: String,
    session: &PolicySession,
) -> Result<RawRequest, LlmError> {
    let mut request = RawRequest::post(path, body);
    if let Some(name) = &config.session_header {
        request.headers.push((
            HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                LlmError::InvalidRequest(format!(
                    "policy.http.session_header = {name:?} is not a header name"
                ))
            })?,
            header_value(&session.id)?,
        ));
    }
    if let Some(cookies) = session.cookie_header() {
        request.headers.push((COOKIE, header_value(&cookies)?));
    }
    Ok(request)
}

fn header_value(text: &str) -> Result<HeaderValue, LlmError> {
    HeaderValue::from_str(text).map_err(|_| {
        LlmError::InvalidRequest(format!(
            "{text:?} holds characters an HTTP header cannot carry"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(header: Option<&str>, cookie: Option<&str>) -> HttpKeys {
        HttpKeys {
            session_header: header.map(Into::into),
            session_cookie: cookie.map(Into::into),
            body: Some("{}".into()),
            reply: Some("/reply".into()),
            ..HttpKeys::default()
        }
    }

    fn header<'a>(request: &'a RawRequest, name: &str) -> Option<&'a str> {
        request
            .headers
            .iter()
            .find(|(n, _)| n.as_str() == name)
            .and_then(|(_, v)| v.to_str().ok())
    }

    #[test]
    fn the_session_goes_in_its_header_and_cookie_with_the_agents_own_cookies() {
        let config = config(Some("X-Session-Id"), Some("sid"));
        let mut session = PolicySession::new();
        add_session_cookie(&config, &mut session);
        session.keep_cookies(["lb=node2; Path=/"]);
        let request = build(&config, "/chat".into(), "{}".into(), &session).unwrap();
        assert_eq!(request.path, "/chat");
        assert_eq!(request.method, http::Method::POST);
        assert_eq!(header(&request, "x-session-id"), Some(session.id.as_str()));
        assert_eq!(
            header(&request, "cookie"),
            Some(format!("sid={}; lb=node2", session.id).as_str())
        );
    }

    #[test]
    fn a_session_cookie_the_agent_set_again_keeps_the_agents_value() {
        let config = config(None, Some("sid"));
        let mut session = PolicySession::new();
        add_session_cookie(&config, &mut session);
        session.keep_cookies(["sid=theirs"]);
        add_session_cookie(&config, &mut session);
        let request = build(&config, String::new(), "{}".into(), &session).unwrap();
        assert_eq!(header(&request, "cookie"), Some("sid=theirs"));
        assert_eq!(request.headers.len(), 1);
    }

    #[test]
    fn without_session_keys_or_cookies_no_header_is_added() {
        let request = build(
            &config(None, None),
            String::new(),
            "{}".into(),
            &PolicySession::new(),
        )
        .unwrap();
        assert!(request.headers.is_empty());
    }
}
