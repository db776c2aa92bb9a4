//! The session folders of MCP conversations (`{session_dir}`): what the
//! policy reads names them `.`, never by the machine's temporary folder and
//! process id; they are gone when the conversation is, on every path
//! (`validate`'s replays, a server that stops answering, the CLI exiting
//! right after). Against the real memory server (`SPARRING_MCP_MEMORY`).
//!
//! The binary runs with its own `TMPDIR`, so what it leaves behind is seen.

use std::path::{Path, PathBuf};

use crate::common::{self, repo, text};
use crate::mcp::{memory_config, server};

use sparring::env::mcp::McpEnvironment;
use sparring::env::{Environment, InitialState, ToolCall};

fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: format!("call_{name}"),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

/// The folders named like session folders in `dir`.
fn session_folders(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("sparring-mcp-"))
        .collect()
}

#[tokio::test]
async fn a_servers_error_naming_its_file_reaches_the_policy_with_the_session_folder_as_dot() {
    let test = "a_servers_error_naming_its_file_reaches_the_policy_with_the_session_folder_as_dot";
    let Some(memory) = server("SPARRING_MCP_MEMORY", test) else {
        return;
    };
    // The graph file in a folder that does not exist: a read finds no graph,
    // a write fails, and the server's error names the file it tried.
    let mut config = memory_config(&memory, 2);
    config.env.insert(
        "MEMORY_FILE_PATH".into(),
        "{session_dir}/missing/memory.jsonl".into(),
    );
    let env = McpEnvironment::start(&config).await.unwrap();
    let mut session = env.open(&InitialState::default()).await.unwrap();
    let failed = session
        .call(&call(
            "create_entities",
            serde_json::json!({"entities": [{"name": "Ada", "entityType": "person", "observations": []}]}),
        ))
        .await
        .unwrap();
    assert!(failed.is_error, "{failed:?}");
    assert!(
        failed.content.contains("'./missing/memory.jsonl."),
        "the file, relative to the session folder: {}",
        failed.content
    );
    let temp = std::env::temp_dir().display().to_string();
    for machine in ["sparring-mcp-", temp.as_str(), "/tmp/"] {
        assert!(
            !failed.content.contains(machine),
            "'{machine}' in what the policy reads: {}",
            failed.content
        );
    }
    // The policy knows the environment by the server's own name.
    assert_eq!(env.name(), "mcp:memory-server");
}

#[tokio::test]
async fn a_server_may_run_in_its_session_folder() {
    let test = "a_server_may_run_in_its_session_folder";
    let Some(memory) = server("SPARRING_MCP_MEMORY", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = job(
        dir.path(),
        &format!(
            "command = [\"/bin/sh\", \"-c\", \"touch started-here && exec {memory}\"]\n\
             cwd = \"{{session_dir}}\"\n\
             env = {{ MEMORY_FILE_PATH = \"{{session_dir}}/memory.jsonl\" }}\n"
        ),
        1,
    );
    let job = sparring::config::load(&config).unwrap_or_else(|p| panic!("{p:?}"));
    let sparring::config::EnvironmentConfig::Mcp(mcp) = &job.environment else {
        panic!("not an MCP environment");
    };
    let env = McpEnvironment::start(mcp).await.unwrap();
    let mut session = env.open(&InitialState::default()).await.unwrap();
    // The server started in the folder its graph is in: both files there.
    session
        .call(&call(
            "create_entities",
            serde_json::json!({"entities": [{"name": "Ada", "entityType": "person", "observations": []}]}),
        ))
        .await
        .unwrap();
    let ours: Vec<PathBuf> = session_folders(&std::env::temp_dir())
        .into_iter()
        .map(|name| std::env::temp_dir().join(name))
        .filter(|folder| folder.join("started-here").exists())
        .collect();
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert!(ours[0].join("memory.jsonl").exists());
    drop(session);
    assert!(!ours[0].exists(), "the folder outlived its session");
}

/// A job over the memory server's scenarios (the first `scenarios` of them),
/// with this `[environment]` (kind "mcp" added), every path absolute.
fn job(dir: &Path, environment: &str, scenarios: usize) -> PathBuf {
    let all = std::fs::read_to_string(repo().join("data/mcp-memory/scenarios.jsonl")).unwrap();
    let some: Vec<&str> = all.lines().take(scenarios).collect();
    let file = dir.join("scenarios.jsonl");
    std::fs::write(&file, some.join("\n") + "\n").unwrap();
    let spec = common::JobSpec {
        name: "folders".into(),
        // Always makes the gold calls (no deliberate flaw).
        policy_model: "mock-policy+perfect".into(),
        scenarios: file,
        ..Default::default()
    };
    let builtin = "[environment]\nname = \"builtin:retail\"\n";
    let text = common::job_toml(&spec, &dir.join("folders.db"));
    assert!(text.contains(builtin), "common::job_toml changed");
    let text = text.replace(
        builtin,
        &format!("[environment]\nkind = \"mcp\"\n{environment}\n"),
    ) + "samples_per_scenario = 2\n";
    let path = dir.join("job.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `sparring ARGS` in `dir` with `TMPDIR` = `tmp`.
fn sparring(dir: &Path, tmp: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", tmp)
        .env_remove("SPARRING_DATABASE")
        .output()
        .unwrap();
    (
        out.status.code(),
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

#[test]
fn validate_leaves_no_session_folder_behind() {
    let test = "validate_leaves_no_session_folder_behind";
    let Some(memory) = server("SPARRING_MCP_MEMORY", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // Three scenarios, five gold actions: validate replays each scenario's on
    // a fresh server process, each with its own folder.
    let config = job(
        dir.path(),
        &format!(
            "command = [\"{memory}\"]\nenv = {{ MEMORY_FILE_PATH = \"{{session_dir}}/memory.jsonl\" }}"
        ),
        3,
    );
    // Left by a sparring killed outright (its process is gone), and by one
    // still running (this one): the first is swept, the second kept.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let stale = format!("sparring-mcp-{}-0", gone.id());
    let alive = format!("sparring-mcp-{}-0", std::process::id());
    for left in [&stale, &alive] {
        std::fs::create_dir_all(tmp.join(left).join("x")).unwrap();
    }
    let (code, said) = sparring(dir.path(), &tmp, &["validate", config.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(session_folders(&tmp), vec![alive], "{said}");
}

/// The memory server behind a pipe that passes it the first three messages
/// (initialize, initialized, one request) and then nothing, without closing:
/// the server is alive and never answers again.
fn hanging_server(dir: &Path, memory: &str) -> String {
    let script = dir.join("hangs.sh");
    std::fs::write(
        &script,
        format!(
            "n=0\n{{ while [ $n -lt 3 ] && IFS= read -r line; do printf '%s\\n' \"$line\"; n=$((n+1)); done; sleep 20; }} | exec {memory}\n"
        ),
    )
    .unwrap();
    script.display().to_string()
}

#[test]
fn a_server_that_stops_answering_leaves_no_session_folder_behind() {
    let test = "a_server_that_stops_answering_leaves_no_session_folder_behind";
    let Some(memory) = server("SPARRING_MCP_MEMORY", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let hangs = hanging_server(dir.path(), &memory);
    // One scenario of one gold action: validate's replay is the one request
    // the server answers, and so is the conversation's first call; the probe
    // after it waits past timeout_secs.
    let config = job(
        dir.path(),
        &format!(
            "command = [\"/bin/sh\", \"{hangs}\"]\n\
             env = {{ MEMORY_FILE_PATH = \"{{session_dir}}/memory.jsonl\" }}\ntimeout_secs = 2"
        ),
        1,
    );
    let (_, said) = sparring(
        dir.path(),
        &tmp,
        &["run", config.to_str().unwrap(), "--quiet"],
    );
    assert!(said.contains("2 failed"), "both conversations hang: {said}");
    assert_eq!(session_folders(&tmp), Vec::<String>::new(), "{said}");
}
