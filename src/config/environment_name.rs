//! What an environment is called where the policy and the exports can see it
//! (`(environment: simulated:orders)` in the policy's prompt, `environment` in
//! a conversation's metadata): a name, never a path of the machine that ran
//! it. `[environment] name = "…"` gives one to a `simulated` or `mcp`
//! environment; without it the tools file's stem or the MCP server's own name
//! is used, cut to the characters a name may have.

use std::path::Path;

use crate::diagnostics::problem::Problem;

/// Longest name, in characters.
const MOST_CHARS: usize = 64;

/// Whether `c` may appear in an environment's name.
fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// `text` made a name: runs of other characters become one `-`, at most 64
/// characters, `fallback` when nothing is left.
pub fn name_from(text: &str, fallback: &str) -> String {
    let mut name = String::new();
    for c in text.chars() {
        if allowed(c) {
            name.push(c);
        } else if !name.ends_with('-') && !name.is_empty() {
            name.push('-');
        }
    }
    let name: String = name
        .trim_matches(['-', '.'])
        .chars()
        .take(MOST_CHARS)
        .collect();
    if name.is_empty() {
        fallback.to_string()
    } else {
        name
    }
}

/// A `simulated` environment's default name: its tools file's stem.
pub fn name_of_file(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    name_from(&stem, "tools")
}

/// A NeMo Gym environment's default name: the folder under
/// `resources_servers/` its rows come from, else `resources-server`.
pub fn name_of_rows(rows: Option<&Path>) -> String {
    let folder = rows.and_then(|rows| {
        let parts: Vec<_> = rows.components().collect();
        parts.windows(2).find_map(|pair| {
            (pair[0].as_os_str() == "resources_servers")
                .then(|| pair[1].as_os_str().to_string_lossy().into_owned())
        })
    });
    name_from(folder.as_deref().unwrap_or(""), "resources-server")
}

/// A problem when a configured `environment.name` is not a name.
pub fn name_problem(file: &Path, name: &str) -> Option<Problem> {
    let fine = !name.is_empty()
        && name.chars().count() <= MOST_CHARS
        && name.chars().all(allowed)
        && !name.starts_with(['-', '.']);
    (!fine).then(|| {
        Problem::at_field(
            file,
            "environment.name",
            format!(
                "'{name}' is not a name; it is shown to the policy (its prompt says \
                 which environment it works in), so use 1 to {MOST_CHARS} letters, digits, \
                 '-', '_' or '.', e.g. name = \"orders\""
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_keeps_letters_digits_and_dashes_and_never_a_path() {
        assert_eq!(name_from("memory-server", "x"), "memory-server");
        assert_eq!(
            name_from("mcp-servers/everything", "x"),
            "mcp-servers-everything"
        );
        assert_eq!(name_from("/home/ann/tools", "x"), "home-ann-tools");
        assert_eq!(name_from("///", "fallback"), "fallback");
        assert_eq!(
            name_of_file(Path::new("/work/data/simulated/tools.json")),
            "tools"
        );
        assert_eq!(name_from(&"a".repeat(100), "x").len(), 64);
        assert_eq!(
            name_of_rows(Some(Path::new(
                "/srv/gym/resources_servers/mcqa/data/example.jsonl"
            ))),
            "mcqa"
        );
        assert_eq!(
            name_of_rows(Some(Path::new("/home/ann/rows.jsonl"))),
            "resources-server"
        );
        assert_eq!(name_of_rows(None), "resources-server");
    }

    #[test]
    fn a_configured_name_with_a_slash_or_a_space_is_a_problem() {
        let file = Path::new("job.toml");
        assert!(name_problem(file, "orders").is_none());
        assert!(name_problem(file, "retail-v2.1").is_none());
        for bad in ["", "/tmp/x", "two words", ".hidden", &"a".repeat(65)] {
            let p = name_problem(file, bad).unwrap();
            assert_eq!(p.location.as_deref(), Some("environment.name"), "{bad}");
        }
    }
}
