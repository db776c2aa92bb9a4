//! Shared by the integration tests: job configs written to a temp dir that point
//! at the repository's data, and the `sparring` binary run as a user runs it.

use std::path::{Path, PathBuf};
use std::process::Output;

use sparring::config::{Boundary, MockConfig, OperatorEndpoints};
use sparring::mock_llm::MockServer;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The repository's `quickstart.toml` with its paths (relative to the
/// repository root, where it lives) made absolute: the same job from any folder.
pub fn quickstart_anywhere() -> String {
    let text = std::fs::read_to_string(repo().join("quickstart.toml")).unwrap();
    ["prompts/", "data/", "personas\""]
        .iter()
        .fold(text, |text, relative| {
            text.replace(
                &format!("\"{relative}"),
                &format!("\"{}/{relative}", repo().display()),
            )
        })
}

/// Knobs of a test job; `job_toml` renders them.
pub struct JobSpec {
    pub policy_model: String,
    pub user_model: String,
    /// `None`: the in-process mock; `Some(url)`: a server already running.
    pub base_url: Option<String>,
    pub scenarios: PathBuf,
    pub max_turns: u32,
    pub personas_per_scenario: u32,
    pub max_retries: u32,
    /// Top-level keys (and whole tables) placed before the endpoints.
    pub extra: String,
    /// A database URL instead of a SQLite file in the test's folder.
    pub database: Option<String>,
    pub name: String,
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            policy_model: "mock-policy".into(),
            user_model: "mock-user".into(),
            base_url: None,
            scenarios: repo().join("data/retail/scenarios.jsonl"),
            max_turns: 12,
            personas_per_scenario: 1,
            max_retries: 2,
            extra: String::new(),
            database: None,
            name: "test".into(),
        }
    }
}

pub fn job_toml(spec: &JobSpec, database: &Path) -> String {
    let target = match &spec.base_url {
        None => "mock = true".to_string(),
        Some(url) => format!("base_url = \"{url}\""),
    };
    let r = repo();
    format!(
        r#"name = "{name}"
seed = 7
database = "{db}"
concurrency = 4
max_turns = {max_turns}
{extra}

[endpoints.policy]
{target}
model = "{policy}"
max_retries = {retries}
timeout_secs = 10

[endpoints.user]
{target}
model = "{user}"
max_retries = {retries}
timeout_secs = 10

[roles]
policy = "policy"
user = "user"

[user_simulator]
template = "{r}/prompts/user_simulator.tera"

[policy]
template = "{r}/prompts/policies/default.tera"

[environment]
name = "builtin:retail"

[dataset]
scenarios = "{scenarios}"
personas = "{r}/personas"
personas_per_scenario = {pps}
"#,
        name = spec.name,
        db = spec
            .database
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}", database.display())),
        max_turns = spec.max_turns,
        extra = spec.extra,
        policy = spec.policy_model,
        user = spec.user_model,
        retries = spec.max_retries,
        r = r.display(),
        scenarios = spec.scenarios.display(),
        pps = spec.personas_per_scenario,
    )
}

/// Write the config into `dir` and return its path and the database URL.
pub fn write_job(dir: &Path, spec: &JobSpec) -> (PathBuf, String) {
    let db = dir.join("test.db");
    let path = dir.join("job.toml");
    std::fs::write(&path, job_toml(spec, &db)).unwrap();
    let url = spec
        .database
        .clone()
        .unwrap_or_else(|| format!("sqlite://{}", db.display()));
    (path, url)
}

/// Run the `sparring` binary with `args` from `cwd`.
pub fn sparring(cwd: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args(args)
        .current_dir(cwd)
        .env_remove("SPARRING_DATABASE")
        .output()
        .unwrap()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The first `n` scenarios of the shipped set, in a JSONL file in `dir`.
pub fn first_scenarios(dir: &Path, n: usize) -> PathBuf {
    let all = std::fs::read_to_string(repo().join("data/retail/scenarios.jsonl")).unwrap();
    let some: Vec<&str> = all
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .collect();
    let path = dir.join("scenarios.jsonl");
    std::fs::write(&path, some.join("\n") + "\n").unwrap();
    path
}

/// The database URLs a store-level test should run on: a SQLite file in `dir`
/// (`None`), and this process's own Postgres database when `SPARRING_TEST_POSTGRES`
/// names a server (else says it is skipped).
pub fn databases(dir: &Path, test: &str) -> Vec<Option<String>> {
    let _ = dir;
    let mut urls = vec![None];
    urls.extend(crate::postgres::database(test).map(Some));
    urls
}

/// A free port on loopback, for a server a test starts (another process
/// could take it before the server binds it; on a test machine none does).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A name no other run of the tests uses (Postgres databases outlive a run).
pub fn unique_name(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

/// The job id `sparring run`/`submit` printed ("job 12 'name' ...").
pub fn job_id_from(stdout: &str) -> i64 {
    let at = stdout
        .find("job ")
        .unwrap_or_else(|| panic!("no job id in {stdout}"));
    stdout[at + 4..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no job id in {stdout}"))
}

/// An endpoint config for client-level tests against `base_url`: temperature 0,
/// 64 tokens, a 5 s timeout, 4 in flight, no retries, no limits, no prices.
pub fn endpoint_config(
    name: &str,
    base_url: &str,
    model: &str,
) -> sparring::config::EndpointConfig {
    let mut endpoint = sparring::config::EndpointConfig::new(
        name,
        sparring::config::Target::Url(base_url.into()),
        model,
    )
    .unwrap();
    let settings = &mut endpoint.settings;
    settings.temperature = Some(0.0);
    settings.max_tokens = 64;
    settings.timeout_secs = 5.0;
    settings.max_in_flight = 4;
    settings.max_retries = 0;
    endpoint
}

/// A two-message request ("s" system, "hello" user).
pub fn hello() -> sparring::llm::ChatRequest {
    sparring::llm::ChatRequest {
        messages: vec![
            sparring::llm::message::Message::system("s"),
            sparring::llm::message::Message::user("hello"),
        ],
        ..sparring::llm::ChatRequest::default()
    }
}

/// `sparring serve` in this process: the router on a free loopback port over a
/// SQLite file in a temp dir, with a reqwest client that sends the token.
pub struct Service {
    pub url: String,
    /// `None`: the server asks for none and the client sends none.
    pub token: Option<String>,
    pub client: reqwest::Client,
    pub dir: tempfile::TempDir,
}

impl Service {
    pub async fn start(token: &str) -> Service {
        Service::start_with(Some(token)).await
    }

    pub async fn start_with(token: Option<&str>) -> Service {
        let dir = tempfile::tempdir().unwrap();
        let database = format!("sqlite://{}", dir.path().join("service.db").display());
        Service::over(&database, token, dir).await
    }

    /// The service over `database` (which other processes may share).
    pub async fn over(database: &str, token: Option<&str>, dir: tempfile::TempDir) -> Service {
        Service::with_operators(database, token, dir, OperatorEndpoints::default()).await
    }

    /// The service with `dir` as its data root, holding copies of the
    /// repository's prompts, personas and retail scenarios (what
    /// [`Service::job`] configs name), and with these operator endpoints.
    pub async fn with_operators(
        database: &str,
        token: Option<&str>,
        dir: tempfile::TempDir,
        operators: OperatorEndpoints,
    ) -> Service {
        Service::with_boundary(database, token, dir, |root| Boundary::new(root, operators)).await
    }

    /// The service with `dir` as its data root (its files as
    /// [`Service::with_operators`] copies them) and the boundary `boundary`
    /// makes of it.
    pub async fn with_boundary(
        database: &str,
        token: Option<&str>,
        dir: tempfile::TempDir,
        boundary: impl FnOnce(PathBuf) -> Boundary,
    ) -> Service {
        let _ = rustls::crypto::ring::default_provider().install_default();
        for shared in ["prompts", "personas", "data/retail/scenarios.jsonl"] {
            copy_into(&repo().join(shared), &dir.path().join(shared));
        }
        let database = database.to_string();
        let store = sparring::store::open(&database).await.unwrap();
        let mut state =
            sparring::server::AppState::new(store, &database, token.map(str::to_string));
        state.boundary = std::sync::Arc::new(boundary(dir.path().to_path_buf()));
        state.event_interval = std::time::Duration::from_millis(100);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let router = sparring::server::router(state);
        tokio::spawn(async move { axum::serve(listener, router).await });
        Service {
            url,
            token: token.map(str::to_string),
            client: reqwest::Client::new(),
            dir,
        }
    }

    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.authorized(self.client.get(format!("{}{path}", self.url)))
    }

    /// DELETE `path` with the token; the answer's JSON.
    pub async fn authorized_delete(&self, path: &str) -> serde_json::Value {
        self.authorized(self.client.delete(format!("{}{path}", self.url)))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    pub fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.authorized(self.client.post(format!("{}{path}", self.url)))
    }

    pub async fn json(&self, path: &str) -> serde_json::Value {
        let response = self.get(path).send().await.unwrap();
        assert_eq!(response.status(), 200, "GET {path}");
        serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
    }

    pub async fn text(&self, path: &str) -> String {
        let response = self.get(path).send().await.unwrap();
        let status = response.status();
        let body = response.text().await.unwrap();
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    /// A quickstart-style job config (retail, mock models) over the first
    /// `scenarios` scenarios, with `extra` top-level keys.
    pub fn job(&self, name: &str, scenarios: usize, extra: &str) -> String {
        self.job_with(JobSpec {
            name: name.into(),
            scenarios: first_scenarios(self.dir.path(), scenarios),
            extra: extra.into(),
            ..JobSpec::default()
        })
    }

    /// The config of `spec`, naming the copies in the data root instead of
    /// the repository's files.
    pub fn job_with(&self, spec: JobSpec) -> String {
        job_toml(&spec, &self.dir.path().join("ignored.db")).replace(
            &repo().display().to_string(),
            &self.dir.path().display().to_string(),
        )
    }

    /// `POST /v1/jobs` with a TOML config; the new job (201 asserted).
    pub async fn submit_toml(&self, toml: String) -> serde_json::Value {
        let response = self
            .post("/v1/jobs")
            .header("content-type", "application/toml")
            .body(toml)
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body = response.text().await.unwrap();
        assert_eq!(status, 201, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    /// Submit a quickstart-style job over the first `scenarios` scenarios
    /// and return its id.
    pub async fn submit(&self, name: &str, scenarios: usize) -> i64 {
        let job = self.submit_toml(self.job(name, scenarios, "")).await;
        job["id"].as_i64().unwrap()
    }

    /// Poll the job until its status is one of `statuses` and no runner here
    /// holds it.
    pub async fn wait_until(&self, job: i64, statuses: &[&str]) -> serde_json::Value {
        let started = std::time::Instant::now();
        loop {
            let view = self.json(&format!("/v1/jobs/{job}")).await;
            let status = view["status"].as_str().unwrap().to_string();
            if statuses.contains(&status.as_str()) && view["running_here"] == false {
                return view;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(120),
                "job {job} still {status}: {view}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    pub async fn wait_until_done(&self, job: i64) -> serde_json::Value {
        self.wait_until(job, &["done"]).await
    }
}

/// A file or folder copied to `to` (folders whole).
pub fn copy_into(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy_into(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

/// Judges TOML with its own endpoint on the in-process mock model.
pub fn mock_judges(judges: &str) -> String {
    format!("[endpoints.judge]\nmock = true\nmodel = \"mock-judge\"\nmax_retries = 0\n\n{judges}")
}

impl Service {
    /// `POST /v1/judging-jobs` with `body`; the response's status and JSON.
    pub async fn post_judging(&self, body: &serde_json::Value) -> (u16, serde_json::Value) {
        let response = self
            .post("/v1/judging-jobs")
            .json(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
        (status, value)
    }

    /// Judge job `a`'s conversations against job `b`'s with the mock's
    /// swap-checked pairwise judge `pref`, to the end; the judging job's id.
    pub async fn judge_pairwise(&self, a: i64, b: i64) -> i64 {
        let judges = mock_judges(
            "[[judges]]\nname = \"pref\"\nendpoint = \"judge\"\nbuiltin = \"pairwise_preference\"\n",
        );
        let (status, job) = self
            .post_judging(&serde_json::json!({"judges": judges, "target": {"a": a, "b": b}}))
            .await;
        assert_eq!(status, 201, "{job}");
        let id = job["id"].as_i64().unwrap();
        self.wait_until_done(id).await;
        id
    }
}

/// The mock model server on a free loopback port, with these knobs.
pub async fn mock(config: MockConfig) -> MockServer {
    MockServer::start(([127, 0, 0, 1], 0).into(), Vec::new(), config)
        .await
        .unwrap()
}

/// Every entry below `dir` (symlinks not followed), by its path relative to
/// `dir`, with its metadata: what a test compares before and after a run to
/// show that nothing was written.
pub fn entries_below(dir: &Path) -> Vec<(PathBuf, std::fs::Metadata)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path.clone());
            }
            found.push((path.strip_prefix(dir).unwrap().to_path_buf(), meta));
        }
    }
    found
}
