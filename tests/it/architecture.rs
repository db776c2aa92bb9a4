//! docs/ARCHITECTURE.md against the tree: the storage section names every
//! table the migrations create, the layer rule is stated once, the same in
//! the doc and in `lib.rs`, the count of circles of files holds, and the
//! Target layout's crates hold every module in an order the imports allow.

use std::collections::BTreeSet;
use std::path::Path;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The tables every migration of `backend` creates.
fn tables(backend: &str) -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(backend);
    let mut tables = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let sql = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let words: Vec<String> = sql
            .split(|c: char| c.is_whitespace() || c == '(')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        for at in 0..words.len() {
            if words[at] == "create" && words.get(at + 1).map(String::as_str) == Some("table") {
                let mut name = at + 2;
                if words.get(name).map(String::as_str) == Some("if") {
                    name += 3; // IF NOT EXISTS
                }
                tables.insert(words[name].trim_matches('"').to_string());
            }
        }
    }
    tables
}

/// The text of the `## name` section of `doc`.
fn section<'a>(doc: &'a str, name: &str) -> &'a str {
    let start = doc
        .find(&format!("\n## {name}\n"))
        .unwrap_or_else(|| panic!("docs/ARCHITECTURE.md has no '## {name}' section"));
    let rest = &doc[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |at| at + 3);
    &rest[..end]
}

#[test]
fn the_storage_section_names_every_table_the_migrations_create() {
    let sqlite = tables("sqlite");
    assert_eq!(
        sqlite,
        tables("postgres"),
        "both backends have the same tables"
    );
    assert!(sqlite.len() >= 13, "the migrations were read: {sqlite:?}");
    let doc = read("docs/ARCHITECTURE.md");
    let storage = section(&doc, "Storage");
    let missing: Vec<&String> = sqlite
        .iter()
        .filter(|t| !storage.contains(&format!("`{t}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md's Storage section does not name these tables: {missing:?}"
    );
}

#[test]
fn the_layer_rule_is_the_same_in_the_doc_and_in_lib_rs() {
    let doc = read("docs/ARCHITECTURE.md");
    let rule = section(&doc, "Modules")
        .lines()
        .find(|l| l.starts_with("`cli, server` →"))
        .expect("the Modules section states the layer rule");
    let lib = read("src/lib.rs");
    let stated: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//! "))
        .filter(|l| l.starts_with("`cli, server` →"))
        .collect();
    assert_eq!(
        stated,
        [rule],
        "lib.rs states the doc's layer rule word for word"
    );
}

/// Every source file of `src/` (test files left out) by its module path:
/// `src/config/policy/mod.rs` is `config::policy`, `src/lib.rs` is ``.
fn modules() -> Vec<(Vec<String>, String)> {
    fn walk(dir: &Path, path: &[String], out: &mut Vec<(Vec<String>, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for entry in entries {
            let name = entry.file_name().unwrap().to_string_lossy().to_string();
            if entry.is_dir() {
                let mut inner = path.to_vec();
                inner.push(name);
                walk(&entry, &inner, out);
                continue;
            }
            let Some(stem) = name.strip_suffix(".rs") else {
                continue;
            };
            if stem == "tests" || stem.ends_with("_tests") || stem == "main" {
                continue;
            }
            let mut module = path.to_vec();
            if stem != "mod" && stem != "lib" {
                module.push(stem.to_string());
            }
            out.push((module, std::fs::read_to_string(&entry).unwrap()));
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut out,
    );
    out
}

/// The code of `text` before its `#[cfg(test)]` module, comments dropped.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    text.lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with("//") {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each path `text` names from `crate::`, `super::` or `self::`, made
/// absolute from `module` (the file's module path; `is_mod` when the file
/// is a folder's `mod.rs` or `lib.rs`), braces of `use` expanded.
fn paths_named(module: &[String], is_mod: bool, text: &str) -> Vec<Vec<String>> {
    let here: Vec<String> = if is_mod {
        module.to_vec()
    } else {
        module[..module.len().saturating_sub(1)].to_vec()
    };
    let mut found = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    while at < chars.len() {
        let boundary = at == 0 || !(chars[at - 1].is_alphanumeric() || chars[at - 1] == '_');
        let rest: String = chars[at..chars.len().min(at + 7)].iter().collect();
        if boundary
            && (rest.starts_with("crate::")
                || rest.starts_with("super::")
                || rest.starts_with("self::"))
        {
            let end = expand_end(&chars, at);
            let written: String = chars[at..end].iter().collect();
            for path in expand(&written) {
                let mut segments: Vec<&str> = path.split("::").map(str::trim).collect();
                let mut base: Vec<String> = match segments.first() {
                    Some(&"crate") => Vec::new(),
                    Some(&"self") => module.to_vec(),
                    _ => here.clone(),
                };
                if segments.first() != Some(&"super") {
                    segments.remove(0);
                } else {
                    while segments.first() == Some(&"super") {
                        segments.remove(0);
                        if !base.is_empty() && segments.first() == Some(&"super") {
                            base.pop();
                        }
                    }
                    // `super` of a file is its folder's module; of a mod.rs,
                    // the folder above.
                    if is_mod {
                        base.pop();
                    }
                }
                base.extend(
                    segments
                        .iter()
                        .filter(|s| !s.is_empty() && **s != "*" && **s != "self")
                        .map(|s| s.split(' ').next().unwrap_or(s).to_string()),
                );
                found.push(base);
            }
            at = end;
        } else {
            at += 1;
        }
    }
    found
}

/// Where a path written at `start` ends: identifiers, `::`, and a `use`
/// group's balanced braces.
fn expand_end(chars: &[char], start: usize) -> usize {
    let mut depth = 0;
    let mut at = start;
    while at < chars.len() {
        let c = chars[at];
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            c if c.is_alphanumeric() || c == '_' || c == ':' || c == '*' => {}
            ',' | ' ' | '\n' if depth > 0 => {}
            _ => break,
        }
        at += 1;
        if depth == 0 && at < chars.len() && chars[at] == ' ' {
            break;
        }
    }
    at
}

/// `a::{b, c::{d}}` as `a::b`, `a::c::d`.
fn expand(written: &str) -> Vec<String> {
    let Some(open) = written.find('{') else {
        return vec![written.trim_end_matches("::").to_string()];
    };
    let prefix = &written[..open];
    let inner = &written[open + 1..written.rfind('}').unwrap_or(written.len())];
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut from = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[from..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(&format!("{prefix}{p}")))
        .collect()
}

/// The circles of files that import each other inside one folder: groups
/// of two or more files of one folder, each reachable from each other by
/// imports between files of that folder.
fn circles() -> Vec<Vec<String>> {
    let modules = modules();
    let known: BTreeSet<Vec<String>> = modules.iter().map(|(m, _)| m.clone()).collect();
    let files = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let is_mod = |m: &Vec<String>| m.is_empty() || files.join(m.join("/")).join("mod.rs").is_file();
    // The file a path lands in: its longest prefix that is a module.
    let landing = |path: &[String]| -> Option<Vec<String>> {
        (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| known.contains(p))
    };
    let mut edges: std::collections::BTreeMap<Vec<String>, BTreeSet<Vec<String>>> =
        Default::default();
    for (module, text) in &modules {
        let folder = if is_mod(module) {
            module.clone()
        } else {
            module[..module.len() - 1].to_vec()
        };
        for path in paths_named(module, is_mod(module), &code(text)) {
            let Some(target) = landing(&path) else {
                continue;
            };
            // The folder a file lies in: a mod.rs's is its module's own.
            let target_folder = if is_mod(&target) {
                target.clone()
            } else {
                target[..target.len() - 1].to_vec()
            };
            if &target != module && target_folder == folder {
                edges.entry(module.clone()).or_default().insert(target);
            }
        }
    }
    strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.into_iter().map(|m| m.join("::")).collect())
        .collect()
}

/// Tarjan's strongly connected components.
fn strongly_connected(
    edges: &std::collections::BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
) -> Vec<Vec<Vec<String>>> {
    struct State<'a> {
        edges: &'a std::collections::BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: std::collections::HashMap<Vec<String>, usize>,
        low: std::collections::HashMap<Vec<String>, usize>,
        stack: Vec<Vec<String>>,
        on_stack: BTreeSet<Vec<String>>,
        out: Vec<Vec<Vec<String>>>,
    }
    fn visit(s: &mut State, v: &Vec<String>) {
        let n = s.index.len();
        s.index.insert(v.clone(), n);
        s.low.insert(v.clone(), n);
        s.stack.push(v.clone());
        s.on_stack.insert(v.clone());
        let next: Vec<Vec<String>> = s.edges.get(v).into_iter().flatten().cloned().collect();
        for w in next {
            if !s.index.contains_key(&w) {
                visit(s, &w);
                let low = s.low[v].min(s.low[&w]);
                s.low.insert(v.clone(), low);
            } else if s.on_stack.contains(&w) {
                let low = s.low[v].min(s.index[&w]);
                s.low.insert(v.clone(), low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(&w);
                let done = &w == v;
                component.push(w);
                if done {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut state = State {
        edges,
        index: Default::default(),
        low: Default::default(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.out
}

#[test]
fn the_import_reader_finds_a_circle_it_is_shown_and_none_where_there_is_none() {
    let module = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    let named = paths_named(
        &module("config::load"),
        false,
        "use super::{file::PolicyFile, problem::Problem};\nlet x = crate::store::open(u);",
    );
    assert_eq!(
        named,
        [
            module("config::file::PolicyFile"),
            module("config::problem::Problem"),
            module("store::open"),
        ]
    );
    let from_mod = paths_named(&module("config"), true, "use super::jobs::Job;");
    assert_eq!(from_mod, [module("jobs::Job")]);
    let mut edges = std::collections::BTreeMap::new();
    edges.insert(module("a::x"), BTreeSet::from([module("a::y")]));
    edges.insert(module("a::y"), BTreeSet::from([module("a::x")]));
    edges.insert(module("a::z"), BTreeSet::from([module("a::x")]));
    let components: Vec<_> = strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .collect();
    assert_eq!(components.len(), 1);
    assert_eq!(components[0].len(), 2);
}

/// The ceiling ARCHITECTURE.md's "Imports" section states.
fn stated_ceiling() -> usize {
    let doc = read("docs/ARCHITECTURE.md");
    let imports = section(&doc, "Imports");
    let line = imports
        .lines()
        .find_map(|l| l.strip_prefix("Circles of files today: "))
        .expect("the Imports section has a line 'Circles of files today: N.'");
    line.trim_end_matches('.')
        .parse()
        .expect("the count is a number")
}

#[test]
fn no_new_circle_of_files_importing_each_other_and_the_doc_says_how_many() {
    let circles = circles();
    let ceiling = stated_ceiling();
    let listed: Vec<String> = circles
        .iter()
        .map(|c| format!("{} files: {}", c.len(), c.join(", ")))
        .collect();
    assert!(
        circles.len() <= ceiling,
        "{} circles, more than the {ceiling} docs/ARCHITECTURE.md allows; break the new one \
         (types in a file that imports none of its folder's logic):\n{}",
        circles.len(),
        listed.join("\n")
    );
    assert_eq!(
        circles.len(),
        ceiling,
        "fewer circles than docs/ARCHITECTURE.md counts: lower its count to {}\n{}",
        circles.len(),
        listed.join("\n")
    );
}

/// The crates of ARCHITECTURE.md's "Target layout", in its order, each with
/// the top-level modules it would hold.
fn planned_crates() -> Vec<(String, Vec<String>)> {
    let doc = read("docs/ARCHITECTURE.md");
    section(&doc, "Target layout")
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix("`sparring")?;
            let modules = cells
                .get(2)?
                .split(',')
                .map(|m| m.trim().trim_matches('`').to_string())
                .filter(|m| m != "main.rs")
                .collect();
            Some((format!("sparring{}", name.trim_end_matches('`')), modules))
        })
        .collect()
}

#[test]
fn the_planned_crates_hold_every_module_and_no_module_imports_from_a_crate_below_its_own() {
    let crates = planned_crates();
    assert!(
        crates.len() >= 2,
        "no crates read from Target layout: {crates:?}"
    );
    let crate_of = |module: &str| {
        crates
            .iter()
            .position(|(_, ms)| ms.iter().any(|m| m == module))
    };
    let top: BTreeSet<String> = modules()
        .into_iter()
        .filter_map(|(m, _)| m.first().cloned())
        .collect();
    let unplaced: Vec<&String> = top.iter().filter(|m| crate_of(m).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "modules in no crate of docs/ARCHITECTURE.md's Target layout: {unplaced:?}"
    );
    let files = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut upward = BTreeSet::new();
    for (module, text) in modules() {
        let Some(from) = module.first() else { continue };
        let is_mod = files.join(module.join("/")).join("mod.rs").is_file();
        for path in paths_named(&module, is_mod, &code(&text)) {
            let Some(to) = path.first().filter(|to| top.contains(*to)) else {
                continue;
            };
            let (a, b) = (crate_of(from).unwrap(), crate_of(to).unwrap());
            if b > a {
                upward.insert(format!(
                    "{} ({}) imports {} ({})",
                    module.join("::"),
                    crates[a].0,
                    path.join("::"),
                    crates[b].0
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports from a crate below the importer's in the Target layout; move the item up, \
         or change the plan:\n{}",
        upward.into_iter().collect::<Vec<_>>().join("\n")
    );
}
