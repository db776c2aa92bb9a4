//! `[policy.http]`: any chat endpoint, described in the config: the path
//! (a template), the request body (a template), JSON Pointers to the reply
//! text and to an optional trace of tool calls, and how the session is kept.
//! The templates are checked by `crate::policy::http` with the sandboxed
//! Tera every template gets; here, their presence and the pointers.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::super::document::child;
use super::super::problem::Problem;
use super::check_pointer;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpKeys {
    /// Below the endpoint's base_url, a Tera template over the same
    /// variables as `body` (e.g. `/threads/{{ session }}/runs/wait`);
    /// default: the base_url itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The JSON request body, a Tera template over `session`, `last_user`
    /// (the user's latest message), `messages` (the conversation as
    /// `{role, content}`) and `turn` (0 for the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// JSON Pointer to the reply's text in the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// JSON Pointer to a list of the agent's tool calls in the answer
    /// (OpenAI chat messages, LangChain messages or Responses items).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// A header that carries the session id on every call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_header: Option<String>,
    /// A cookie that carries the session id on every call (cookies the
    /// agent sets are echoed in any case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_cookie: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HttpConfig {
    pub path: String,
    pub body: String,
    pub reply: String,
    pub trace: Option<String>,
    pub session_header: Option<String>,
    pub session_cookie: Option<String>,
}

impl HttpKeys {
    pub fn check(
        &self,
        file: &Path,
        field: &str,
        problems: &mut Vec<Problem>,
    ) -> Option<HttpConfig> {
        let before = problems.len();
        let required =
            |key: &str, value: &Option<String>, example: &str, problems: &mut Vec<Problem>| {
                if value.is_none() {
                    problems.push(Problem::at_field(
                        file,
                        &child(field, key),
                        format!("is missing; kind = \"http\" needs it, e.g. {key} = {example}"),
                    ));
                }
            };
        required(
            "body",
            &self.body,
            "'{\"message\": {{ last_user | json_encode() }}, \"session\": \"{{ session }}\"}'",
            problems,
        );
        required("reply", &self.reply, "\"/reply\"", problems);
        if let Some(reply) = &self.reply {
            check_pointer(file, &child(field, "reply"), reply, problems);
        }
        if let Some(trace) = &self.trace {
            check_pointer(file, &child(field, "trace"), trace, problems);
        }
        if let Some(path) = &self.path {
            if !(path.is_empty() || path.starts_with('/')) || path.starts_with("//") {
                problems.push(Problem::at_field(
                    file,
                    &child(field, "path"),
                    format!(
                        "{path:?} is not a path below the endpoint's base_url; write it as \
                         \"/threads/{{{{ session }}}}/runs/wait\" (starting with one /)"
                    ),
                ));
            }
        }
        for (key, name) in [
            ("session_header", &self.session_header),
            ("session_cookie", &self.session_cookie),
        ] {
            if let Some(name) = name {
                let token = !name.is_empty()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
                if !token {
                    problems.push(Problem::at_field(
                        file,
                        &child(field, key),
                        format!(
                            "{name:?} is not a valid header or cookie name (letters, digits \
                             and -_. only, e.g. \"X-Session-Id\")"
                        ),
                    ));
                }
            }
        }
        if problems.len() != before {
            return None;
        }
        Some(HttpConfig {
            path: self.path.clone().unwrap_or_default(),
            body: self.body.clone()?,
            reply: self.reply.clone()?,
            trace: self.trace.clone(),
            session_header: self.session_header.clone(),
            session_cookie: self.session_cookie.clone(),
        })
    }
}
