//! `[policy] kind`: what plays the policy. `model` (the default) is a model
//! with tools whose calls sparring runs; the other kinds are a deployed agent
//! reached through the `[roles] policy` endpoint (its `base_url` is the
//! agent's address, its limits, timeout and retries are the agent's): a
//! Responses-API agent, an A2A server, or any HTTP chat endpoint. Each kind's
//! own keys are a table of its name (`[policy.http]`), read and checked here
//! with the file and field of every problem.

pub mod a2a;
pub mod http;
pub mod responses_agent;
pub mod trace;

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::file::PolicyFile;
use crate::diagnostics::document::child;
use crate::diagnostics::problem::Problem;

use crate::url_path::normalize_path;
pub use a2a::A2aKeys;
pub use http::HttpKeys;
pub use responses_agent::ResponsesAgentKeys;
pub use trace::TraceFormat;

/// The kinds, as `kind` names them.
pub const KINDS: &[&str] = &["model", "responses_agent", "a2a", "http"];

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyKindName {
    #[default]
    Model,
    ResponsesAgent,
    A2a,
    Http,
}

impl PolicyKindName {
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyKindName::Model => "model",
            PolicyKindName::ResponsesAgent => "responses_agent",
            PolicyKindName::A2a => "a2a",
            PolicyKindName::Http => "http",
        }
    }
}

/// What plays the policy, as checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum PolicyKind {
    #[default]
    Model,
    ResponsesAgent(ResponsesAgentKeys),
    A2a(A2aKeys),
    Http(HttpKeys),
}

impl PolicyKind {
    pub fn name(&self) -> PolicyKindName {
        match self {
            PolicyKind::Model => PolicyKindName::Model,
            PolicyKind::ResponsesAgent(_) => PolicyKindName::ResponsesAgent,
            PolicyKind::A2a(_) => PolicyKindName::A2a,
            PolicyKind::Http(_) => PolicyKindName::Http,
        }
    }

    /// Whether an agent, not a model, plays the policy.
    pub fn is_agent(&self) -> bool {
        !matches!(self, PolicyKind::Model)
    }
}

/// The kind `kind` names, from its table (a kind without keys of its own
/// needs none); a table of another kind is a problem at its field, as it
/// would be silently unused.
pub fn read_kind(
    file: &Path,
    kind: PolicyKindName,
    tables: &PolicyFile,
    problems: &mut Vec<Problem>,
) -> Option<PolicyKind> {
    let given = [
        (
            PolicyKindName::ResponsesAgent,
            tables.responses_agent.is_some(),
        ),
        (PolicyKindName::A2a, tables.a2a.is_some()),
        (PolicyKindName::Http, tables.http.is_some()),
    ];
    let before = problems.len();
    for (name, present) in given {
        if present && name != kind {
            problems.push(Problem::at_field(
                file,
                &child("policy", name.as_str()),
                format!(
                    "is the table of kind \"{}\" but [policy] kind is \"{}\"; \
                     set kind = \"{}\" or remove the table",
                    name.as_str(),
                    kind.as_str(),
                    name.as_str()
                ),
            ));
        }
    }
    let field = child("policy", kind.as_str());
    let kind = match kind {
        PolicyKindName::Model => Some(PolicyKind::Model),
        PolicyKindName::ResponsesAgent => {
            let keys = tables.responses_agent.clone().unwrap_or_default();
            keys.check(file, &field, problems)
                .map(PolicyKind::ResponsesAgent)
        }
        PolicyKindName::A2a => {
            let keys = tables.a2a.clone().unwrap_or_default();
            keys.check(file, &field, problems).map(PolicyKind::A2a)
        }
        PolicyKindName::Http => match &tables.http {
            Some(keys) => keys.check(file, &field, problems).map(PolicyKind::Http),
            None => {
                problems.push(Problem::at_field(
                    file,
                    &field,
                    "is missing; kind = \"http\" needs [policy.http] with at least body \
                     (a Tera template of the request) and reply (a JSON Pointer to the \
                     reply's text, e.g. \"/messages/-1/content\")",
                ));
                None
            }
        },
    };
    (problems.len() == before).then_some(kind).flatten()
}

/// A path below the agent's base URL: empty or starting with `/`, with no
/// scheme or host of its own (a call never leaves the endpoint's host, which
/// the service's egress rules check), whose `..` (in any spelling) never
/// climbs above the base URL's path ([`normalize_path`]).
pub fn check_path(file: &Path, field: &str, path: &str, problems: &mut Vec<Problem>) {
    if !(path.is_empty() || path.starts_with('/')) || path.starts_with("//") {
        problems.push(Problem::at_field(
            file,
            field,
            format!(
                "{path:?} is not a path below the endpoint's base_url; write it as \
                 \"/v1/responses\" (starting with one /), or leave it out"
            ),
        ));
    } else if path.contains(|c: char| c.is_whitespace() || c.is_control()) {
        problems.push(Problem::at_field(
            file,
            field,
            format!("{path:?} holds a space or a control character; a URL path cannot"),
        ));
    } else if let Err(why) = normalize_path(path) {
        problems.push(Problem::at_field(file, field, format!("{path:?} {why}")));
    }
}

/// A JSON Pointer (RFC 6901), with one extension: a token `-1` (or `-N`)
/// counts from the end of an array (`/messages/-1/content`: the last
/// message's content).
pub fn check_pointer(file: &Path, field: &str, pointer: &str, problems: &mut Vec<Problem>) {
    if !(pointer.is_empty() || pointer.starts_with('/')) {
        problems.push(Problem::at_field(
            file,
            field,
            format!(
                "{pointer:?} is not a JSON Pointer; one starts with / and names keys and \
                 indexes, e.g. \"/output/0/text\" or \"/messages/-1/content\" (\"\" is the \
                 whole reply)"
            ),
        ));
        return;
    }
    for token in pointer.split('/').skip(1) {
        let mut chars = token.chars();
        while let Some(c) = chars.next() {
            if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
                problems.push(Problem::at_field(
                    file,
                    field,
                    format!(
                        "{pointer:?}: '~' must be followed by 0 (for ~) or 1 (for /) in a \
                         JSON Pointer"
                    ),
                ));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems_of(f: impl FnOnce(&mut Vec<Problem>)) -> Vec<String> {
        let mut problems = Vec::new();
        f(&mut problems);
        problems.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn bad_pointers_and_paths_are_problems_naming_the_field() {
        let f = Path::new("job.toml");
        let p = problems_of(|p| check_pointer(f, "policy.http.reply", "messages/0", p));
        assert!(
            p[0].contains("policy.http.reply") && p[0].contains("JSON Pointer"),
            "{p:?}"
        );
        let p = problems_of(|p| check_pointer(f, "policy.http.reply", "/a~2", p));
        assert!(p[0].contains("'~'"), "{p:?}");
        assert!(problems_of(|p| check_pointer(f, "x", "/a~0~1/-1", p)).is_empty());
        let p = problems_of(|p| check_path(f, "policy.a2a.path", "http://evil/x", p));
        assert!(p[0].contains("below the endpoint's base_url"), "{p:?}");
        let p = problems_of(|p| check_path(f, "policy.a2a.path", "//evil/x", p));
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(problems_of(|p| check_path(f, "x", "/v1/responses", p)).is_empty());
        assert!(problems_of(|p| check_path(f, "x", "", p)).is_empty());
    }

    #[test]
    fn a_table_of_another_kind_is_refused_and_http_needs_its_table() {
        let f = Path::new("job.toml");
        let tables = PolicyFile {
            a2a: Some(A2aKeys::default()),
            ..PolicyFile::default()
        };
        let mut problems = Vec::new();
        let kind = read_kind(f, PolicyKindName::ResponsesAgent, &tables, &mut problems);
        assert_eq!(kind, None);
        assert!(
            problems[0].to_string().contains("policy.a2a"),
            "{problems:?}"
        );
        let mut problems = Vec::new();
        assert_eq!(
            read_kind(
                f,
                PolicyKindName::Http,
                &PolicyFile::default(),
                &mut problems
            ),
            None
        );
        assert!(
            problems[0].to_string().contains("[policy.http]"),
            "{problems:?}"
        );
        let mut problems = Vec::new();
        let kind = read_kind(
            f,
            PolicyKindName::A2a,
            &PolicyFile::default(),
            &mut problems,
        );
        assert!(matches!(kind, Some(PolicyKind::A2a(_))), "{problems:?}");
    }
}
