//! A user without the repository: `sparring init DIR` writes the starter
//! project (the quickstart's config, personas, scenarios and prompts, the
//! repository's own files byte for byte), `sparring run DIR/quickstart.toml`
//! runs it from any folder with nothing else there, refusals write nothing,
//! and `sparring --version` says what the binary was built from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{repo, sparring, text};

/// Every file under `dir`, by its path relative to `dir`, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut found = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(dir).unwrap().display().to_string();
                found.insert(relative, std::fs::read(&path).unwrap());
            }
        }
    }
    found
}

/// The files of the repository the quickstart reads, by their paths in the
/// repository: the config, what it names, and the `*.toml` of its personas folder.
fn quickstart_files_in_the_repository() -> Vec<String> {
    let config: toml::Value =
        toml::from_str(&std::fs::read_to_string(repo().join("quickstart.toml")).unwrap()).unwrap();
    let mut paths = vec!["quickstart.toml".to_string()];
    for named in [
        &config["user_simulator"]["template"],
        &config["policy"]["template"],
        &config["dataset"]["scenarios"],
    ] {
        paths.push(named.as_str().unwrap().to_string());
    }
    let personas = config["dataset"]["personas"].as_str().unwrap();
    for entry in std::fs::read_dir(repo().join(personas)).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".toml") {
            paths.push(format!("{personas}/{name}"));
        }
    }
    paths.sort();
    paths
}

#[test]
fn init_writes_the_files_the_repositorys_quickstart_reads_byte_for_byte_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let out = sparring(dir.path(), &["init", "q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = files(&dir.path().join("q"));
    let expected = quickstart_files_in_the_repository();
    assert_eq!(
        written.keys().cloned().collect::<Vec<_>>(),
        expected,
        "the starter is the quickstart's files"
    );
    for (path, bytes) in &written {
        let in_repo = std::fs::read(repo().join(path)).unwrap();
        assert!(in_repo == *bytes, "{path} differs from the repository's");
    }
    let stdout = text(&out.stdout);
    assert!(stdout.contains("16 files"), "{stdout}");
    assert!(
        stdout.contains("next: sparring run q/quickstart.toml"),
        "{stdout}"
    );
}

#[test]
fn the_starter_runs_from_another_folder_with_nothing_else_and_stores_its_conversations() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let project = home.join("my project");
    let init = sparring(&home, &["init", "my project"]);
    assert!(init.status.success(), "{}", text(&init.stderr));
    assert!(
        text(&init.stdout).contains("next: sparring run 'my project/quickstart.toml'"),
        "a path with a space is quoted: {}",
        text(&init.stdout)
    );

    // The same job as the repository's quickstart: scenarios, personas, tools.
    let config = project.join("quickstart.toml");
    let config = config.to_str().unwrap();
    let validate = sparring(&elsewhere, &["validate", config]);
    let repo_validate = sparring(&repo(), &["validate", "quickstart.toml"]);
    let said = |out: &std::process::Output| {
        text(&out.stdout)
            .split_once("valid")
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default()
    };
    assert!(validate.status.success(), "{}", text(&validate.stderr));
    assert_eq!(said(&validate), said(&repo_validate));
    assert!(said(&validate).contains("27 scenarios, 12 personas"));

    let run = sparring(&elsewhere, &["run", config, "--quiet"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        elsewhere.join("sparring.db").is_file(),
        "stored where it ran"
    );
    let conversations = sparring(&elsewhere, &["conversations", "--job", "1"]);
    assert!(conversations.status.success());
    assert_eq!(
        text(&conversations.stdout).lines().skip(1).count(),
        54,
        "27 scenarios × 2 personas"
    );
    assert_eq!(
        files(&project).len(),
        16,
        "the run wrote nothing into the project"
    );
}

#[test]
fn init_refuses_a_link_and_a_non_empty_folder_and_force_writes_only_the_starters_files() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::os::unix::fs::symlink(&empty, dir.path().join("link")).unwrap();
    for args in [&["init", "link"][..], &["init", "link", "--force"]] {
        let out = sparring(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains("link is a symbolic link"));
        assert!(files(&empty).is_empty(), "nothing written through the link");
    }

    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("notes.md"), "mine").unwrap();
    let refused = sparring(dir.path(), &["init", "project"]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = text(&refused.stderr);
    assert!(stderr.contains("project is not empty (it holds 1 entry: notes.md)"));
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(files(&project).len(), 1);

    let forced = sparring(dir.path(), &["init", "project", "--force"]);
    assert!(forced.status.success(), "{}", text(&forced.stderr));
    let written = files(&project);
    assert_eq!(written.len(), 17);
    assert_eq!(written["notes.md"], b"mine");
}

#[test]
fn version_names_the_version_and_what_the_binary_was_built_from() {
    let out = sparring(&repo(), &["--version"]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    let version = env!("CARGO_PKG_VERSION");
    if cfg!(debug_assertions) {
        // The test profile: no commit, so that a commit does not rebuild the crate.
        assert_eq!(
            stdout,
            format!(
                "sparring {version} (a dev build: no commit recorded; a release build names it)\n"
            )
        );
    } else {
        let head = std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(repo())
            .output()
            .unwrap();
        let head = text(&head.stdout).trim().to_string();
        assert!(
            stdout.starts_with(&format!("sparring {version} (commit {head} ")),
            "{stdout}"
        );
    }
}

/// The repository's own root is a starter project: `init` into a copy of it
/// with `--force` changes nothing.
#[test]
fn init_forced_over_the_repositorys_files_leaves_them_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy");
    for path in quickstart_files_in_the_repository() {
        let to: PathBuf = copy.join(&path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(repo().join(&path), &to).unwrap();
    }
    let before = files(&copy);
    let out = sparring(dir.path(), &["init", "copy", "--force"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("16 of them over files of the same name"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(files(&copy), before);
}
