//! Issue 37's corpus of hostile requests, sent to `sparring serve` (the
//! binary) by whoever holds its token: nesting 100,000 deep in every parser
//! of user text (the `where` language, templates, TOML, JSON bodies, an
//! imported line), every spelling of a path above an agent's base URL, files
//! that are not regular files (a FIFO, a folder), inline scenarios the
//! service may not keep, a body over the limit, text a browser could sniff.
//! Each case must be answered with its 4xx, a JSON body naming what it must,
//! and `X-Content-Type-Options: nosniff`; after each the server still
//! answers `/healthz`, and nothing was written to the data root (nor through
//! its symlinked `.sparring` folder, outside it). The agent server's errors
//! are held to the same, apart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::common::{self, copy_into, repo};
use crate::served::{Served, TOKEN};

const DEEP: usize = 100_000;

/// The agent's base URL the allowlist allows (nothing listens there: a
/// refused config never calls it).
const AGENT: &str = "http://127.0.0.1:9/agent";

struct Case {
    name: &'static str,
    method: &'static str,
    path: String,
    content_type: &'static str,
    body: Vec<u8>,
    status: u16,
    mentions: Vec<&'static str>,
}

fn case(
    name: &'static str,
    path: &str,
    content_type: &'static str,
    body: impl Into<Vec<u8>>,
    status: u16,
    mentions: &[&'static str],
) -> Case {
    Case {
        name,
        method: "POST",
        path: path.to_string(),
        content_type,
        body: body.into(),
        status,
        mentions: mentions.to_vec(),
    }
}

/// A generation job over the data root's files with `extra` appended (its
/// own tables) and `policy` as its `[policy]` table's body.
fn job(policy: &str, extra: &str) -> String {
    format!(
        r#"name = "hostile"
[endpoints.policy]
mock = true
model = "mock-policy"

[endpoints.user]
mock = true
model = "mock-user"

[endpoints.agent]
base_url = "{AGENT}"
model = "agent"

[roles]
policy = "policy"
user = "user"

[policy]
{policy}

[environment]
name = "builtin:retail"

[dataset]
scenarios = "scenarios.jsonl"
personas = "personas"
personas_per_scenario = 1
{extra}
"#
    )
}

/// A job whose persona table has `table` (its `[persona_table]` keys).
fn table_job(table: &str) -> String {
    job("", "").replace(
        "personas = \"personas\"",
        "personas = \"population.csv\"",
    ) + &format!(
        "\n[persona_table]\nid = \"uuid\"\n{table}\n[persona_table.fields]\nbackground = \"persona\"\n"
    )
}

/// A job whose policy is the agent, as `kind` with `table` as its keys.
fn agent_job(kind: &str, table: &str) -> String {
    job(
        &format!("kind = \"{kind}\"\n\n[policy.{kind}]\n{table}"),
        "",
    )
    .replace("policy = \"policy\"\nuser", "policy = \"agent\"\nuser")
}

fn http_policy(path: &str, body: &str) -> String {
    agent_job(
        "http",
        &format!("path = '''{path}'''\nbody = '''{body}'''\nreply = \"/reply\""),
    )
}

fn nested(open: &str, inner: &str, close: &str) -> String {
    format!("{}{inner}{}", open.repeat(DEEP), close.repeat(DEEP))
}

fn rollouts(extra: &str) -> String {
    format!(
        r#"{{"config": "rollouts.toml", "k": 1, "policy": {{"base_url": "{AGENT}", "model": "m"}}{extra}}}"#
    )
}

fn cases() -> Vec<Case> {
    let toml = "application/toml";
    let json = "application/json";
    let ndjson = "application/x-ndjson";
    let mut cases = vec![
        // Nesting, 100,000 deep, in each parser of user text.
        case(
            "where-parentheses",
            "/v1/jobs",
            toml,
            table_job(&format!("where = \"{}\"", nested("(", "age > 1", ")"))),
            422,
            &["persona_table.where", "more than 64 deep"],
        ),
        case(
            "where-not",
            "/v1/jobs",
            toml,
            table_job(&format!("where = \"{}age > 1\"", "not ".repeat(DEEP))),
            422,
            &["persona_table.where", "more than 64 deep"],
        ),
        case(
            "template-derived-parentheses",
            "/v1/jobs",
            toml,
            table_job(&format!(
                "[persona_table.derived]\nband = \"{{{{ {} }}}}\"",
                nested("(", "1", ")")
            )),
            422,
            &["persona_table.derived.band", "more than 32 deep"],
        ),
        case(
            "template-body-if-blocks",
            "/v1/jobs",
            toml,
            http_policy("/run", &"{%if a%}".repeat(DEEP)),
            422,
            &["policy.http.body", "more than 32 deep"],
        ),
        case(
            "template-body-parentheses",
            "/v1/jobs",
            toml,
            http_policy("/run", &format!("{{{{ {} }}}}", nested("(", "1", ")"))),
            422,
            &["policy.http.body", "more than 32 deep"],
        ),
        case(
            "template-body-not",
            "/v1/jobs",
            toml,
            http_policy(
                "/run",
                &format!("{{% if {}a %}}{{}}{{% endif %}}", "not ".repeat(DEEP)),
            ),
            422,
            &["policy.http.body", "more than 64 operators"],
        ),
        case(
            "template-file-for-blocks",
            "/v1/jobs",
            toml,
            job("template = \"deep.tera\"", ""),
            422,
            &["deep.tera", "line 1", "more than 32 deep"],
        ),
        case(
            "template-macro-recursion",
            "/v1/jobs",
            toml,
            job("template = \"recursive.tera\"", ""),
            422,
            &["recursive.tera", "renders itself again"],
        ),
        case(
            "toml-inline-tables",
            "/v1/jobs",
            toml,
            job("", &format!("[extra]\na = {}", nested("{b = ", "1", "}"))),
            422,
            &["more than 80 levels deep"],
        ),
        case(
            "toml-arrays",
            "/v1/jobs",
            toml,
            job("", &format!("[extra]\na = {}", nested("[", "1", "]"))),
            422,
            &["more than 80 levels deep"],
        ),
        case(
            "toml-dotted-key",
            "/v1/jobs",
            toml,
            job("", &format!("[extra]\n{} = 1", vec!["k"; DEEP].join("."))),
            422,
            &["line 29", "more than 80 levels deep"],
        ),
        case(
            "json-job",
            "/v1/jobs",
            json,
            format!("{{\"name\": {}}}", nested("[", "", "]")),
            422,
            &["line 1, column 13", "more than 128 deep"],
        ),
        case(
            "json-rollouts",
            "/v1/rollouts",
            json,
            format!("{{\"k\": {}}}", nested("[", "", "]")),
            400,
            &["more than 128 deep"],
        ),
        case(
            "json-imports",
            "/v1/imports",
            json,
            format!("{{\"files\": {}}}", nested("[", "", "]")),
            422,
            // Typed fields stop the reading at the first bracket too many.
            &["line 1, column 11", "expected a string"],
        ),
        case(
            "json-imported-line",
            "/v1/imports?name=deep&format=openai",
            ndjson,
            format!("{{\"messages\": {}}}\n", nested("[", "", "]")),
            422,
            &["line 1", "more than 128 deep"],
        ),
        case(
            "json-judging",
            "/v1/judging-jobs",
            json,
            format!("{{\"judges\": {}}}", nested("{\"a\": ", "1", "}")),
            422,
            &["more than 128 deep"],
        ),
        case(
            "toml-synthesis",
            "/v1/synthesis-jobs",
            toml,
            format!("name = \"s\"\na = {}", nested("[", "1", "]")),
            422,
            &["more than 80 levels deep"],
        ),
        case(
            "json-rollouts-inline-config",
            "/v1/rollouts",
            json,
            format!(
                r#"{{"config_toml": "a = {}", "k": 1, "policy": {{"base_url": "{AGENT}", "model": "m"}}}}"#,
                nested("[", "1", "]")
            ),
            422,
            &["config_toml", "more than 80 levels deep"],
        ),
        // Files that are not regular files.
        case(
            "import-a-fifo",
            "/v1/imports",
            json,
            r#"{"name": "x", "files": ["pipe.jsonl"]}"#,
            422,
            &["pipe.jsonl", "named pipe (FIFO)"],
        ),
        case(
            "import-a-fifo-as-tau2",
            "/v1/imports",
            json,
            r#"{"name": "x", "files": ["pipe.jsonl"], "format": "tau2"}"#,
            422,
            &["pipe.jsonl", "named pipe (FIFO)"],
        ),
        case(
            "import-a-folder",
            "/v1/imports",
            json,
            r#"{"name": "x", "files": ["folder.jsonl"], "format": "hf"}"#,
            422,
            &["folder.jsonl", "a folder"],
        ),
        case(
            "scenarios-a-fifo",
            "/v1/jobs",
            toml,
            job("", "").replace("scenarios.jsonl", "pipe.jsonl"),
            422,
            &["pipe.jsonl", "named pipe (FIFO)"],
        ),
        case(
            "template-a-fifo",
            "/v1/jobs",
            toml,
            job("template = \"pipe.jsonl\"", ""),
            422,
            &["pipe.jsonl", "named pipe (FIFO)"],
        ),
        case(
            "rollouts-config-a-fifo",
            "/v1/rollouts",
            json,
            rollouts("").replace("rollouts.toml", "pipe.jsonl"),
            422,
            &["config", "cannot be read"],
        ),
        // Inline scenarios: refused requests keep nothing; a symlinked
        // `.sparring` (it is one in this data root) is never written through.
        case(
            "rollouts-inline-bad-k",
            "/v1/rollouts",
            json,
            rollouts(r#", "scenarios": [{"id": "x"}]"#).replace("\"k\": 1", "\"k\": 0"),
            422,
            &["k"],
        ),
        case(
            "rollouts-inline-through-a-symlink",
            "/v1/rollouts",
            json,
            rollouts(r#", "scenarios": [{"id": "x", "user": {"reason_for_contact": "r"}}]"#),
            422,
            &["scenarios", "not a folder"],
        ),
        // Smaller ones.
        case(
            "body-over-the-limit",
            "/v1/jobs",
            toml,
            vec![b'#'; 3 << 20],
            413,
            &["length limit"],
        ),
    ];
    for (i, path) in [
        "/../admin/secret",
        "/%2e%2e/admin/secret",
        "/.%2E/admin/secret",
        "/x/..%2f..%2fadmin",
        "/x\\..\\..\\admin",
        "/%252e%252e/admin",
        "/..;x/admin",
        "/{{ '.' ~ '.' }}/admin/secret",
    ]
    .into_iter()
    .enumerate()
    {
        let names = [
            "path-dot-dot",
            "path-encoded-dots",
            "path-mixed-dots",
            "path-encoded-slash",
            "path-backslash",
            "path-double-encoded",
            "path-dot-dot-semicolon",
            "path-template-dots",
        ];
        cases.push(case(
            names[i],
            "/v1/jobs",
            toml,
            http_policy(path, "{}"),
            422,
            &["policy.http.path"],
        ));
    }
    for kind in ["responses_agent", "a2a"] {
        cases.push(case(
            if kind == "a2a" {
                "path-a2a"
            } else {
                "path-responses-agent"
            },
            "/v1/jobs",
            toml,
            agent_job(kind, "path = \"/%2e%2e/admin/secret\""),
            422,
            if kind == "a2a" {
                &["policy.a2a.path", "climbs above"]
            } else {
                &["policy.responses_agent.path", "climbs above"]
            },
        ));
    }
    cases.push(Case {
        name: "script-in-a-path",
        method: "GET",
        path: "/v1/jobs/%3Cscript%3Ealert(1)%3C%2Fscript%3E".into(),
        content_type: json,
        body: Vec::new(),
        status: 400,
        mentions: vec!["<script>"],
    });
    cases
}

/// The data root: the files the configs name, a FIFO, a folder named like
/// a file, a template nested 100,000 deep, one whose macro calls itself,
/// and `.sparring` a symlink to `outside` (which must stay empty).
fn data_root(outside: &Path) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    copy_into(&repo().join("personas"), &r.join("personas"));
    common::first_scenarios(r, 2);
    std::fs::copy(
        repo().join("data/personas/population.csv"),
        r.join("population.csv"),
    )
    .unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(r.join("pipe.jsonl"))
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::create_dir(r.join("folder.jsonl")).unwrap();
    std::fs::write(r.join("deep.tera"), "{% for i in x %}".repeat(DEEP)).unwrap();
    std::fs::write(
        r.join("recursive.tera"),
        "{% macro f(n) %}{{ self::f(n=n) }}{% endmacro f %}{{ self::f(n=1) }}",
    )
    .unwrap();
    std::fs::write(
        r.join("rollouts.toml"),
        job("", "").replace("[endpoints.agent]", "[endpoints.unused]"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside, r.join(".sparring")).unwrap();
    root
}

/// Every file under `dir` (FIFOs and folders by name only) with its size,
/// the service's own database left out.
fn listing(dir: &Path) -> BTreeMap<PathBuf, u64> {
    crate::common::entries_below(dir)
        .into_iter()
        .filter(|(relative, _)| !relative.to_string_lossy().starts_with("service.db"))
        .map(|(relative, meta)| (relative, if meta.is_file() { meta.len() } else { 0 }))
        .collect()
}

async fn healthy(served: &Served) -> bool {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    match client.get(format!("{}/healthz", served.url)).send().await {
        Ok(response) => response.status() == 200,
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_request_is_a_4xx_naming_its_limit_and_the_service_stays_up() {
    let outside = tempfile::tempdir().unwrap();
    let root = data_root(outside.path());
    let served = Served::start(root.path(), &["--allow-url".into(), AGENT.into()]);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let before = listing(root.path());
    let mut failures = Vec::new();
    let cases = cases();
    for case in &cases {
        let url = format!("{}{}", served.url, case.path);
        let request = match case.method {
            "GET" => client.get(&url),
            _ => client.post(&url).body(case.body.clone()),
        };
        let response = request
            .bearer_auth(TOKEN)
            .header("content-type", case.content_type)
            .send()
            .await;
        let mut wrong = Vec::new();
        match response {
            Err(e) => wrong.push(format!("no answer: {e}")),
            Ok(response) => {
                let status = response.status().as_u16();
                let nosniff = response
                    .headers()
                    .get("x-content-type-options")
                    .and_then(|v| v.to_str().ok())
                    == Some("nosniff");
                let text = response.text().await.unwrap_or_default();
                if status != case.status {
                    wrong.push(format!("status {status}, want {}", case.status));
                }
                if !nosniff {
                    wrong.push("no X-Content-Type-Options: nosniff".into());
                }
                match serde_json::from_str::<Value>(&text) {
                    Ok(_) => {
                        let shown = text.replace("\\u003c", "<").replace("\\u003e", ">");
                        for m in &case.mentions {
                            if !shown.contains(m) {
                                wrong.push(format!("the body does not mention {m:?}"));
                            }
                        }
                    }
                    Err(_) => wrong.push("the body is not JSON".into()),
                }
                if !wrong.is_empty() {
                    wrong.push(format!("body: {}", &text[..text.len().min(600)]));
                }
            }
        }
        if !healthy(&served).await {
            wrong.push("/healthz did not answer after it".into());
        }
        if !wrong.is_empty() {
            failures.push(format!("{}: {}", case.name, wrong.join("; ")));
        }
    }
    let jobs = served.get("/v1/jobs").send().await.unwrap();
    let jobs: Value = jobs.json().await.unwrap();
    if jobs["jobs"].as_array().is_some_and(|j| !j.is_empty()) {
        failures.push(format!("a job was stored: {jobs}"));
    }
    let after = listing(root.path());
    if after != before {
        failures.push(format!("the data root changed: {before:?} -> {after:?}"));
    }
    let written: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
    if !written.is_empty() {
        failures.push(format!(
            "{} entries written through .sparring",
            written.len()
        ));
    }
    println!("hostile requests: {} cases", cases.len());
    assert!(
        failures.is_empty(),
        "{} of {} hostile requests failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_servers_errors_are_json_with_nosniff_and_it_wants_its_token() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let (config, _) = common::write_job(dir.path(), &common::JobSpec::default());
    let token = "agent-token-0123456789";
    let mut child = Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args(["agent", "--config", config.to_str().unwrap()])
        .args(["--bind", "127.0.0.1:0", "--token", token])
        .current_dir(dir.path())
        .env_remove("SPARRING_DATABASE")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_string();
    assert!(url.starts_with("http://"), "{url:?}");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let over = vec![b' '; (32 << 20) + 1];
    for (what, request, status) in [
        (
            "a body over 32 MiB",
            client
                .post(format!("{url}/run"))
                .bearer_auth(token)
                .body(over),
            413,
        ),
        (
            "no token",
            client.post(format!("{url}/run")).body("{}"),
            401,
        ),
        (
            "an unknown route",
            client.get(format!("{url}/nothing")).bearer_auth(token),
            404,
        ),
        (
            "a body that is not JSON",
            client
                .post(format!("{url}/run"))
                .bearer_auth(token)
                .body("<script>"),
            422,
        ),
    ] {
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{what}");
        assert_eq!(
            response.headers()["x-content-type-options"],
            "nosniff",
            "{what}"
        );
        let body: Value = response
            .json()
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            body["detail"].is_string() || body["detail"].is_array(),
            "{what}: {body}"
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}
