//! The stored snapshot of a config is part of its job's config hash, so a
//! snapshot that changes is a job that no longer resumes. These tests hold the
//! snapshots of today's configs (tests/config_snapshots/, quickstart.toml, examples/) to the
//! text recorded when they were written; `SPARRING_RECORD_SNAPSHOTS=1` records
//! them again, which is only right when no stored job can be affected.

use std::path::{Path, PathBuf};

use super::load;

/// The fixtures' configs: every environment kind, every policy kind, an
/// endpoint with every key.
const CONFIGS: [&str; 6] = [
    "full",
    "minimal",
    "env-nemo-gym",
    "env-mcp-stdio",
    "env-mcp-http",
    "env-simulated",
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures() -> PathBuf {
    repo().join("tests/config_snapshots")
}

fn check(name: &str, snapshot: &str) {
    let expected = fixtures().join("expected").join(format!("{name}.snapshot"));
    let snapshot = snapshot
        .replace(&fixtures().display().to_string(), "{fixtures}")
        .replace(&repo().display().to_string(), "{repo}");
    if std::env::var_os("SPARRING_RECORD_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(expected.parent().unwrap()).unwrap();
        std::fs::write(&expected, &snapshot).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&expected)
        .unwrap_or_else(|e| panic!("{}: {e}", expected.display()));
    assert_eq!(snapshot, want, "the snapshot of {name} changed");
}

fn load_file(path: &Path) -> String {
    match load::load(path) {
        Ok(job) => job.snapshot,
        Err(problems) => panic!("{}: {problems:?}", path.display()),
    }
}

#[test]
fn snapshots_of_todays_configs_are_unchanged_so_their_jobs_still_resume() {
    for name in CONFIGS {
        check(name, &load_file(&fixtures().join(format!("{name}.toml"))));
    }
    check("quickstart", &load_file(&repo().join("quickstart.toml")));
    check(
        "local-smollm2",
        &load_file(&repo().join("examples/local-smollm2.toml")),
    );
    let body = std::fs::read_to_string(fixtures().join("body.json")).unwrap();
    let job = load::from_json("request body", &body, &fixtures(), super::Trust::Local).unwrap();
    check("body-json", &job.snapshot);
}

#[test]
fn a_snapshot_loads_back_to_itself() {
    for name in CONFIGS {
        let snapshot = load_file(&fixtures().join(format!("{name}.toml")));
        let again = load::from_snapshot("job 1", &snapshot).unwrap();
        assert_eq!(again.snapshot, snapshot, "{name}");
    }
}
