//! The commands the README and the `docs/` pages show keep working, and their
//! links lead somewhere. A shell block whose info string says `runnable`
//! (```` ```sh runnable ````) runs offline: the mock model, SQLite, no server.
//! Each page's runnable blocks run in order, with bash and the built `sparring`
//! first on PATH, in a folder of its own holding copies of `examples/`,
//! `data/`, `prompts/`, `personas/` and `quickstart.toml` where the README's
//! first command has already run (`sparring init q && sparring run
//! q/quickstart.toml`: job 1 is the quickstart's), as a reader who started
//! with the README has it.

use std::path::{Path, PathBuf};

use crate::common::{copy_into, repo, sparring, text};

/// The README and every page of `docs/`, relative to the repository.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .map(|path| Path::new("docs").join(path.file_name().unwrap()))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// A fenced block: the line of its opening fence (1-based), its info string
/// and its text.
struct Block {
    line: usize,
    info: String,
    text: String,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.take() {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    open = Some(Block {
                        line: i + 1,
                        info: info.trim().to_string(),
                        text: String::new(),
                    });
                }
            }
            Some(mut block) => {
                if trimmed.starts_with("```") {
                    blocks.push(block);
                } else {
                    block.text.push_str(line);
                    block.text.push('\n');
                    open = Some(block);
                }
            }
        }
    }
    blocks
}

fn is_runnable(block: &Block) -> bool {
    let mut words = block.info.split_whitespace();
    matches!(words.next(), Some("sh" | "bash")) && words.any(|word| word == "runnable")
}

/// A folder with the files the examples name, where the README's first
/// command has written the starter project and run it.
fn after_the_quickstart() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for shared in ["examples", "data", "prompts", "personas", "quickstart.toml"] {
        copy_into(&repo().join(shared), &dir.path().join(shared));
    }
    let init = sparring(dir.path(), &["init", "q"]);
    assert!(
        init.status.success(),
        "sparring init q: {}",
        text(&init.stderr)
    );
    let run = sparring(dir.path(), &["run", "q/quickstart.toml", "--quiet"]);
    assert!(
        run.status.success(),
        "the quickstart: {}",
        text(&run.stderr)
    );
    dir
}

fn path_with_sparring_first() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_sparring")).parent().unwrap();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&rest)))
        .unwrap()
}

#[test]
fn every_runnable_shell_block_of_the_readme_and_the_docs_exits_0() {
    let start = after_the_quickstart();
    let path = path_with_sparring_first();
    let mut ran = 0;
    let mut failures = Vec::new();
    for page in pages() {
        let markdown = std::fs::read_to_string(repo().join(&page)).unwrap();
        let runnable: Vec<Block> = blocks(&markdown).into_iter().filter(is_runnable).collect();
        if runnable.is_empty() {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        copy_into(start.path(), dir.path());
        for block in runnable {
            let out = std::process::Command::new("bash")
                .args(["-e", "-c", &block.text])
                .current_dir(dir.path())
                .env("PATH", &path)
                .env_remove("SPARRING_DATABASE")
                .env_remove("SPARRING_API_TOKEN")
                .output()
                .unwrap();
            ran += 1;
            if !out.status.success() {
                failures.push(format!(
                    "{}:{}: {}\n{}{}{}",
                    page.display(),
                    block.line,
                    out.status,
                    block.text,
                    text(&out.stdout),
                    text(&out.stderr)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} runnable blocks failed:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(ran >= 5, "only {ran} runnable blocks");
}

#[test]
fn the_readme_marks_its_offline_commands_runnable_and_links_every_docs_page() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(blocks(&readme).iter().any(is_runnable));
    for page in pages().iter().skip(1) {
        let link = format!("]({})", page.display());
        assert!(
            readme.contains(&link),
            "the README links {}",
            page.display()
        );
    }
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let mut anchors = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            anchors.push(anchor(line.trim_start_matches('#')));
        }
    }
    anchors
}

/// The targets of a page's relative links `[text](target)`, with their lines;
/// code (fenced or inline) left out.
fn relative_links(markdown: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    let mut fenced = false;
    for (i, line) in markdown.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            if !target.contains("://") && !target.starts_with("mailto:") {
                links.push((i + 1, target.to_string()));
            }
            rest = &rest[end..];
        }
    }
    links
}

#[test]
fn every_link_between_the_readme_and_the_docs_leads_to_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    for page in pages() {
        let markdown = std::fs::read_to_string(repo().join(&page)).unwrap();
        let folder = repo().join(&page).parent().unwrap().to_path_buf();
        for (line, target) in relative_links(&markdown) {
            let (file, fragment) = match target.split_once('#') {
                Some((file, fragment)) => (file, Some(fragment)),
                None => (target.as_str(), None),
            };
            let (file_path, file_text) = if file.is_empty() {
                (repo().join(&page), Some(markdown.clone()))
            } else {
                let path = folder.join(file);
                let text = std::fs::read_to_string(&path).ok();
                (path, text)
            };
            if !file_path.exists() {
                broken.push(format!("{}:{line}: {target}: no such file", page.display()));
                continue;
            }
            if let (Some(fragment), Some(text)) = (fragment, file_text) {
                if !anchors(&text).iter().any(|a| a == fragment) {
                    broken.push(format!(
                        "{}:{line}: {target}: no heading with that anchor",
                        page.display()
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}
