//! What a template may reach: the variables sparring passes it, tera's filters
//! and tests (pure functions of their input), and the functions `range` and
//! `throw`. Nothing else: no environment (`get_env`), no clock (`now`), no
//! randomness (`get_random`), no file. A template can come from whoever holds
//! the service's token, or from a file a model wrote, so what it could read
//! would end up in a prompt sent to a URL of their choosing.
//!
//! Two fences, so that neither alone has to be perfect: every template's
//! parsed tree is searched for calls of functions not allowed, which is a
//! problem at the call's line when the template is loaded (`sparring
//! validate`, `run`, a submitted job: 422); and every tera instance sparring
//! builds has the functions tera registers by default that reach outside
//! replaced by one that refuses, so a call that got past the first fence
//! would still read nothing.

use std::collections::{BTreeSet, HashMap};

use tera::{Template, Tera, Value};

use super::ast_walk::{walk_nodes, Found};

/// The functions a template may call: both are pure.
pub const ALLOWED_FUNCTIONS: [&str; 2] = ["range", "throw"];

/// Functions tera 1.x registers by default (some behind its `builtins`
/// feature) that read the process's environment, the clock or randomness.
const OUTSIDE_FUNCTIONS: [&str; 3] = ["get_env", "now", "get_random"];

/// A tera instance with tera's filters and tests and only the
/// [`ALLOWED_FUNCTIONS`]: every function of tera's defaults that reaches
/// outside the template's variables is replaced by one that refuses.
pub fn sandboxed_tera() -> Tera {
    let mut tera = Tera::default();
    for name in OUTSIDE_FUNCTIONS {
        tera.register_function(name, refuse(name));
    }
    tera
}

fn refuse(name: &'static str) -> impl Fn(&HashMap<String, Value>) -> tera::Result<Value> {
    move |_| {
        Err(tera::Error::msg(format!(
            "`{name}` is not available to templates: a template sees only the variables \
             sparring passes it"
        )))
    }
}

/// A call of a function templates may not call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideCall {
    pub function: String,
    /// 1-based line and column of the call in the template's text, when found.
    pub position: Option<(usize, usize)>,
}

impl OutsideCall {
    pub fn message(&self, template: &str) -> String {
        format!(
            "template `{template}` calls `{}`, which templates may not call: a template sees \
             only the variables sparring passes it (no environment, files, clock or \
             randomness); the functions it may call are {}",
            self.function,
            ALLOWED_FUNCTIONS.join(" and ")
        )
    }
}

/// Every call in `template` (parsed from `text`) of a function that is not
/// in [`ALLOWED_FUNCTIONS`], each place it is called at, in text order.
pub fn outside_calls(template: &Template, text: &str) -> Vec<OutsideCall> {
    let mut names = BTreeSet::new();
    walk_nodes(&template.ast, true, &mut |found| {
        if let Found::Function(call) = found {
            if !ALLOWED_FUNCTIONS.contains(&call.name.as_str()) {
                names.insert(call.name.clone());
            }
        }
    });
    let mut calls = Vec::new();
    for name in names {
        let positions = call_positions(text, &name);
        if positions.is_empty() {
            calls.push(OutsideCall {
                function: name,
                position: None,
            });
        } else {
            calls.extend(positions.into_iter().map(|position| OutsideCall {
                function: name.clone(),
                position: Some(position),
            }));
        }
    }
    calls.sort_by_key(|c| c.position);
    calls
}

/// Where `name(` is written inside a tag (`{{ … }}` or `{% … %}`, not a
/// comment, not text, not a raw block) of `text`: 1-based line and column of
/// each. tera's tree carries no positions, so they are found in the text.
fn call_positions(text: &str, name: &str) -> Vec<(usize, usize)> {
    let Ok(call) = regex::Regex::new(&format!(r"\b{}\s*\(", regex::escape(name))) else {
        return Vec::new();
    };
    let mut positions = Vec::new();
    for (start, tag) in tags(text) {
        for found in call.find_iter(tag) {
            let (line, column) = crate::diagnostics::problem::line_col(text, start + found.start());
            positions.push((line, column));
        }
    }
    positions
}

/// The inside of every expression and statement tag of `text`, with its byte
/// offset; comments and `{% raw %}` blocks are skipped.
fn tags(text: &str) -> Vec<(usize, &str)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(open) = text[at..].find('{').map(|i| at + i) {
        let rest = &text[open..];
        let close = if rest.starts_with("{{") {
            "}}"
        } else if rest.starts_with("{%") {
            "%}"
        } else if rest.starts_with("{#") {
            "#}"
        } else {
            at = open + 1;
            continue;
        };
        let inner = open + 2;
        let Some(end) = text[inner..].find(close).map(|i| inner + i) else {
            break;
        };
        let content = &text[inner..end];
        at = end + 2;
        if close == "#}" {
            continue;
        }
        if close == "%}" && is_statement(content, "raw") {
            // Everything up to the matching `{% endraw %}` is text.
            match endraw(text, at) {
                Some(after) => at = after,
                None => break,
            }
            continue;
        }
        found.push((inner, content));
    }
    found
}

/// Whether a statement tag's content is `keyword` (with `-` whitespace control).
fn is_statement(content: &str, keyword: &str) -> bool {
    content.trim_matches(|c: char| c == '-' || c.is_whitespace()) == keyword
}

/// The offset just after the `{% endraw %}` that ends a raw block begun before `from`.
fn endraw(text: &str, from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        let open = at + text[at..].find("{%")?;
        let end = open + 2 + text[open + 2..].find("%}")?;
        if is_statement(&text[open + 2..end], "endraw") {
            return Some(end + 2);
        }
        at = end + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(text: &str) -> Vec<OutsideCall> {
        let template = Template::new("t", None, text).unwrap();
        outside_calls(&template, text)
    }

    fn at(function: &str, line: usize, column: usize) -> OutsideCall {
        OutsideCall {
            function: function.into(),
            position: Some((line, column)),
        }
    }

    #[test]
    fn get_env_anywhere_in_a_template_is_found_at_its_line() {
        assert_eq!(
            calls("Hello\n{{ get_env(name=\"SPARRING_API_TOKEN\") }}"),
            vec![at("get_env", 2, 4)]
        );
        let nested =
            "{% if x %}\n{% for i in [1] %}{{ a | default(value=get_env(name=\"HOME\")) }}\
                      {% endfor %}{% endif %}\n{% set k = now() %}";
        assert_eq!(calls(nested), vec![at("get_env", 2, 40), at("now", 3, 12)]);
        let in_macro = "{% macro m(x=1) %}{{ get_random(start=1, end=x) }}{% endmacro m %}";
        assert_eq!(calls(in_macro), vec![at("get_random", 1, 22)]);
        let spaced = "{{\n  get_env  (name='A') ~ 'b' }}";
        assert_eq!(calls(spaced), vec![at("get_env", 2, 3)]);
    }

    #[test]
    fn every_call_is_reported_and_a_function_of_any_other_name_too() {
        let text = "{{ get_env(name='A') }}\n{{ get_env(name='B') }}\n{{ load_data(path='x') }}";
        assert_eq!(
            calls(text),
            vec![
                at("get_env", 1, 4),
                at("get_env", 2, 4),
                at("load_data", 3, 4)
            ]
        );
    }

    #[test]
    fn allowed_functions_filters_and_text_are_not_calls() {
        let text = "{% raw %}{{ get_env(name='A') }}{% endraw %}{# get_env(name='B') #}\
                    get_env(name='C') {% for i in range(end=3) %}{{ i | round }}{% endfor %}\
                    {{ \"get_env(\" ~ persona.name | upper }}";
        assert_eq!(calls(text), vec![]);
    }

    #[test]
    fn a_sandboxed_tera_refuses_get_env_when_rendered() {
        let mut tera = sandboxed_tera();
        tera.add_raw_template("t", "{{ get_env(name=\"PATH\") }}")
            .unwrap();
        let err = tera.render("t", &tera::Context::new()).unwrap_err();
        let chain = crate::prompt::error::cause_chain(&err);
        assert!(chain.contains("not available to templates"), "{chain}");
        tera.add_raw_template("r", "{% for i in range(end=2) %}{{ i }}{% endfor %}")
            .unwrap();
        assert_eq!(tera.render("r", &tera::Context::new()).unwrap(), "01");
    }
}
