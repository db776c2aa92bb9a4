//! What `sparring --version` says it was built from: the git commit of the
//! checkout this package is built in (and whether its inputs differed from
//! that commit), or that it was built outside a git checkout (an sdist, a
//! crates.io download), where no commit can be known.
//!
//! Only release-like profiles (release, profiling: what is shipped or
//! measured) ask git. A dev or test build says that it records no commit: a
//! commit changes the text, and cargo would then rebuild the whole crate after
//! every commit a developer makes.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the binary is built from: a change to any of them reruns this script
/// in a release build, so that "uncommitted changes" stays true.
const INPUTS: &[&str] = &[
    "src",
    "Cargo.toml",
    "Cargo.lock",
    "build.rs",
    "data",
    "prompts",
    "personas",
    "profiles",
    "migrations",
    "quickstart.toml",
    "pyproject.toml",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let profile = std::env::var("PROFILE").unwrap_or_default();
    let built_from = if profile == "debug" {
        "a dev build: no commit recorded; a release build names it".to_string()
    } else {
        for input in INPUTS.iter().filter(|i| manifest.join(i).exists()) {
            println!("cargo:rerun-if-changed={input}");
        }
        release_built_from(&manifest)
    };
    println!("cargo:rustc-env=SPARRING_BUILT_FROM={built_from}");
}

fn release_built_from(manifest: &Path) -> String {
    let in_checkout = git(manifest, &["rev-parse", "--show-toplevel"])
        .and_then(|top| std::fs::canonicalize(top).ok())
        .zip(std::fs::canonicalize(manifest).ok())
        .is_some_and(|(top, manifest)| top == manifest);
    if !in_checkout {
        return if manifest.join(".git").exists() {
            "commit unknown: git could not read this checkout".into()
        } else {
            "built outside a git checkout: commit unknown".into()
        };
    }
    for path in ["HEAD", "packed-refs"] {
        watch_git_path(manifest, path);
    }
    if let Some(reference) = git(manifest, &["symbolic-ref", "-q", "HEAD"]) {
        watch_git_path(manifest, &reference);
    }
    let Some(commit) = git(manifest, &["rev-parse", "HEAD"]) else {
        return "commit unknown: the checkout has no commit yet".into();
    };
    let date = git(manifest, &["show", "-s", "--format=%cs", "HEAD"]).unwrap_or_default();
    let mut status = vec!["status", "--porcelain", "--"];
    status.extend(INPUTS);
    let changed = git(manifest, &status).is_some_and(|s| !s.is_empty());
    match (date.is_empty(), changed) {
        (_, true) => format!("commit {commit} {date}, with uncommitted changes"),
        (false, false) => format!("commit {commit} {date}"),
        (true, false) => format!("commit {commit}"),
    }
}

/// Reruns this script when a file of git's (HEAD, a branch's ref) changes.
fn watch_git_path(manifest: &Path, name: &str) {
    // A path that does not exist would rerun it (and rebuild the crate) every time.
    if let Some(path) = git(manifest, &["rev-parse", "--git-path", name]) {
        let path = manifest.join(path);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

/// Git's trimmed answer, or `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}
