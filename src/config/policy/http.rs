//! `[policy.http]`: any chat endpoint, described in the config: the path
//! (a template), the request body (a template), JSON Pointers to the reply
//! text, to an optional trace of tool calls (in a shape it may name) and to
//! the token usage, how the session is kept, and an optional request that
//! makes the agent's session before a conversation's first turn
//! (`[policy.http.session_create]`, as ADK's `api_server` needs). The
//! templates are checked by `crate::policy::http` with the sandboxed Tera
//! every template gets; here, their presence, the pointers and the ranges.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::check_pointer;
use super::trace::TraceFormat;
use crate::diagnostics::document::child;
use crate::diagnostics::problem::Problem;

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
    /// (OpenAI chat messages, LangChain messages, Responses items, ADK
    /// events, A2A parts, ...); not empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The shape the trace is read as (default `auto`); given without
    /// `trace`, the whole answer is the trace (ADK's `/run` list of events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_format: Option<TraceFormat>,
    /// JSON Pointer to the turn's token usage (an object, or a list of
    /// them, summed); default: the answer's own `usage`, or its events'
    /// `usageMetadata`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<String>,
    /// A request made once per conversation, before its first turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_create: Option<SessionCreateKeys>,
    /// A header that carries the session id on every call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_header: Option<String>,
    /// A cookie that carries the session id on every call (cookies the
    /// agent sets are echoed in any case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_cookie: Option<String>,
}

/// `[policy.http.session_create]`: `POST` of `body` to `path` (both
/// templates over the turn's variables), answered with `status`, the
/// session's id at the `id` pointer of the answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionCreateKeys {
    /// Below the endpoint's base_url, a template (e.g.
    /// `/apps/orders/users/sparring/sessions/{{ session }}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The JSON request body, a template (default `{}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The status the agent answers (default: any 2xx).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// JSON Pointer to the session's id in the answer, given to the turn
    /// templates as `session_id` (default: `session_id` is `session`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// Where the trace is and how it is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceAt {
    /// A JSON Pointer; `""` is the whole answer.
    pub pointer: String,
    pub format: TraceFormat,
}

impl HttpKeys {
    /// The path template (empty: the base_url itself).
    pub fn path(&self) -> &str {
        self.path.as_deref().unwrap_or_default()
    }

    /// The body template (given, once checked).
    pub fn body(&self) -> &str {
        self.body.as_deref().unwrap_or_default()
    }

    /// The reply's pointer (given, once checked).
    pub fn reply(&self) -> &str {
        self.reply.as_deref().unwrap_or_default()
    }

    /// Where the trace is and how it is read; `None` without either key.
    pub fn trace_at(&self) -> Option<TraceAt> {
        match (&self.trace, self.trace_format) {
            (None, None) => None,
            (pointer, format) => Some(TraceAt {
                pointer: pointer.clone().unwrap_or_default(),
                format: format.unwrap_or_default(),
            }),
        }
    }

    /// The keys, when they are a kind = "http" policy's; every problem at its field.
    pub fn check(&self, file: &Path, field: &str, problems: &mut Vec<Problem>) -> Option<HttpKeys> {
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
            if trace.is_empty() {
                problems.push(Problem::at_field(
                    file,
                    &child(field, "trace"),
                    "is empty; give the JSON Pointer of the list of the agent's tool calls \
                     (e.g. \"/messages\"), or, to read the whole answer as the trace (ADK's \
                     /run events), leave trace out and name its shape: trace_format = \
                     \"adk_events\"",
                ));
            } else {
                check_pointer(file, &child(field, "trace"), trace, problems);
            }
        }
        if let Some(usage) = &self.usage {
            check_pointer(file, &child(field, "usage"), usage, problems);
        }
        if let Some(path) = &self.path {
            check_template_path(file, &child(field, "path"), path, problems);
        }
        if let Some(keys) = &self.session_create {
            keys.check(file, &child(field, "session_create"), problems);
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
        (problems.len() == before).then(|| self.clone())
    }
}

impl SessionCreateKeys {
    /// The path template (given, once checked).
    pub fn path(&self) -> &str {
        self.path.as_deref().unwrap_or_default()
    }

    /// The body template (default `{}`).
    pub fn body(&self) -> &str {
        self.body.as_deref().unwrap_or("{}")
    }

    fn check(&self, file: &Path, field: &str, problems: &mut Vec<Problem>) {
        match &self.path {
            None => problems.push(Problem::at_field(
                file,
                &child(field, "path"),
                "is missing; the session is made by a POST to a path below the endpoint's \
                 base_url, e.g. path = \"/apps/my_app/users/sparring/sessions/{{ session }}\"",
            )),
            Some(path) => check_template_path(file, &child(field, "path"), path, problems),
        }
        if let Some(status) = self.status {
            if !(200..=299).contains(&status) {
                problems.push(Problem::at_field(
                    file,
                    &child(field, "status"),
                    format!(
                        "{status} is not a success status; the session request succeeds with \
                         a status from 200 to 299 (any other fails the conversation's item)"
                    ),
                ));
            }
        }
        if let Some(id) = &self.id {
            check_pointer(file, &child(field, "id"), id, problems);
        }
    }
}

/// A path template: empty (the base_url itself) or starting with one `/`.
fn check_template_path(file: &Path, field: &str, path: &str, problems: &mut Vec<Problem>) {
    if !(path.is_empty() || path.starts_with('/')) || path.starts_with("//") {
        problems.push(Problem::at_field(
            file,
            field,
            format!(
                "{path:?} is not a path below the endpoint's base_url; write it as \
                 \"/threads/{{{{ session }}}}/runs/wait\" (starting with one /)"
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(toml: &str) -> (Option<HttpKeys>, Vec<String>) {
        let keys: HttpKeys = toml::from_str(toml).unwrap();
        let mut problems = Vec::new();
        let config = keys.check(Path::new("job.toml"), "policy.http", &mut problems);
        (config, problems.iter().map(ToString::to_string).collect())
    }

    const BASE: &str = "body = '{}'\nreply = \"/reply\"\n";

    #[test]
    fn an_empty_trace_pointer_is_a_problem_that_says_how_to_read_the_whole_answer() {
        let (config, p) = check(&format!("{BASE}trace = \"\""));
        assert!(config.is_none());
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("job.toml: policy.http.trace: is empty"),
            "{p:?}"
        );
        assert!(p[0].contains("trace_format = \"adk_events\""), "{p:?}");
    }

    #[test]
    fn a_trace_format_alone_reads_the_whole_answer_and_a_pointer_alone_reads_any_shape() {
        let (config, p) = check(&format!("{BASE}trace_format = \"adk_events\""));
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(
            config.unwrap().trace_at(),
            Some(TraceAt {
                pointer: String::new(),
                format: TraceFormat::AdkEvents
            })
        );
        let (config, _) = check(&format!("{BASE}trace = \"/messages\""));
        assert_eq!(
            config.unwrap().trace_at().unwrap().format,
            TraceFormat::Auto
        );
        let (config, _) = check(BASE);
        assert_eq!(config.unwrap().trace_at(), None);
        let unknown: Result<HttpKeys, _> = toml::from_str(&format!("{BASE}trace_format = \"xml\""));
        let e = unknown.unwrap_err().to_string();
        assert!(e.contains("adk_events") && e.contains("openai_chat"), "{e}");
    }

    #[test]
    fn a_session_request_needs_a_path_and_a_success_status() {
        let (config, p) = check(&format!(
            "{BASE}[session_create]\nstatus = 404\nid = \"id\"\n"
        ));
        assert!(config.is_none());
        let joined = p.join("\n");
        assert!(
            joined.contains("policy.http.session_create.path: is missing"),
            "{joined}"
        );
        assert!(
            joined.contains("policy.http.session_create.status: 404 is not a success"),
            "{joined}"
        );
        assert!(joined.contains("policy.http.session_create.id"), "{joined}");
        let (config, p) = check(&format!(
            "{BASE}[session_create]\npath = \"/apps/a/users/u/sessions/{{{{ session }}}}\"\n"
        ));
        assert!(p.is_empty(), "{p:?}");
        let create = config.unwrap().session_create.unwrap();
        assert_eq!(
            (create.body(), create.status, create.id.as_deref()),
            ("{}", None, None)
        );
    }
}
