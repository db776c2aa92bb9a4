//! The service boundary as a token holder meets it, through the `sparring`
//! binary and real HTTP: a template reads nothing but the variables sparring
//! passes (the server's `SPARRING_API_TOKEN` least of all), the egress
//! allowlist (`serve --allow-url`) holds for every URL a submitted config
//! names, redirects lead nowhere past it, the data root's path is never shown,
//! `Authorization: bearer` is Bearer, and a blank query value is a 400
//! everywhere in the API.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use sparring::config::MockConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::{self, copy_into, repo, Service};
use crate::served::{serve_command, stored_errors, Served, TOKEN};

/// The server's token, which a leaky template would put into prompts.
const SECRET: &str = TOKEN;

/// A user-simulator template that reads the server's token (line 2, column 16).
const LEAKY_USER: &str = "You are {{ persona.name }}. End with {{ stop_token }}.\n\
                          Your key is {{ get_env(name=\"SPARRING_API_TOKEN\") }}.\n";

/// An HTTP server that records every request it gets and answers each with
/// `reply` (a whole HTTP/1.1 response), then closes the connection.
struct Recorder {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    async fn start(reply: String) -> Recorder {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let seen = seen.clone();
                let reply = reply.clone();
                tokio::spawn(async move {
                    let request = read_request(&mut stream).await;
                    seen.lock().unwrap().push(request);
                    let _ = stream.write_all(reply.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        Recorder { url, requests }
    }

    /// A model server that fails every call (503), recording what it was sent.
    async fn failing() -> Recorder {
        let body = r#"{"error":{"message":"recorded"}}"#;
        Recorder::start(format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ))
        .await
    }

    /// A server that redirects every request to `to` (307: same method and body).
    async fn redirecting(to: &str) -> Recorder {
        Recorder::start(format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: {to}\r\ncontent-length: 0\r\n\
             connection: close\r\n\r\n"
        ))
        .await
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// One request's head and body (by its content-length), as text.
async fn read_request(stream: &mut tokio::net::TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut chunk)).await;
        let n = match read {
            Ok(Ok(n)) if n > 0 => n,
            _ => break,
        };
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                break;
            }
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// A data root with the repository's prompts and personas, two retail
/// scenarios and the leaky templates.
fn data_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for shared in ["prompts", "personas"] {
        copy_into(&repo().join(shared), &dir.path().join(shared));
    }
    common::first_scenarios(dir.path(), 2);
    std::fs::write(dir.path().join("prompts/leaky_user.tera"), LEAKY_USER).unwrap();
    std::fs::write(
        dir.path().join("prompts/leaky_judge.tera"),
        "Same answer? {{ get_env(name=\"SPARRING_API_TOKEN\") }} Reply [[A=B]] or [[A!=B]].\n",
    )
    .unwrap();
    dir
}

/// A job over the data root's files (paths relative to it), its endpoints
/// at `target` (`mock = true` or `base_url = "…"`), with `user_template`.
fn job(name: &str, target: &str, user_template: &str) -> String {
    format!(
        r#"name = "{name}"
concurrency = 2
max_turns = 4

[endpoints.policy]
{target}
model = "mock-policy"
max_retries = 0
timeout_secs = 10

[endpoints.user]
{target}
model = "mock-user"
max_retries = 0
timeout_secs = 10

[roles]
policy = "policy"
user = "user"

[user_simulator]
template = "{user_template}"

[policy]
template = "prompts/policies/default.tera"

[environment]
name = "builtin:retail"

[dataset]
scenarios = "scenarios.jsonl"
personas = "personas"
"#
    )
}

/// `(location, message)` of each problem of a 422.
fn problems(body: &Value) -> Vec<(String, String)> {
    body["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors in {body}"))
        .iter()
        .map(|e| {
            (
                e["location"].as_str().unwrap_or("").to_string(),
                e["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The message of the problem at `location`, which must be there.
fn problem_at(body: &Value, location: &str) -> String {
    problems(body)
        .into_iter()
        .find(|(at, _)| at == location)
        .map(|(_, message)| message)
        .unwrap_or_else(|| panic!("no problem at {location}: {body}"))
}

fn assert_nothing_carries_the_secret(recorder: &Recorder) {
    for request in recorder.requests() {
        assert!(!request.contains(SECRET), "the token was sent: {request}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_that_reads_the_environment_is_refused_by_validate_and_run_at_its_line() {
    let root = data_root();
    let model = Recorder::failing().await;
    let database = root.path().join("cli.db");
    let config = format!(
        "database = \"sqlite://{}\"\n{}",
        database.display(),
        job(
            "leaky",
            &format!("base_url = \"{}/v1\"", model.url),
            "prompts/leaky_user.tera"
        )
    );
    std::fs::write(root.path().join("job.toml"), config).unwrap();
    let template = root.path().join("prompts/leaky_user.tera");
    for command in ["validate", "run"] {
        let out = tokio::task::spawn_blocking({
            let dir = root.path().to_path_buf();
            move || {
                Command::new(env!("CARGO_BIN_EXE_sparring"))
                    .args([command, "job.toml"])
                    .current_dir(&dir)
                    .env("SPARRING_API_TOKEN", SECRET)
                    .env_remove("SPARRING_DATABASE")
                    .output()
                    .unwrap()
            }
        })
        .await
        .unwrap();
        let err = common::text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {err}");
        assert!(
            err.contains(&format!(
                "{}: line 2, column 16: template `user_simulator` calls `get_env`",
                template.display()
            )),
            "{command}: {err}"
        );
        assert!(!err.contains(SECRET), "{err}");
    }
    assert_eq!(model.requests(), Vec::<String>::new(), "a model was called");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submitted_template_that_reads_the_environment_is_a_422_and_nothing_reaches_the_model() {
    let root = data_root();
    let model = Recorder::failing().await;
    let served = Served::start(root.path(), &[]);
    let target = format!("base_url = \"{}/v1\"", model.url);

    let (status, body) = served
        .submit(job("leaky", &target, "prompts/leaky_user.tera"))
        .await;
    assert_eq!(status, 422, "{body}");
    let errors = body["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{body}");
    // Named as the token holder names it: relative to the data root.
    assert_eq!(errors[0]["file"], "prompts/leaky_user.tera", "{body}");
    assert_eq!(errors[0]["location"], "line 2, column 16", "{body}");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("calls `get_env`, which templates may not call"),
        "{body}"
    );

    // A judge's template, in a judging job.
    let judges = format!(
        "[endpoints.judge]\n{target}\nmodel = \"mock-judge\"\nmax_retries = 0\n\n\
         [[judges]]\nname = \"leaky\"\nendpoint = \"judge\"\nmode = \"equivalence\"\n\
         template = \"prompts/leaky_judge.tera\"\n"
    );
    let request = json!({"judges": judges, "target": {"job": 1}}).to_string();
    let (status, body) = served
        .post("/v1/judging-jobs", "application/json", request)
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("template `leaky` calls `get_env`"),
        "{body}"
    );
    assert_eq!(body["errors"][0]["file"], "prompts/leaky_judge.tera");

    // The same job with the shipped template is taken and calls the model,
    // which never sees the token.
    let (status, body) = served
        .submit(job("clean", &target, "prompts/user_simulator.tera"))
        .await;
    assert_eq!(status, 201, "{body}");
    served.wait(body["id"].as_i64().unwrap()).await;
    assert!(
        !model.requests().is_empty(),
        "the clean job called no model"
    );
    assert_nothing_carries_the_secret(&model);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_egress_allowlist_every_url_a_submitted_config_names_must_match_it() {
    let root = data_root();
    let mock = common::mock(MockConfig::default()).await;
    let port = mock.addr().port();
    let outside = Recorder::failing().await;
    // The operator's own endpoint reaches the mock by a name the list lacks.
    let operators = root.path().join("operators.toml");
    std::fs::write(
        &operators,
        format!(
            "[endpoints.own]\nbase_url = \"http://localhost:{port}/v1\"\nmodel = \"mock-policy\"\n\
             [endpoints.own-user]\nbase_url = \"http://localhost:{port}/v1\"\nmodel = \"mock-user\"\n"
        ),
    )
    .unwrap();
    let served = Served::start(
        root.path(),
        &[
            "--allow-url".into(),
            format!("http://127.0.0.1:{port}/v1"),
            "--allow-url".into(),
            "https://*.models.example".into(),
            "--endpoints".into(),
            operators.display().to_string(),
        ],
    );
    let user_template = "prompts/user_simulator.tera";

    // On the list: taken, and it runs.
    let allowed = format!("base_url = \"http://127.0.0.1:{port}/v1\"");
    let (status, body) = served.submit(job("allowed", &allowed, user_template)).await;
    assert_eq!(status, 201, "{body}");
    let done = served.wait(body["id"].as_i64().unwrap()).await;
    assert_eq!(done["status"], "done", "{done}");

    // Off the list, or hiding what it reaches: a 422 at each endpoint's base_url.
    for (url, why) in [
        (
            format!("{}/v1", outside.url),
            "is not a URL the service may reach",
        ),
        (
            format!("http://localhost:{port}/v1"),
            "is not a URL the service may reach",
        ),
        (
            format!("http://127.0.0.1:{port}/v10"),
            "is not a URL the service may reach",
        ),
        (
            format!("https://127.0.0.1:{port}/v1"),
            "is not a URL the service may reach",
        ),
        (
            format!(
                "http://127.0.0.1:{port}@{}/v1",
                outside.url.trim_start_matches("http://")
            ),
            "carries user info",
        ),
        (
            format!("http://127.0.0.1:{port}/v1/../admin"),
            "not in normal form",
        ),
        (
            "https://models.example/v1".to_string(),
            "is not a URL the service may reach",
        ),
    ] {
        let target = format!("base_url = \"{url}\"");
        let (status, body) = served.submit(job("off-list", &target, user_template)).await;
        assert_eq!(status, 422, "{url}: {body}");
        for field in ["endpoints.policy.base_url", "endpoints.user.base_url"] {
            let message = problem_at(&body, field);
            assert!(message.contains(why), "{url}: {message}");
        }
        assert!(
            problem_at(&body, "endpoints.user.base_url").contains(&format!(
                "http://127.0.0.1:{port}/v1, https://*.models.example"
            )),
            "{body}"
        );
    }

    // An MCP server's url and a NeMo Gym server's base_url.
    let environment = "[environment]\nname = \"builtin:retail\"\n";
    let mock_target = "mock = true";
    let mcp = job("mcp", mock_target, user_template).replace(
        environment,
        &format!(
            "[environment]\nkind = \"mcp\"\nurl = \"{}/mcp\"\n",
            outside.url
        ),
    );
    let (status, body) = served.submit(mcp).await;
    assert_eq!(status, 422, "{body}");
    assert!(problem_at(&body, "environment.url").contains("is not a URL the service may reach"));
    let nemo = job("nemo", mock_target, user_template).replace(
        environment,
        &format!(
            "[environment]\nkind = \"nemo_gym\"\nbase_url = \"{}\"\n",
            outside.url
        ),
    );
    let (status, body) = served.submit(nemo).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        problem_at(&body, "environment.base_url").contains("is not a URL the service may reach")
    );

    // A judging job's judge endpoint.
    let judges = format!(
        "[endpoints.judge]\nbase_url = \"{}/v1\"\nmodel = \"mock-judge\"\n\n\
         [[judges]]\nname = \"helpful\"\nendpoint = \"judge\"\nbuiltin = \"helpfulness\"\n",
        outside.url
    );
    let request = json!({"judges": judges, "target": {"job": 1}}).to_string();
    let (status, body) = served
        .post("/v1/judging-jobs", "application/json", request)
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(problem_at(&body, "endpoints.judge.base_url").contains("may reach"));

    // A synthesis job's generator.
    let synth = format!(
        "name = \"synth\"\ntarget = 2\n[endpoints.generator]\nbase_url = \"{}/v1\"\n\
         model = \"mock-synth\"\n[roles]\ngenerator = \"generator\"\n\
         [environment]\nname = \"builtin:retail\"\n",
        outside.url
    );
    let (status, body) = served
        .post("/v1/synthesis-jobs", "application/toml", synth)
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(problem_at(&body, "endpoints.generator.base_url").contains("may reach"));

    // An agent under test is reached through the policy's endpoint: its
    // base_url is on the list or the job is refused, whatever the kind, and
    // a kind's path cannot name another host.
    let policy = "[policy]\ntemplate = \"prompts/policies/default.tera\"\n";
    for kind in ["responses_agent", "a2a", "http"] {
        let table = if kind == "http" {
            "[policy.http]\nbody = \"{}\"\nreply = \"/reply\"\n"
        } else {
            ""
        };
        let agent = job("agent", mock_target, user_template)
            .replacen(
                "[endpoints.policy]\nmock = true",
                &format!("[endpoints.policy]\nbase_url = \"{}/agent\"", outside.url),
                1,
            )
            .replace(policy, &format!("{policy}kind = \"{kind}\"\n{table}"));
        let (status, body) = served.submit(agent).await;
        assert_eq!(status, 422, "{kind}: {body}");
        assert!(
            problem_at(&body, "endpoints.policy.base_url").contains("may reach"),
            "{kind}: {body}"
        );
    }
    let elsewhere = job("agent-path", mock_target, user_template).replace(
        policy,
        &format!("{policy}kind = \"a2a\"\n[policy.a2a]\npath = \"//elsewhere.example/rpc\"\n"),
    );
    let (status, body) = served.submit(elsewhere).await;
    assert_eq!(status, 422, "{body}");
    assert!(problem_at(&body, "policy.a2a.path").contains("below the endpoint's base_url"));

    // The operator's endpoints are the operator's: not on the list, and used.
    let operator = job("operator", "", user_template)
        .replace(
            "[endpoints.policy]\n\nmodel = \"mock-policy\"",
            "[endpoints.policy]\noperator = \"own\"",
        )
        .replace(
            "[endpoints.user]\n\nmodel = \"mock-user\"",
            "[endpoints.user]\noperator = \"own-user\"",
        )
        .replace("max_retries = 0\ntimeout_secs = 10\n", "");
    let (status, body) = served.submit(operator).await;
    assert_eq!(status, 201, "{body}");
    let done = served.wait(body["id"].as_i64().unwrap()).await;
    assert_eq!(done["status"], "done", "{done}");

    assert_eq!(
        outside.requests(),
        Vec::<String>::new(),
        "a refused URL was reached"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_on_the_allowlist_cannot_redirect_the_service_past_it() {
    let root = data_root();
    let outside = Recorder::failing().await;
    let redirector = Recorder::redirecting(&format!("{}/elsewhere", outside.url)).await;
    let served = Served::start(
        root.path(),
        &["--allow-url".into(), format!("{}/", redirector.url)],
    );
    std::fs::write(
        root.path().join("rows.jsonl"),
        "{\"responses_create_params\": {\"input\": [{\"role\": \"user\", \"content\": \"Pick A or B\"}]}, \"expected_answer\": \"B\"}\n",
    )
    .unwrap();
    let environment = "[environment]\nname = \"builtin:retail\"\n";
    let dataset = "[dataset]\nscenarios = \"scenarios.jsonl\"\npersonas = \"personas\"\n";
    let user_template = "prompts/user_simulator.tera";

    // An MCP server's url: connected to while the job is checked.
    let mcp = job("mcp", "mock = true", user_template).replace(
        environment,
        &format!(
            "[environment]\nkind = \"mcp\"\nurl = \"{}/mcp\"\n",
            redirector.url
        ),
    );
    let (status, body) = served.submit(mcp).await;
    assert_eq!(status, 422, "{body}");

    // A NeMo Gym server: reached when the job runs.
    let nemo = job("nemo", "mock = true", user_template)
        .replace(
            environment,
            &format!(
                "[environment]\nkind = \"nemo_gym\"\nbase_url = \"{}\"\nmax_retries = 0\n",
                redirector.url
            ),
        )
        .replace(
            dataset,
            "[dataset]\nformat = \"nemo_gym\"\nrows = \"rows.jsonl\"\n",
        )
        .replace("[user_simulator]\n", "[user_simulator]\nmode = \"none\"\n");
    let (status, body) = served.submit(nemo).await;
    assert_eq!(status, 201, "{body}");
    served.wait(body["id"].as_i64().unwrap()).await;

    assert!(
        redirector.requests().len() >= 2,
        "the redirector was not reached: {:?}",
        redirector.requests()
    );
    assert_eq!(
        outside.requests(),
        Vec::<String>::new(),
        "a redirect was followed"
    );
}

#[test]
fn serve_refuses_an_allowlist_pattern_that_does_not_parse() {
    let root = tempfile::tempdir().unwrap();
    let out = serve_command(
        root.path(),
        &[
            "--allow-url".into(),
            "127.0.0.1:8000".into(),
            "--allow-url".into(),
            "http://models.internal:99999".into(),
            "--allow-url".into(),
            "http://ok.example".into(),
        ],
    )
    .output()
    .unwrap();
    let err = common::text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--allow-url '127.0.0.1:8000' is not a URL pattern: it has no scheme"),
        "{err}"
    );
    assert!(
        err.contains("the port '99999' is not 1 to 65535 or *"),
        "{err}"
    );
    assert!(err.contains("SCHEME://HOST[:PORT][/PATH]"), "{err}");
    assert!(!err.contains("ok.example"), "{err}");
    assert!(!root.path().join("service.db").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_the_service_shows_holds_the_data_roots_path() {
    let service = Service::start("a-token-of-twenty-chars").await;
    let root = service.dir.path().canonicalize().unwrap();
    let root_text = root.display().to_string();
    let id = service.submit("paths", 1).await;
    service.wait_until_done(id).await;

    let detail = service.json(&format!("/v1/jobs/{id}")).await;
    let config = detail["config"].as_str().unwrap();
    assert!(
        config.contains("template = \"prompts/user_simulator.tera\""),
        "{config}"
    );
    assert!(
        config.contains("scenarios = \"scenarios.jsonl\""),
        "{config}"
    );
    for (what, text) in [
        (
            "GET /v1/jobs/ID",
            service.text(&format!("/v1/jobs/{id}")).await,
        ),
        ("GET /v1/jobs", service.text("/v1/jobs").await),
        ("the job page", service.text(&format!("/jobs/{id}")).await),
    ] {
        assert!(!text.contains(&root_text), "{what}: {text}");
        let escaped = root_text.replace('/', "&#x2F;");
        assert!(!text.contains(&escaped), "{what}: {text}");
    }
    // A 422 names files as the token holder does.
    let missing = service
        .job("paths", 1, "")
        .replace("personas\"", "no-such-folder\"");
    let response = service
        .post("/v1/jobs")
        .header("content-type", "application/toml")
        .body(missing)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 422);
    let text = response.text().await.unwrap();
    assert!(!text.contains(&root_text), "{text}");
    assert!(text.contains("no-such-folder"), "{text}");
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let token = "a-token-of-twenty-chars";
    let service = Service::start(token).await;
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let response = service
            .client
            .get(format!("{}/v1/jobs", service.url))
            .header("authorization", format!("{scheme} {token}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{scheme}");
    }
    for header in [
        format!("Basic {token}"),
        format!("Bearer{token}"),
        "bearer wrong".to_string(),
    ] {
        let response = service
            .client
            .get(format!("{}/v1/jobs", service.url))
            .header("authorization", header.as_str())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{header}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blank_or_unreadable_query_value_is_a_400_across_the_api() {
    let service = Service::start("a-token-of-twenty-chars").await;
    let job = service.submit("blank", 1).await;
    service.wait_until_done(job).await;

    for (path, field) in [
        (
            format!("/v1/jobs/{job}/conversations?min_reward="),
            "min_reward",
        ),
        (
            format!("/v1/jobs/{job}/conversations?max_reward="),
            "max_reward",
        ),
        (format!("/v1/jobs/{job}/conversations?after="), "after"),
        (
            format!("/v1/jobs/{job}/conversations?limit=2&termination="),
            "termination",
        ),
        (
            format!("/v1/jobs/{job}/conversations?scenario=%20"),
            "scenario",
        ),
        (format!("/v1/jobs/{job}/export?min_reward="), "min_reward"),
        (format!("/v1/jobs/{job}/export?max_reward="), "max_reward"),
        (format!("/v1/jobs/{job}/export?format="), "format"),
        (format!("/v1/jobs/{job}/stats?k="), "k"),
        (
            format!("/v1/jobs/{job}/conversations?min_reward=abc"),
            "min_reward",
        ),
        (format!("/v1/jobs/{job}/conversations?after=1.5"), "after"),
        (
            format!("/v1/jobs/{job}/export?max_reward=high"),
            "max_reward",
        ),
        (format!("/v1/jobs/{job}/stats?k=1,x"), "k"),
    ] {
        let response = service.get(&path).send().await.unwrap();
        assert_eq!(response.status(), 400, "{path}");
        let body: Value = response.json().await.unwrap();
        let error = body["error"].as_str().unwrap_or_default();
        assert!(error.contains(&format!("`{field}`")), "{path}: {body}");
    }
    let submit = service
        .post("/v1/jobs?base=")
        .body(service.job("blank", 1, ""));
    assert_eq!(submit.send().await.unwrap().status(), 400, "?base=");

    // Values that read but are out of range stay 422s naming the field.
    for (path, field) in [
        (
            format!("/v1/jobs/{job}/conversations?min_reward=NaN"),
            "min_reward",
        ),
        (format!("/v1/jobs/{job}/conversations?limit=-1"), "limit"),
        (format!("/v1/jobs/{job}/stats?k=0"), "k"),
    ] {
        let response = service.get(&path).send().await.unwrap();
        assert_eq!(response.status(), 422, "{path}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["errors"][0]["location"], field, "{path}: {body}");
    }
    // Given values work, and the web UI's form, which sends its blank
    // fields, still means "any" by them.
    let page = service
        .json(&format!("/v1/jobs/{job}/conversations?min_reward=-1000000"))
        .await;
    assert!(!page["conversations"].as_array().unwrap().is_empty());
    service
        .text(&format!("/jobs/{job}?termination=&min_reward=&max_reward="))
        .await;

    // The document says so: blank text is not a value of any string parameter.
    let document = service.json("/v1/openapi.json").await;
    let parameters = document["paths"]["/v1/jobs/{id}/conversations"]["get"]["parameters"]
        .as_array()
        .unwrap();
    let termination = parameters
        .iter()
        .find(|p| p["name"] == "termination")
        .unwrap();
    assert_eq!(termination["schema"]["pattern"], "\\S", "{termination}");
    let unparsed = &document["paths"]["/v1/jobs/{id}/conversations"]["get"]["responses"]["400"];
    assert!(
        unparsed["description"]
            .as_str()
            .unwrap()
            .contains("left empty"),
        "{unparsed}"
    );
}

/// An internal page a token holder names as a job's model server or NeMo Gym
/// server: its reply is never kept in what the service stores or shows (the
/// items' errors, which a synthesis job's stats and page list and `sparring
/// show` prints; the job, its stats, its page), only its status.
#[tokio::test]
async fn an_error_reply_of_a_server_a_job_names_is_shown_by_its_status_only() {
    const INTERNAL: &str = "internal-admin-page-4b1e";
    let root = data_root();
    let page = |status: &str| {
        let body = format!("<html>{INTERNAL}: db password hunter2</html>");
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let refusing = Recorder::start(page("404 Not Found")).await;
    let failing = Recorder::start(page("500 Internal Server Error")).await;
    let served = Served::start(root.path(), &[]);
    std::fs::write(
        root.path().join("rows.jsonl"),
        "{\"responses_create_params\": {\"input\": [{\"role\": \"user\", \"content\": \"Pick A or B\"}]}, \"expected_answer\": \"B\"}\n",
    )
    .unwrap();
    let user_template = "prompts/user_simulator.tera";
    // A model server that refuses every call.
    let model = job(
        "model",
        &format!("base_url = \"{}/v1\"", refusing.url),
        user_template,
    );
    // A NeMo Gym server whose /seed_session fails.
    let nemo = job("nemo", "mock = true", user_template)
        .replace(
            "[environment]\nname = \"builtin:retail\"\n",
            &format!(
                "[environment]\nkind = \"nemo_gym\"\nbase_url = \"{}\"\nmax_retries = 0\n",
                failing.url
            ),
        )
        .replace(
            "[dataset]\nscenarios = \"scenarios.jsonl\"\npersonas = \"personas\"\n",
            "[dataset]\nformat = \"nemo_gym\"\nrows = \"rows.jsonl\"\n",
        )
        .replace("[user_simulator]\n", "[user_simulator]\nmode = \"none\"\n");
    for (config, server) in [(model, &refusing), (nemo, &failing)] {
        let (status, body) = served.submit(config).await;
        assert_eq!(status, 201, "{body}");
        let id = body["id"].as_i64().unwrap();
        let view = served.wait(id).await;
        assert!(!server.requests().is_empty(), "the server was not reached");
        let mut shown = view.to_string();
        for path in [format!("/v1/jobs/{id}/stats"), format!("/jobs/{id}")] {
            let response = served.get(&path).send().await.unwrap();
            assert_eq!(response.status(), 200, "{path}");
            shown.push_str(&response.text().await.unwrap());
        }
        let errors = stored_errors(&root.path().join("service.db"), id).await;
        assert!(
            !errors.is_empty() && errors.iter().all(|e| e.contains("HTTP ")),
            "each failure names the status: {errors:?}"
        );
        shown.push_str(&errors.join("\n"));
        assert!(
            !shown.contains(INTERNAL) && !shown.contains("hunter2"),
            "the reply came back: {shown}"
        );
    }
}
