//! Templates that render inside one another: a macro call, an `{% include %}`
//! and an `{% extends %}` each render another body inside the current one,
//! on the same stack. A macro that calls itself (directly, or through other
//! macros or includes) never stops and aborts the process when the stack
//! runs out; a long chain of them does the same with each link within
//! [`super::nesting`]'s limits. So the templates loaded together are a graph
//! whose edges are those calls: a cycle is refused, and so is a chain of more
//! than [`MAX_CALL_DEPTH`] calls. The walk over the graph is iterative.

use std::collections::HashMap;

use tera::Template;

use super::ast_walk::{walk_expr, walk_nodes, Found};

/// Macro calls, includes and `extends` inside one another at most.
pub const MAX_CALL_DEPTH: usize = 4;

/// A template whose calls recurse, or go deeper than the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallProblem {
    pub template: String,
    pub message: String,
}

/// A body that renders: a template's own, or one of its macros'.
type Body = (usize, Option<String>);

/// Every template of `templates` (loaded together, by name) whose macro
/// calls, includes or `extends` recurse or chain deeper than the limit.
pub fn check_calls(templates: &[(&str, &Template)]) -> Vec<CallProblem> {
    let graph = Graph::of(templates);
    let mut problems: Vec<CallProblem> = Vec::new();
    let mut depth: HashMap<Body, usize> = HashMap::new();
    let mut on_path: HashMap<Body, bool> = HashMap::new();
    for start in graph.bodies() {
        if depth.contains_key(&start) {
            continue;
        }
        // (body, index of its next edge to follow)
        let mut stack: Vec<(Body, usize)> = vec![(start.clone(), 0)];
        on_path.insert(start, true);
        while let Some((body, next)) = stack.last().cloned() {
            let edges = graph.edges(&body);
            if let Some(target) = edges.get(next) {
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
                if on_path.get(target).copied().unwrap_or(false) {
                    let name = templates[target.0].0;
                    let what = match &target.1 {
                        Some(m) => format!("macro `{m}`"),
                        None => "it".to_string(),
                    };
                    problems.push(CallProblem {
                        template: name.to_string(),
                        message: format!(
                            "template `{name}`: {what} renders itself again (a macro that calls \
                             itself, or an include or extends that comes back), which never \
                             ends: the renderer would run out of stack; macros, includes and \
                             extends may not recurse"
                        ),
                    });
                    // Counted as a leaf, so the walk goes on and ends.
                    depth.insert(target.clone(), 0);
                } else if !depth.contains_key(target) {
                    on_path.insert(target.clone(), true);
                    stack.push((target.clone(), 0));
                }
                continue;
            }
            stack.pop();
            on_path.insert(body.clone(), false);
            let deepest = edges
                .iter()
                .map(|t| depth.get(t).map_or(0, |d| d + 1))
                .max()
                .unwrap_or(0);
            depth.insert(body.clone(), deepest);
            if deepest > MAX_CALL_DEPTH && body.1.is_none() {
                let name = templates[body.0].0;
                problems.push(CallProblem {
                    template: name.to_string(),
                    message: format!(
                        "template `{name}` renders macros, includes and extends {deepest} \
                         deep, past the limit of {MAX_CALL_DEPTH}: each renders inside the \
                         last, on one stack; call fewer macros from macros"
                    ),
                });
            }
        }
    }
    problems.sort_by(|a, b| a.template.cmp(&b.template));
    problems.dedup_by(|a, b| a.template == b.template);
    problems
}

struct Graph {
    edges: HashMap<Body, Vec<Body>>,
}

impl Graph {
    fn of(templates: &[(&str, &Template)]) -> Graph {
        let index: HashMap<&str, usize> = templates
            .iter()
            .enumerate()
            .map(|(i, (name, _))| (*name, i))
            .collect();
        let mut edges: HashMap<Body, Vec<Body>> = HashMap::new();
        for (i, (_, template)) in templates.iter().enumerate() {
            let mut found = Vec::new();
            walk_nodes(&template.ast, false, &mut |f| found.push(f));
            edges.insert((i, None), targets(templates, &index, i, &found));
            for (name, definition) in &template.macros {
                let mut found = Vec::new();
                for default in definition.args.values().flatten() {
                    walk_expr(default, &mut |f| found.push(f));
                }
                walk_nodes(&definition.body, false, &mut |f| found.push(f));
                edges.insert(
                    (i, Some(name.clone())),
                    targets(templates, &index, i, &found),
                );
            }
        }
        Graph { edges }
    }

    fn bodies(&self) -> Vec<Body> {
        let mut bodies: Vec<Body> = self.edges.keys().cloned().collect();
        bodies.sort();
        bodies
    }

    fn edges(&self, body: &Body) -> &[Body] {
        self.edges.get(body).map_or(&[], Vec::as_slice)
    }
}

/// The bodies what was `found` in template `at` renders. A macro of a
/// namespace that cannot be told is taken to be every macro of its name.
fn targets(
    templates: &[(&str, &Template)],
    index: &HashMap<&str, usize>,
    at: usize,
    found: &[Found<'_>],
) -> Vec<Body> {
    let mut out = Vec::new();
    for f in found {
        match f {
            Found::Macro(call) => {
                let file = if call.namespace == "self" {
                    Some(at)
                } else {
                    templates[at]
                        .1
                        .imported_macro_files
                        .iter()
                        .find(|(_, namespace)| *namespace == call.namespace)
                        .and_then(|(file, _)| index.get(file.as_str()).copied())
                };
                match file {
                    Some(file) => out.push((file, Some(call.name.clone()))),
                    None => out.extend(
                        templates
                            .iter()
                            .enumerate()
                            .filter(|(_, (_, t))| t.macros.contains_key(&call.name))
                            .map(|(i, _)| (i, Some(call.name.clone()))),
                    ),
                }
            }
            Found::Include(names) => out.extend(
                names
                    .iter()
                    .filter_map(|n| index.get(n.as_str()))
                    .map(|&i| (i, None)),
            ),
            Found::Extends(name) => out.extend(index.get(name).map(|&i| (i, None))),
            Found::Function(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(sources: &[(&'static str, &str)]) -> Vec<CallProblem> {
        let parsed: Vec<(&str, Template)> = sources
            .iter()
            .map(|(name, text)| (*name, Template::new(name, None, text).unwrap()))
            .collect();
        let refs: Vec<(&str, &Template)> = parsed.iter().map(|(n, t)| (*n, t)).collect();
        check_calls(&refs)
    }

    #[test]
    fn macros_includes_and_extends_that_do_not_recurse_pass() {
        let sources = [
            (
                "m",
                "{% macro a() %}{{ self::b() }}{% endmacro a %}{% macro b() %}b{% endmacro b %}",
            ),
            (
                "t",
                "{% import \"m\" as m %}{{ m::a() }}{% include \"u\" %}{{ m::b() }}",
            ),
            ("u", "{% include \"v\" %}"),
            ("v", "plain"),
        ];
        assert_eq!(problems(&sources), vec![]);
    }

    #[test]
    fn a_macro_calling_itself_or_templates_including_each_other_are_refused() {
        let own = problems(&[(
            "t",
            "{% macro f(n) %}{{ self::f(n=n) }}{% endmacro f %}{{ self::f(n=1) }}",
        )]);
        assert_eq!(own.len(), 1, "{own:?}");
        assert!(own[0].message.contains("macro `f` renders itself again"));
        let each_other = problems(&[("t", "x{% include \"u\" %}"), ("u", "y{% include \"t\" %}")]);
        assert!(!each_other.is_empty(), "{each_other:?}");
        assert!(each_other[0].message.contains("never ends"));
        let through = problems(&[
            ("m", "{% macro a() %}{% include \"t\" %}{% endmacro a %}"),
            ("t", "{% import \"m\" as m %}{{ m::a() }}"),
        ]);
        assert!(!through.is_empty(), "{through:?}");
    }

    #[test]
    fn a_chain_past_the_limit_is_refused_at_the_template_that_starts_it() {
        let chain: Vec<(&'static str, String)> = ["t0", "t1", "t2", "t3", "t4", "t5"]
            .iter()
            .enumerate()
            .map(|(i, name)| (*name, format!("{{% include \"t{}\" %}}", i + 1)))
            .collect();
        let sources: Vec<(&'static str, &str)> =
            chain.iter().map(|(n, t)| (*n, t.as_str())).collect();
        let found = problems(&sources);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].template, "t0");
        assert!(found[0].message.contains("5 deep, past the limit of 4"));
    }
}
