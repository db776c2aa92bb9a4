//! The template registry: names → files, loaded into one `tera::Tera`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tera::{Context, Template, Tera};

use crate::diagnostics::problem::Problem;
use crate::error_chain::error_chain_lines;

use super::call_depth::check_calls;
use super::context::{sample_persona, sample_policy_context, sample_scenario};
use super::error::{cause_chain, PromptError};
use super::nesting::check_nesting;
use super::sandbox::{outside_calls, sandboxed_tera};
use super::shipped::{POLICY_TEMPLATE, USER_SIMULATOR_TEMPLATE};
use super::{user_simulator_context, POLICY, STOP_TOKEN, USER_SIMULATOR};

/// Named prompt templates and the files they came from.
#[derive(Debug)]
pub struct PromptRegistry {
    tera: Tera,
    files: BTreeMap<String, PathBuf>,
}

impl PromptRegistry {
    /// Read and parse every template; report every unreadable file and every syntax
    /// error (with its line and column) before giving up.
    pub fn load(templates: &[(String, PathBuf)]) -> Result<Self, Vec<Problem>> {
        Self::build(
            templates
                .iter()
                .map(|(name, path)| (name.clone(), path.clone(), None))
                .collect(),
        )
    }

    /// Parse templates already in memory: `(name, file it came from, text)`. The
    /// file names the template in problems and render errors; for a template built
    /// into the binary it is its path in the repository.
    pub fn from_texts(templates: Vec<(String, PathBuf, String)>) -> Result<Self, Vec<Problem>> {
        Self::build(
            templates
                .into_iter()
                .map(|(name, path, text)| (name, path, Some(text)))
                .collect(),
        )
    }

    /// Templates of either kind: `(name, file, text)`, where a `None` text is
    /// read from the file and a given one (a built-in template) is named by
    /// `file` in problems and render errors.
    pub fn load_sources(
        templates: Vec<(String, PathBuf, Option<String>)>,
    ) -> Result<Self, Vec<Problem>> {
        Self::build(templates)
    }

    /// `(name, file, text)`; a `None` text is read from the file.
    fn build(templates: Vec<(String, PathBuf, Option<String>)>) -> Result<Self, Vec<Problem>> {
        let mut problems = Vec::new();
        let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
        let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
        let mut sources = Vec::new();
        let mut parsed: Vec<(String, Template)> = Vec::new();
        for (name, path, text) in templates {
            if name.trim().is_empty() {
                problems.push(Problem::in_file(
                    &path,
                    "the template has an empty name; give it the name it is rendered by, \
                     e.g. `user_simulator` or `policy`",
                ));
                continue;
            }
            if let Some(earlier) = seen.get(&name) {
                problems.push(Problem::in_file(
                    &path,
                    format!(
                        "template name `{name}` is already used by {}; each name must be \
                         given once",
                        earlier.display()
                    ),
                ));
                continue;
            }
            seen.insert(name.clone(), path.clone());
            let text = match text.map_or_else(|| crate::regular_file::read_to_string(&path), Ok) {
                Ok(text) => text,
                Err(err) => {
                    problems.push(Problem::in_file(
                        &path,
                        format!("cannot read template `{name}`: {err}"),
                    ));
                    continue;
                }
            };
            if let Err(too_deep) = check_nesting(&text) {
                let (line, column) = too_deep.position(&text);
                problems.push(Problem::new(
                    &path,
                    Some(format!("line {line}, column {column}")),
                    too_deep.message(&name),
                ));
                continue;
            }
            let template = match Template::new(&name, Some(path.display().to_string()), &text) {
                Ok(template) => template,
                Err(err) => {
                    problems.push(syntax_problem(&path, &name, &err));
                    continue;
                }
            };
            let outside = outside_calls(&template, &text);
            if !outside.is_empty() {
                problems.extend(outside.iter().map(|call| {
                    let location = call
                        .position
                        .map(|(line, column)| format!("line {line}, column {column}"));
                    Problem::new(&path, location, call.message(&name))
                }));
                continue;
            }
            files.insert(name.clone(), path);
            parsed.push((name.clone(), template));
            sources.push((name, text));
        }
        let graph: Vec<(&str, &Template)> = parsed.iter().map(|(n, t)| (n.as_str(), t)).collect();
        for call in check_calls(&graph) {
            let file = files.get(&call.template).cloned().unwrap_or_default();
            problems.push(Problem::in_file(file, call.message));
        }
        if !problems.is_empty() {
            return Err(problems);
        }

        let mut tera = sandboxed_tera();
        // Prompts are plain text: never HTML-escape `<`, `&` or quotes in them.
        tera.autoescape_on(vec![]);
        if let Err(err) = tera.add_raw_templates(sources) {
            // Only cross-template problems are left here (a missing parent of
            // `extends`, a macro file): name the template the error mentions.
            let cause = cause_chain(&err);
            let file = files
                .iter()
                .find(|(name, _)| cause.contains(&format!("'{name}'")))
                .or_else(|| files.iter().next())
                .map(|(_, path)| path.clone())
                .unwrap_or_default();
            return Err(vec![Problem::in_file(file, cause)]);
        }
        Ok(PromptRegistry { tera, files })
    }

    /// Render a template; a failure names the template, its file and tera's whole
    /// cause chain (e.g. the variable that is not defined).
    pub fn render(&self, name: &str, ctx: &Context) -> Result<String, PromptError> {
        let Some(file) = self.files.get(name) else {
            return Err(PromptError::NotLoaded {
                name: name.to_string(),
                loaded: self.loaded_names(),
            });
        };
        self.tera
            .render(name, ctx)
            .map(|mut text| {
                // Rendered prompts live as long as their conversation; tera's
                // buffer grows by doubling, so keep only what was written.
                text.shrink_to_fit();
                text
            })
            .map_err(|err| PromptError::Render {
                name: name.to_string(),
                file: file.clone(),
                cause: cause_chain(&err),
            })
    }

    /// The file a template was loaded from.
    pub fn file_of(&self, name: &str) -> Option<&Path> {
        self.files.get(name).map(PathBuf::as_path)
    }

    /// Render the user-simulator and policy templates against sample contexts that
    /// hold exactly the documented variables, so a misspelt or undocumented
    /// variable, or an unknown filter, is reported with the template's file.
    pub fn check_templates(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        let user_ctx = user_simulator_context(&sample_persona(), &sample_scenario());
        let checks = [
            (
                USER_SIMULATOR,
                user_ctx,
                "persona.{id, name, background, traits, speaking_style, language, \
                 resolved_knobs}, scenario.{reason_for_contact, known_info, unknown_info, \
                 task_instructions}, stop_token, transfer_token, out_of_scope_token, user_tools",
            ),
            (
                POLICY,
                sample_policy_context(),
                "domain_policy, environment, parallel_tool_calls",
            ),
        ];
        for (name, ctx, variables) in checks {
            let Some(file) = self.files.get(name) else {
                problems.push(Problem::in_file(
                    Path::new("prompts"),
                    format!(
                        "template `{name}` is not loaded (loaded: {}); every job needs it \
                         (shipped: {})",
                        self.loaded_names(),
                        shipped_path(name)
                    ),
                ));
                continue;
            };
            match self.render(name, &ctx) {
                Ok(text) => {
                    if name == USER_SIMULATOR && !text.contains(STOP_TOKEN) {
                        problems.push(Problem::in_file(
                            file,
                            format!(
                                "template `{name}` never tells the simulated user the stop \
                                 token, so no conversation can end with `user_stop`; \
                                 mention `{{{{ stop_token }}}}` in the rules for ending"
                            ),
                        ));
                    }
                }
                Err(err) => problems.push(Problem::in_file(
                    file,
                    format!("{err}; the variables available are: {variables}"),
                )),
            }
        }
        problems
    }

    fn loaded_names(&self) -> String {
        if self.files.is_empty() {
            "none".to_string()
        } else {
            self.files
                .keys()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

fn shipped_path(name: &str) -> &'static str {
    match name {
        USER_SIMULATOR => USER_SIMULATOR_TEMPLATE.path,
        _ => POLICY_TEMPLATE.path,
    }
}

/// A parse error as a problem at its line and column. tera's parser reports the
/// position as ` --> line:column` followed by a drawing of the line and an
/// `= expected ...` note; the note becomes the message.
fn syntax_problem(path: &Path, name: &str, err: &tera::Error) -> Problem {
    let chain = cause_chain(err);
    let full = error_chain_lines(err);
    let position = full.split("--> ").nth(1).and_then(|rest| {
        let spot = rest.split_whitespace().next()?;
        let (line, col) = spot.split_once(':')?;
        Some((line.parse::<usize>().ok()?, col.parse::<usize>().ok()?))
    });
    let notes: Vec<&str> = full
        .lines()
        .filter_map(|l| l.trim().strip_prefix("= "))
        .collect();
    let detail = if notes.is_empty() {
        chain
    } else {
        notes.join("; ")
    };
    let message = format!("template `{name}` has a syntax error: {detail}");
    match position {
        Some((line, col)) => {
            Problem::new(path, Some(format!("line {line}, column {col}")), message)
        }
        None => Problem::in_file(path, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persona::knobs::resolve;
    use crate::persona::load::load_personas;
    use crate::prompt::shipped_templates;

    fn repo(path: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn shipped() -> PromptRegistry {
        let built_in = shipped_templates()
            .into_iter()
            .map(|(name, t)| (name.to_string(), t.label(), t.text.to_string()))
            .collect();
        PromptRegistry::from_texts(built_in).unwrap_or_else(|problems| {
            panic!(
                "{}",
                problems
                    .iter()
                    .map(|p| format!("{p}\n"))
                    .collect::<String>()
            )
        })
    }

    #[test]
    fn a_template_with_a_syntax_error_reports_its_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let good = write(dir.path(), "good.tera", "Hello {{ name }}");
        let bad = write(
            dir.path(),
            "bad.tera",
            "line one\nline two\nHi {{ persona.name | }}\nline four\n",
        );
        let problems = PromptRegistry::load(&[
            ("policy".into(), good),
            ("user_simulator".into(), bad.clone()),
        ])
        .unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].file, bad);
        let location = problems[0].location.as_deref().unwrap();
        assert!(location.starts_with("line 3, column "), "{problems:?}");
        assert!(problems[0].message.contains("`user_simulator`"));
        assert!(problems[0].message.contains("expected"), "{problems:?}");
        assert!(!problems[0].message.contains('\n'));
    }

    #[test]
    fn a_template_that_reads_the_environment_is_a_problem_at_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let user = write(
            dir.path(),
            "user.tera",
            "End with {{ stop_token }}.\n{% if false %}{{ get_env(name=\"SPARRING_API_TOKEN\") }}{% endif %}\n",
        );
        let policy = write(dir.path(), "policy.tera", "{{ domain_policy }}");
        let problems = PromptRegistry::load(&[
            ("user_simulator".into(), user.clone()),
            ("policy".into(), policy),
        ])
        .unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].file, user);
        assert_eq!(problems[0].location.as_deref(), Some("line 2, column 18"));
        assert!(
            problems[0].message.contains("calls `get_env`"),
            "{problems:?}"
        );
        // Judges, the tool simulator and synthesis parse their templates here too.
        let judge = PromptRegistry::from_texts(vec![(
            "judge".into(),
            "judges/leaky.tera".into(),
            "{{ now() }}".into(),
        )])
        .unwrap_err();
        assert_eq!(judge[0].to_string(), "judges/leaky.tera: line 1, column 4: template `judge` calls `now`, which templates may not call: a template sees only the variables sparring passes it (no environment, files, clock or randomness); the functions it may call are range and throw");
    }

    /// On a thread with the stack of a tokio worker (2 MiB), in a debug build.
    fn on_a_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn a_template_at_every_nesting_limit_at_once_parses_and_renders_on_a_small_stack() {
        use super::super::nesting::{MAX_BLOCK_DEPTH, MAX_BRACKET_DEPTH, MAX_OPERATORS};
        let expression = format!(
            "{}1{}{}",
            "(".repeat(MAX_BRACKET_DEPTH),
            ")".repeat(MAX_BRACKET_DEPTH),
            " + 1".repeat(MAX_OPERATORS)
        );
        let text = format!(
            "{}{{{{ {expression} }}}}{}",
            "{% if true %}".repeat(MAX_BLOCK_DEPTH),
            "{% endif %}".repeat(MAX_BLOCK_DEPTH)
        );
        let rendered = on_a_small_stack(move || {
            let registry =
                PromptRegistry::from_texts(vec![("t".into(), "t.tera".into(), text)]).unwrap();
            registry.render("t", &Context::new()).unwrap()
        });
        assert_eq!(rendered, (MAX_OPERATORS + 1).to_string());
    }

    #[test]
    fn a_chain_of_includes_each_at_every_limit_renders_on_a_small_stack() {
        use super::super::call_depth::MAX_CALL_DEPTH;
        use super::super::nesting::{MAX_BLOCK_DEPTH, MAX_BRACKET_DEPTH, MAX_OPERATORS};
        let expression = format!(
            "{}1{}{}",
            "(".repeat(MAX_BRACKET_DEPTH),
            ")".repeat(MAX_BRACKET_DEPTH),
            " + 1".repeat(MAX_OPERATORS)
        );
        let templates: Vec<(String, PathBuf, String)> = (0..=MAX_CALL_DEPTH)
            .map(|i| {
                let include = if i < MAX_CALL_DEPTH {
                    format!("{{% include \"t{}\" %}}", i + 1)
                } else {
                    String::new()
                };
                let text = format!(
                    "{}{{{{ {expression} }}}}{include}{}",
                    "{% if true %}".repeat(MAX_BLOCK_DEPTH),
                    "{% endif %}".repeat(MAX_BLOCK_DEPTH)
                );
                (format!("t{i}"), PathBuf::from(format!("t{i}.tera")), text)
            })
            .collect();
        let rendered = on_a_small_stack(move || {
            let registry = PromptRegistry::from_texts(templates).unwrap();
            registry.render("t0", &Context::new()).unwrap()
        });
        assert_eq!(
            rendered,
            (MAX_OPERATORS + 1).to_string().repeat(MAX_CALL_DEPTH + 1)
        );
    }

    #[test]
    fn a_template_nested_100_000_deep_is_a_problem_at_its_line_not_a_crash() {
        let cases = [
            format!("{{{{ {}1{} }}}}", "(".repeat(100_000), ")".repeat(100_000)),
            format!(
                "{}x{}",
                "{% if a %}".repeat(100_000),
                "{% endif %}".repeat(100_000)
            ),
            format!("{{% if {}a %}}{{% endif %}}", "not ".repeat(100_000)),
            format!("{{{{ 1{} }}}}", " + 1".repeat(100_000)),
        ];
        for text in cases {
            let problems = on_a_small_stack(move || {
                PromptRegistry::from_texts(vec![("judge".into(), "j.tera".into(), text)])
                    .unwrap_err()
            });
            assert_eq!(problems.len(), 1, "{problems:?}");
            let problem = problems[0].to_string();
            assert!(problem.starts_with("j.tera: line 1, column "), "{problem}");
            assert!(problem.contains("the limit"), "{problem}");
        }
    }

    #[test]
    fn a_macro_that_calls_itself_is_refused_before_it_is_rendered() {
        let text = "{% macro f(n) %}{{ self::f(n=n) }}{% endmacro f %}{{ self::f(n=1) }}";
        let problems = PromptRegistry::from_texts(vec![("t".into(), "t.tera".into(), text.into())])
            .unwrap_err();
        assert!(
            problems[0]
                .to_string()
                .starts_with("t.tera: template `t`: macro `f` renders itself"),
            "{problems:?}"
        );
    }

    #[test]
    fn every_unreadable_or_broken_template_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let bad = write(dir.path(), "bad.tera", "{% if x %}never closed");
        let problems = PromptRegistry::load(&[
            ("policy".into(), dir.path().join("missing.tera")),
            ("user_simulator".into(), bad),
            ("user_simulator".into(), dir.path().join("again.tera")),
        ])
        .unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0]
            .message
            .contains("cannot read template `policy`"));
        assert!(problems[1].message.contains("syntax error"));
        assert!(problems[2].message.contains("already used"));
    }

    #[test]
    fn an_undefined_variable_is_caught_by_check_templates_with_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let user = write(
            dir.path(),
            "user.tera",
            "You are {{ persona.nickname }}. End with {{ stop_token }}.",
        );
        let policy = write(dir.path(), "policy.tera", "{{ domain_policy | upper }}");
        let registry = PromptRegistry::load(&[
            ("user_simulator".into(), user.clone()),
            ("policy".into(), policy),
        ])
        .unwrap();
        let problems = registry.check_templates();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].file, user);
        assert!(
            problems[0].message.contains("persona.nickname"),
            "{problems:?}"
        );
        assert!(problems[0].message.contains("variables available"));
    }

    #[test]
    fn a_filter_that_is_not_built_in_is_caught_by_check_templates() {
        let dir = tempfile::tempdir().unwrap();
        let user = write(dir.path(), "user.tera", "{{ stop_token }}");
        let policy = write(dir.path(), "policy.tera", "{{ environment | slugify }}");
        let registry = PromptRegistry::load(&[
            ("user_simulator".into(), user),
            ("policy".into(), policy.clone()),
        ])
        .unwrap();
        let problems = registry.check_templates();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].file, policy);
        assert!(problems[0].message.contains("slugify"), "{problems:?}");
    }

    #[test]
    fn check_templates_reports_missing_templates_and_a_missing_stop_token() {
        let dir = tempfile::tempdir().unwrap();
        let user = write(dir.path(), "user.tera", "You are {{ persona.name }}.");
        let registry = PromptRegistry::load(&[("user_simulator".into(), user.clone())]).unwrap();
        let problems = registry.check_templates();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].file, user);
        assert!(problems[0].message.contains("stop token"));
        assert!(problems[1]
            .message
            .contains("template `policy` is not loaded"));
    }

    #[test]
    fn render_errors_name_the_template_and_the_cause() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "p.tera", "{{ domain_policy }} {{ tools }}");
        let registry = PromptRegistry::load(&[("policy".into(), file)]).unwrap();
        let err = registry
            .render("policy", &policy_context_for_test())
            .unwrap_err()
            .to_string();
        assert!(err.contains("template `policy`"), "{err}");
        assert!(err.contains("p.tera"), "{err}");
        assert!(err.contains("`tools` not found"), "{err}");
        let err = registry
            .render("judge", &Context::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains("`judge` is not loaded"), "{err}");
    }

    fn policy_context_for_test() -> Context {
        crate::prompt::policy_context("Be kind.", "builtin:retail", true)
    }

    #[test]
    fn prompts_are_not_html_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "policy.html", "{{ domain_policy }}");
        let registry = PromptRegistry::load(&[("policy.html".into(), file)]).unwrap();
        let text = registry
            .render(
                "policy.html",
                &crate::prompt::policy_context("a < b & \"c\"", "x", true),
            )
            .unwrap();
        assert_eq!(text, "a < b & \"c\"");
    }

    #[test]
    fn a_built_in_templates_render_error_names_it_as_built_in() {
        let err = shipped()
            .render(POLICY, &Context::new())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("(prompts/policies/default.tera (built in))"),
            "{err}"
        );
    }

    #[test]
    fn the_shipped_templates_pass_check_templates() {
        assert_eq!(shipped().check_templates(), vec![]);
    }

    #[test]
    fn the_shipped_user_simulator_renders_a_real_persona_and_scenario() {
        let personas = load_personas(&repo("personas")).unwrap();
        let persona = personas.iter().find(|p| p.id == "retired_teacher").unwrap();
        let resolved = resolve(persona, 11);
        let scenario = kettle_scenario();
        let text = shipped()
            .render(
                USER_SIMULATOR,
                &user_simulator_context(&resolved, &scenario),
            )
            .unwrap();
        assert!(text.contains(&persona.name));
        assert!(text.contains(&persona.background));
        assert!(text.contains(&scenario.reason_for_contact));
        assert!(text.contains(&scenario.known_info));
        assert!(text.contains(&scenario.unknown_info));
        assert!(text.contains(&scenario.task_instructions));
        assert!(
            text.starts_with("You are role-playing a customer"),
            "{text}"
        );
        assert!(text.contains("You are the customer"));
        assert!(text.contains("end with ###STOP###"), "{text}");
        assert!(text.contains("not merely that they will do it"));
        assert!(text.contains("###TRANSFER###"));
        assert!(text.contains("###OUT-OF-SCOPE###"));
        assert!(!text.contains("{{") && !text.contains("{%"), "{text}");
    }

    #[test]
    fn the_shipped_user_simulator_renders_every_shipped_persona() {
        let registry = shipped();
        let scenario = kettle_scenario();
        let mut personas = load_personas(&repo("personas")).unwrap();
        personas.extend(load_personas(&repo("personas/crowd.jsonl")).unwrap());
        for persona in personas {
            for seed in 0..4 {
                let ctx = user_simulator_context(&resolve(&persona, seed), &scenario);
                let text = registry.render(USER_SIMULATOR, &ctx).unwrap();
                assert!(text.contains(&persona.name), "{}", persona.id);
                if persona.language != "English" {
                    assert!(text.contains(&persona.language), "{}", persona.id);
                }
            }
        }
    }

    #[test]
    fn an_empty_unknown_info_leaves_out_its_section() {
        let mut scenario = kettle_scenario();
        scenario.unknown_info = String::new();
        let text = shipped()
            .render(
                USER_SIMULATOR,
                &user_simulator_context(&sample_persona(), &scenario),
            )
            .unwrap();
        assert!(!text.contains("What you do not know"));
    }

    #[test]
    fn the_shipped_policy_template_renders_the_domain_policy() {
        let policy = "# Retail policy\nOnly delivered orders can be returned.";
        let text = shipped()
            .render(
                POLICY,
                &crate::prompt::policy_context(policy, "builtin:retail", true),
            )
            .unwrap();
        assert!(
            text.starts_with("You are a customer service agent"),
            "{text}"
        );
        assert!(text.contains(policy));
        assert!(text.contains("builtin:retail"));
        assert!(text.contains("customer service agent"));
        assert!(text.contains("confirmation"));
    }

    fn kettle_scenario() -> crate::persona::UserScenario {
        crate::persona::UserScenario {
            reason_for_contact: "Your new kettle leaks from the bottom.".into(),
            known_info: "Your name is Margaret Olsen, zip code 55401, order #W2417790.".into(),
            unknown_info: "You do not know the kettle's item id.".into(),
            task_instructions: "Ask to exchange it for the same kettle. If that is \
                                impossible, accept a refund to the original card."
                .into(),
            turns: Vec::new(),
            opening: None,
        }
    }
}
