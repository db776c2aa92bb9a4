//! The trainers' own libraries against sparring's stepped sessions (issue
//! 40): `python/tests/` run with pytest on the python of
//! `scripts/trainer-frameworks` (named by `SPARRING_TRAINER_FRAMEWORKS_PYTHON`;
//! skipped without it), against real processes started here as a user starts
//! them: `sparring openenv` over a quickstart-like job config, `sparring
//! serve` with a token and a data root holding that config, and `sparring
//! mock-llm` as the agent's model. OpenEnv's client runs 100 episodes over
//! the WebSocket, 64 at once; verl's BaseInteraction and BaseTool, verifiers'
//! MultiTurnEnv and openevals' simulation play retail scenarios; the Python
//! client's own tests run too.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{copy_into, free_port, repo};

/// A server process, killed when dropped.
struct Server {
    child: Child,
    name: &'static str,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sparring_command(args: &[&str], log: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sparring"));
    command
        .args(args)
        .env_remove("SPARRING_DATABASE")
        .env("RUST_LOG", "warn")
        .stderr(std::fs::File::create(log).unwrap());
    command
}

/// Start `sparring ARGS` that prints its URL on its first stdout line.
fn start_printing_url(name: &'static str, args: &[&str], log: &Path) -> (Server, String) {
    let mut child = sparring_command(args, log)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let url = line.trim().to_string();
    assert!(
        url.starts_with("http://"),
        "{name} printed {url:?}: {}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
    (Server { child, name }, url)
}

/// Start `sparring ARGS` and wait until `ready` answers.
fn start_waiting(name: &'static str, args: &[&str], log: &Path, ready: &str) -> Server {
    let child = sparring_command(args, log)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server { child, name };
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(ready).is_ok() {
            return server;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!(
        "{} did not listen on {ready}: {}",
        server.name,
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

/// The quickstart's config with its paths inside `root`, stored in `db`.
fn job_config(db: &Path) -> String {
    let quickstart = std::fs::read_to_string(repo().join("quickstart.toml")).unwrap();
    let without_judges = quickstart.split("\n[[judges]]").next().unwrap().to_string();
    without_judges.replace(
        "database = \"sqlite://sparring.db\"",
        &format!("database = \"sqlite://{}\"", db.display()),
    )
}

#[test]
fn openenv_verl_verifiers_and_openevals_drive_sparrings_sessions() {
    let Ok(python) = std::env::var("SPARRING_TRAINER_FRAMEWORKS_PYTHON") else {
        println!(
            "SKIPPED: SPARRING_TRAINER_FRAMEWORKS_PYTHON is not set (scripts/trainer-frameworks \
             prints it)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for shared in ["prompts", "personas", "data/retail/scenarios.jsonl"] {
        copy_into(&repo().join(shared), &root.join(shared));
    }
    let openenv_db = root.join("openenv.db");
    std::fs::write(root.join("job.toml"), job_config(&openenv_db)).unwrap();

    let mock_port = free_port().to_string();
    let mock_addr = format!("127.0.0.1:{mock_port}");
    let scenarios = root.join("data/retail/scenarios.jsonl");
    let _mock = start_waiting(
        "sparring mock-llm",
        &[
            "mock-llm",
            "--port",
            &mock_port,
            "--scenarios",
            scenarios.to_str().unwrap(),
        ],
        &root.join("mock.log"),
        &mock_addr,
    );
    let config = root.join("job.toml");
    let (_openenv, openenv_url) = start_printing_url(
        "sparring openenv",
        &[
            "openenv",
            "--config",
            config.to_str().unwrap(),
            "--bind",
            "127.0.0.1:0",
            // 64 clients at once; a client that closed may hold its place
            // a moment after its next one connects.
            "--max-concurrent-envs",
            "80",
        ],
        &root.join("openenv.log"),
    );
    let serve_port = free_port().to_string();
    let serve_addr = format!("127.0.0.1:{serve_port}");
    let token = "trainer-libraries-token-0123456789";
    let serve_db = format!("sqlite://{}", root.join("serve.db").display());
    let _serve = start_waiting(
        "sparring serve",
        &[
            "serve",
            "--database",
            &serve_db,
            "--bind",
            &serve_addr,
            "--token",
            token,
            "--data-root",
            root.to_str().unwrap(),
        ],
        &root.join("serve.log"),
        &serve_addr,
    );

    let started = Instant::now();
    let output = Command::new(&python)
        .args([
            "-m",
            "pytest",
            "python/tests",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
        ])
        .current_dir(repo())
        .env("SPARRING_TEST_OPENENV_URL", &openenv_url)
        .env("SPARRING_TEST_OPENENV_DATABASE", &openenv_db)
        .env("SPARRING_TEST_SERVE_URL", format!("http://{serve_addr}"))
        .env("SPARRING_TEST_SERVE_TOKEN", token)
        .env("SPARRING_TEST_SERVE_CONFIG", "job.toml")
        .env("SPARRING_TEST_MOCK_URL", format!("http://{mock_addr}/v1"))
        .env("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        .env("LANGSMITH_TRACING", "false")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    println!(
        "python/tests on {python} in {:.0} s:\n{text}",
        started.elapsed().as_secs_f64()
    );
    let logs = ["openenv.log", "serve.log"]
        .iter()
        .map(|f| std::fs::read_to_string(root.join(f)).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(output.status.success(), "pytest failed:\n{text}\n{logs}");
    assert!(
        !text.contains("skipped") && !text.contains("SKIPPED"),
        "a Python test was skipped although its servers run:\n{text}"
    );
    assert!(!logs.contains("panicked"), "a server panicked:\n{logs}");
}
