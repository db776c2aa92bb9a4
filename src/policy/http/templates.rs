//! The `path` and `body` templates of `[policy.http]` and of its
//! `session_create`: parsed with the sandboxed Tera every sparring template
//! gets (no environment, files, clock or randomness; issue 25), checked when
//! the job is loaded by rendering them over sample variables, and rendered
//! once per policy turn (the session's once per conversation). A body must
//! render to JSON and a path to a path below the endpoint's base URL.

use std::path::{Path, PathBuf};

use crate::config::policy::{check_path, HttpKeys};
use crate::config::Problem;
use crate::prompt::{PromptError, PromptRegistry};

use super::variables::{Variables, NAMES};

/// The field, and the template's name in errors.
pub const PATH: &str = "policy.http.path";
/// The field, and the template's name in errors.
pub const BODY: &str = "policy.http.body";
/// The field, and the template's name in errors.
pub const CREATE_PATH: &str = "policy.http.session_create.path";
/// The field, and the template's name in errors.
pub const CREATE_BODY: &str = "policy.http.session_create.body";

/// Every template's name, the longest first (a name is found in a parser's
/// message by it).
const NAMES_BY_LENGTH: [&str; 4] = [CREATE_PATH, CREATE_BODY, PATH, BODY];

/// A turn's request that could not be made from the templates: a failure of
/// the item (`invalid_request`), never a call.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("{0}; the variables are {NAMES}")]
    Render(PromptError),
    #[error(
        "{field} rendered to text that is not JSON ({error}, near {near:?}); a body is a JSON \
         document: put text into it with `| json_encode()`, e.g. \
         {{\"input\": {{{{ last_user | json_encode() }}}}}}"
    )]
    NotJson {
        field: &'static str,
        error: String,
        near: String,
    },
    #[error("{field} rendered to {path:?}: {problem}")]
    NotAPath {
        field: &'static str,
        path: String,
        problem: String,
    },
}

/// The templates of one `[policy.http]`, parsed.
#[derive(Debug)]
pub struct HttpTemplates {
    prompts: PromptRegistry,
    /// Whether a `path` template was given (else the base URL itself).
    has_path: bool,
    /// Whether a `session_create` was given.
    has_create: bool,
}

impl HttpTemplates {
    /// Parse the templates of `config` (read from `file`) and render them
    /// over [`Variables::samples`]: every syntax error (at its line and
    /// column in the template), call of a function templates may not call,
    /// unknown variable or filter, body that is not JSON and path that is
    /// not a path is a problem at its field.
    pub fn load(file: &Path, config: &HttpKeys) -> Result<HttpTemplates, Vec<Problem>> {
        let templates = Self::parse(file, config)?;
        let mut problems: Vec<Problem> = Vec::new();
        for sample in Variables::samples() {
            let mut field_problems = vec![
                (PATH, templates.path(&sample).err()),
                (BODY, templates.body(&sample).err()),
            ];
            if templates.has_create {
                field_problems.push((CREATE_PATH, templates.create_path(&sample).err()));
                field_problems.push((CREATE_BODY, templates.create_body(&sample).err()));
            }
            for (field, error) in field_problems {
                let Some(error) = error else { continue };
                let problem = Problem::at_field(file, field, error.to_string());
                // The samples' second turn repeats what the first found.
                if !problems.iter().any(|p| p.location == problem.location) {
                    problems.push(problem);
                }
            }
        }
        if problems.is_empty() {
            Ok(templates)
        } else {
            Err(problems)
        }
    }

    /// Parse only: syntax and the sandbox's fence.
    fn parse(file: &Path, config: &HttpKeys) -> Result<HttpTemplates, Vec<Problem>> {
        let mut texts: Vec<(String, PathBuf, String)> =
            vec![(BODY.into(), file.to_path_buf(), config.body().to_string())];
        let has_path = !config.path().is_empty();
        if has_path {
            texts.push((PATH.into(), file.to_path_buf(), config.path().to_string()));
        }
        if let Some(create) = &config.session_create {
            texts.push((
                CREATE_PATH.into(),
                file.to_path_buf(),
                create.path().to_string(),
            ));
            texts.push((
                CREATE_BODY.into(),
                file.to_path_buf(),
                create.body().to_string(),
            ));
        }
        let prompts = PromptRegistry::from_texts(texts)
            .map_err(|problems| problems.into_iter().map(at_field_of).collect::<Vec<_>>())?;
        Ok(HttpTemplates {
            prompts,
            has_path,
            has_create: config.session_create.is_some(),
        })
    }

    /// The request path of a turn: below the endpoint's base URL.
    pub fn path(&self, variables: &Variables) -> Result<String, TemplateError> {
        if !self.has_path {
            return Ok(String::new());
        }
        self.render_path(PATH, variables)
    }

    /// The request body of a turn: a JSON document.
    pub fn body(&self, variables: &Variables) -> Result<String, TemplateError> {
        self.render_body(BODY, variables)
    }

    /// The path of the request that makes a conversation's session.
    pub fn create_path(&self, variables: &Variables) -> Result<String, TemplateError> {
        self.render_path(CREATE_PATH, variables)
    }

    /// The body of the request that makes a conversation's session.
    pub fn create_body(&self, variables: &Variables) -> Result<String, TemplateError> {
        self.render_body(CREATE_BODY, variables)
    }

    fn render_path(
        &self,
        field: &'static str,
        variables: &Variables,
    ) -> Result<String, TemplateError> {
        let path = self
            .prompts
            .render(field, &variables.context())
            .map_err(TemplateError::Render)?;
        let mut problems = Vec::new();
        check_path(Path::new(""), field, &path, &mut problems);
        match problems.into_iter().next() {
            None => Ok(path),
            Some(problem) => Err(TemplateError::NotAPath {
                field,
                path,
                problem: problem.message,
            }),
        }
    }

    fn render_body(
        &self,
        field: &'static str,
        variables: &Variables,
    ) -> Result<String, TemplateError> {
        let body = self
            .prompts
            .render(field, &variables.context())
            .map_err(TemplateError::Render)?;
        match serde_json::from_str::<serde::de::IgnoredAny>(&body) {
            Ok(_) => Ok(body),
            Err(error) => Err(TemplateError::NotJson {
                field,
                near: near(&body, error.line(), error.column()),
                error: error.to_string(),
            }),
        }
    }
}

/// A problem of the template parser, whose file is the config's, at the
/// template's field: `policy.http.body, template line 2, column 5` (the
/// parser names the template in its message).
fn at_field_of(problem: Problem) -> Problem {
    let field = NAMES_BY_LENGTH
        .into_iter()
        .find(|name| problem.message.contains(&format!("`{name}`")))
        .unwrap_or(BODY);
    let location = match &problem.location {
        Some(at) => format!("{field}, template {at}"),
        None => field.to_string(),
    };
    Problem::new(&problem.file, Some(location), problem.message)
}

/// Up to 30 characters of `text` around 1-based `line` and `column`.
fn near(text: &str, line: usize, column: usize) -> String {
    let Some(at_line) = text.lines().nth(line.saturating_sub(1)) else {
        return String::new();
    };
    let chars: Vec<char> = at_line.chars().collect();
    let end = column.min(chars.len());
    let start = end.saturating_sub(30);
    chars[start..end].iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::PolicySession;

    fn config(path: &str, body: &str) -> HttpKeys {
        HttpKeys {
            path: Some(path.into()),
            body: Some(body.into()),
            reply: Some("/reply".into()),
            ..HttpKeys::default()
        }
    }

    fn problems(path: &str, body: &str) -> Vec<String> {
        match HttpTemplates::load(Path::new("job.toml"), &config(path, body)) {
            Ok(_) => Vec::new(),
            Err(problems) => problems.iter().map(ToString::to_string).collect(),
        }
    }

    const LANGGRAPH_BODY: &str = r#"{"assistant_id": "agent",
 "input": {"messages": [{"role": "user", "content": {{ last_user | json_encode() }}}]},
 "if_not_exists": "create"}"#;

    #[test]
    fn langgraphs_templates_render_the_thread_and_the_users_words_as_json() {
        let templates = HttpTemplates::load(
            Path::new("job.toml"),
            &config("/threads/{{ uuid }}/runs/wait", LANGGRAPH_BODY),
        )
        .unwrap();
        let session = PolicySession {
            id: "sparring-00000000000000aa".into(),
            ..PolicySession::default()
        };
        let mut transcript = crate::sim::Transcript::default();
        transcript.push(
            crate::llm::message::Message::user("say \"hi\"\nplease"),
            crate::sim::Author::User,
        );
        let vars = Variables::of_turn(&transcript, &session);
        assert_eq!(
            templates.path(&vars).unwrap(),
            format!("/threads/{}/runs/wait", session.uuid())
        );
        let body: serde_json::Value =
            serde_json::from_str(&templates.body(&vars).unwrap()).unwrap();
        assert_eq!(
            body["input"]["messages"][0]["content"],
            "say \"hi\"\nplease"
        );
        assert_eq!(body["if_not_exists"], "create");
    }

    #[test]
    fn the_whole_dialogue_and_the_turn_can_be_sent() {
        let templates = HttpTemplates::load(
            Path::new("job.toml"),
            &config(
                "",
                r#"{"messages": {{ messages | json_encode() }}, "turn": {{ turn }}, "system": {{ system | json_encode() }}}"#,
            ),
        )
        .unwrap();
        let [_, later] = Variables::samples();
        assert_eq!(templates.path(&later).unwrap(), "");
        let body: serde_json::Value =
            serde_json::from_str(&templates.body(&later).unwrap()).unwrap();
        assert_eq!(body["turn"], 1);
        assert_eq!(body["messages"][1]["role"], "assistant");
        assert_eq!(body["messages"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn text_put_in_the_body_without_json_encode_is_caught_by_the_samples() {
        let p = problems("", r#"{"message": "{{ last_user }}"}"#);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with(
                "job.toml: policy.http.body: policy.http.body rendered to text that is not JSON"
            ),
            "{p:?}"
        );
        assert!(p[0].contains("json_encode"), "{p:?}");
    }

    #[test]
    fn a_syntax_error_is_at_the_templates_field_line_and_column() {
        let p = problems("", "{\"a\": 1,\n \"b\": {{ last_user | }}}");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("job.toml: policy.http.body, template line 2, column "),
            "{p:?}"
        );
        assert!(p[0].contains("syntax error"), "{p:?}");
        let p = problems("/threads/{{ uuid }/runs", "{}");
        assert!(
            p[0].starts_with("job.toml: policy.http.path, template line 1, column "),
            "{p:?}"
        );
    }

    #[test]
    fn an_unknown_variable_is_named_with_the_variables_there_are() {
        let p = problems(
            "/t/{{ thread_id }}",
            r#"{"a": {{ user_text | json_encode() }}}"#,
        );
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(
            p[0].contains("policy.http.path") && p[0].contains("thread_id"),
            "{p:?}"
        );
        assert!(
            p[1].contains("policy.http.body") && p[1].contains("user_text"),
            "{p:?}"
        );
        assert!(
            p[1].contains("the variables are session, uuid, session_id, last_user"),
            "{p:?}"
        );
    }

    #[test]
    fn templates_cannot_read_the_environment() {
        let p = problems("", r#"{"key": "{{ get_env(name="HOME") }}"}"#);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains("policy.http.body, template line 1, column"),
            "{p:?}"
        );
        assert!(p[0].contains("calls `get_env`"), "{p:?}");
    }

    #[test]
    fn a_path_that_renders_to_no_path_is_a_problem() {
        let p = problems("{{ last_user }}", "{}");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("policy.http.path rendered to"), "{p:?}");
    }

    proptest::proptest! {
        #[test]
        fn any_words_of_the_user_go_into_the_body_as_json_unchanged(words in "(?s).{0,64}") {
            let templates =
                HttpTemplates::load(Path::new("job.toml"), &config("", LANGGRAPH_BODY)).unwrap();
            let [mut first, _] = Variables::samples();
            first.last_user = words.clone();
            let body: serde_json::Value =
                serde_json::from_str(&templates.body(&first).unwrap()).unwrap();
            proptest::prop_assert_eq!(
                body["input"]["messages"][0]["content"].as_str(),
                Some(words.as_str())
            );
        }
    }

    #[test]
    fn near_shows_the_text_before_the_error() {
        assert_eq!(near("{\"a\": x}", 1, 7), "{\"a\": x");
        assert_eq!(near("", 3, 1), "");
        assert_eq!(near("é", 1, 9), "é");
    }
}
