//! Issue 37 §2: an agent call never leaves the path of its base URL, the
//! part the egress allowlist checked. `sparring serve --allow-url
//! http://HOST/agent` runs jobs whose agent is a real HTTP server that is not
//! sparring's (uvicorn, `tests/agents/path_recorder.py`, which answers
//! anything under `/admin` with a secret and records every path it gets as
//! uvicorn reads it). Each spelling of `..` that uvicorn resolves (plain,
//! `%2e%2e`, `.%2E`, `..%2f`, `\`), and the ones other servers resolve
//! (`%252e`, `..;`), in the `path` of each agent kind and in a path a template
//! makes, is a 422 at the field; one that a template makes only in a real
//! conversation fails the item before any call; and a path that stays below
//! the base URL reaches the server exactly in its normal form.

use serde_json::Value;

use crate::agent_frameworks::{start_agent, AgentKind};
use crate::common::{self, copy_into, repo};
use crate::served::{stored_errors, Served};

/// A generation job whose policy is `kind` at `base_url`, with `table` as
/// its `[policy.KIND]` keys; the user is the mock.
fn job(name: &str, base_url: &str, kind: &str, table: &str) -> String {
    format!(
        r#"name = "{name}"
max_turns = 2

[endpoints.policy]
base_url = "{base_url}"
model = "agent"
max_retries = 0
timeout_secs = 10

[endpoints.user]
mock = true
model = "mock-user"

[roles]
policy = "policy"
user = "user"

[policy]
kind = "{kind}"

[policy.{kind}]
{table}

[environment]
name = "builtin:retail"

[dataset]
scenarios = "scenarios.jsonl"
personas = "personas"
"#
    )
}

/// `[policy.http]` keys with `path`.
fn http_table(path: &str) -> String {
    format!("path = '''{path}'''\nbody = \"{{}}\"\nreply = \"/reply\"")
}

/// Every path the recorder has been sent: (raw, as uvicorn decoded it).
async fn seen(base: &str) -> Vec<(String, String)> {
    let list: Vec<Value> = reqwest::get(format!("{base}/seen"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    list.iter()
        .map(|r| {
            (
                r["raw_path"].as_str().unwrap_or("").to_string(),
                r["path"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The spellings of a path that climbs out of `/agent` to `/admin/secret`.
const CLIMBING: [&str; 8] = [
    "/../admin/secret",
    "/%2e%2e/admin/secret",
    "/.%2E/admin/secret",
    "/x/../../admin/secret",
    "/x/..%2f..%2fadmin/secret",
    "/x\\..\\..\\admin\\secret",
    "/%252e%252e/admin/secret",
    "/..;x/admin/secret",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_spelling_of_a_path_above_the_base_url_is_refused_and_a_normal_one_is_sent_as_is() {
    let Some(agent) = start_agent(AgentKind::PathRecorder, "http://127.0.0.1:9/v1").await else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    copy_into(&repo().join("personas"), &root.path().join("personas"));
    common::first_scenarios(root.path(), 1);
    let base = format!("{}/agent", agent.base_url());
    let served = Served::start(root.path(), &["--allow-url".into(), base.clone()]);

    // Written in the config, in each kind's path and in a path template.
    for (i, path) in CLIMBING.iter().enumerate() {
        let templated = path.replacen("..", "{{ '.' ~ '.' }}", 1);
        for (kind, table) in [
            ("responses_agent", format!("path = '''{path}'''")),
            ("a2a", format!("path = '''{path}'''")),
            ("http", http_table(path)),
            ("http", http_table(&templated)),
        ] {
            let config = job(&format!("climb-{i}"), &base, kind, &table);
            let (status, body) = served.submit(config).await;
            assert_eq!(status, 422, "{kind} {table}: {body}");
            let field = format!("policy.{kind}.path");
            let problems = body["errors"].as_array().unwrap();
            assert!(
                problems
                    .iter()
                    .any(|p| p["location"].as_str().unwrap_or("").starts_with(&field)),
                "{kind} {table}: no problem at {field}: {body}"
            );
        }
    }

    // Made by the template only in a real conversation (the check's sample
    // session is another): the call is never made, the item fails saying why.
    let sneaky = "/x{% if session != 'sparring-0123456789abcdef' %}/../..{% endif %}/admin/secret";
    let (status, body) = served
        .submit(job("sneaky", &base, "http", &http_table(sneaky)))
        .await;
    assert_eq!(status, 201, "{body}");
    let id = body["id"].as_i64().unwrap();
    let done = served.wait(id).await;
    assert_eq!(done["counts"]["failed"], done["total"], "{done}");
    let errors = stored_errors(&root.path().join("service.db"), id).await;
    assert!(
        errors
            .iter()
            .any(|e| e.contains("climbs above the endpoint's base_url")),
        "{errors:?}"
    );

    // Below the base URL: sent in its normal form, and the job runs.
    let (status, body) = served
        .submit(job(
            "inside",
            &base,
            "http",
            &http_table("/x/%2e%2e/run/./now"),
        ))
        .await;
    assert_eq!(status, 201, "{body}");
    let done = served.wait(body["id"].as_i64().unwrap()).await;
    assert_eq!(done["counts"]["done"], done["total"], "{done}");

    let seen = seen(agent.base_url()).await;
    assert!(!seen.is_empty(), "the job inside reached nothing");
    for (raw, decoded) in &seen {
        assert_eq!(
            raw, "/agent/run/now",
            "uvicorn was sent {raw} (read as {decoded})"
        );
    }
}
