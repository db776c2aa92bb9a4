//! End to end against a real model: llama.cpp serving SmolLM2-135M-Instruct
//! (`scripts/local-llm start`). Asserts structure, never wording. Skipped, saying
//! so, when no server answers at `SPARRING_LOCAL_LLM_URL` (default
//! `http://127.0.0.1:8088/v1`).

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use common::{repo, sparring, text};
use serde_json::Value;

fn base_url() -> String {
    std::env::var("SPARRING_LOCAL_LLM_URL").unwrap_or_else(|_| "http://127.0.0.1:8088/v1".into())
}

/// `GET /health` answered 200, over a plain socket (no client setup needed).
fn server_is_healthy(base_url: &str) -> bool {
    let Some(host_port) = base_url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
    else {
        return false;
    };
    let Some(addr) = host_port.to_socket_addrs().ok().and_then(|mut a| a.next()) else {
        return false;
    };
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = format!("GET /health HTTP/1.0\r\nHost: {host_port}\r\n\r\n");
    let mut response = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut response).is_ok()
        && response.starts_with("HTTP/1.1 200")
}

#[tokio::test]
async fn a_small_job_against_a_real_llama_cpp_server_is_stored_whole() {
    let url = base_url();
    if !server_is_healthy(&url) {
        eprintln!(
            "SKIPPED a_small_job_against_a_real_llama_cpp_server_is_stored_whole: no llama.cpp server \
             answers {url} (/health). Start one with `scripts/local-llm start`, or set SPARRING_LOCAL_LLM_URL."
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let all = std::fs::read_to_string(repo().join("data/chat/scenarios.jsonl")).unwrap();
    // Four conversations of up to three turns: about 24 calls, each a few
    // seconds of both cores (the model shares the machine with every other
    // test).
    let four: Vec<&str> = all.lines().filter(|l| !l.is_empty()).take(4).collect();
    std::fs::write(dir.path().join("scenarios.jsonl"), four.join("\n") + "\n").unwrap();
    let r = repo();
    let config = format!(
        r#"name = "real-model-e2e"
seed = 3
database = "sqlite://{dir}/real.db"
concurrency = 2
max_turns = 3

[endpoints.local]
base_url = "{url}"
model = "smollm2"
temperature = 0.7
max_tokens = 96
timeout_secs = 180
max_in_flight = 2

[roles]
policy = "local"
user = "local"

[user_simulator]
template = "{r}/prompts/user_simulator.tera"

[policy]
template = "{r}/prompts/policies/default.tera"
max_steps_per_turn = 2

[environment]
name = "builtin:chat"

[dataset]
scenarios = "{dir}/scenarios.jsonl"
personas = "{r}/personas"
personas_per_scenario = 1
"#,
        dir = dir.path().display(),
        r = r.display(),
    );
    let path = dir.path().join("job.toml");
    std::fs::write(&path, config).unwrap();

    let run = sparring(dir.path(), &["run", path.to_str().unwrap()]);
    assert!(
        run.status.success(),
        "{}\n{}",
        text(&run.stdout),
        text(&run.stderr)
    );

    let db = format!("sqlite://{}/real.db", dir.path().display());
    let store = sparring::store::open(&db).await.unwrap();
    let counts = store.item_counts(1).await.unwrap();
    assert_eq!(
        (counts.done, counts.failed),
        (4, 0),
        "{counts:?}\n{}",
        text(&run.stderr)
    );
    let stored = store.conversations_page(1, 0, 100).await.unwrap();
    assert_eq!(stored.len(), 4);
    const ENDINGS: &[&str] = &[
        "user_stop",
        "user_transfer",
        "user_out_of_scope",
        "max_turns",
        "max_steps",
        "policy_error",
        "user_error",
    ];
    for c in &stored {
        let id = c.conversation.id;
        assert!(
            ENDINGS.contains(&c.conversation.termination.as_str()),
            "{id}: {}",
            c.conversation.termination
        );
        // system prompt, the agent's greeting, then user and agent strictly in turn
        assert_eq!(c.messages[0].role, "system", "{id}");
        for (i, m) in c.messages.iter().enumerate().skip(1) {
            let expected = if i % 2 == 1 { "assistant" } else { "user" };
            assert_eq!(m.role, expected, "conversation {id}, message {i}");
            if m.author == "policy" || m.author == "user" {
                assert!(
                    m.prompt_tokens.unwrap_or(0) > 0,
                    "{id}/{i}: usage from the server"
                );
                assert!(m.latency_ms.is_some(), "{id}/{i}: latency recorded");
            }
        }
        let user_turns = c.messages.iter().filter(|m| m.role == "user").count();
        assert!(user_turns <= 3, "{id}: max_turns 3 held ({user_turns})");
        let user = c
            .usage
            .iter()
            .find(|u| u.role == "user")
            .expect("user usage");
        assert!(
            user.calls > 0 && user.prompt_tokens > 0 && user.completion_tokens > 0,
            "{id}: {user:?}"
        );
    }
    assert!(
        stored.iter().any(|c| c
            .usage
            .iter()
            .any(|u| u.role == "policy" && u.completion_tokens > 0)),
        "the policy model answered"
    );

    let export = sparring(
        dir.path(),
        &[
            "export",
            "--job",
            "1",
            "--database",
            &db,
            "--out",
            "out.jsonl",
        ],
    );
    assert!(export.status.success(), "{}", text(&export.stderr));
    let jsonl = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    for (n, line) in jsonl.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        let messages = v["messages"].as_array().expect("messages");
        assert!(
            messages.iter().all(|m| m["content"].is_string()),
            "line {}",
            n + 1
        );
    }
    let show = sparring(
        dir.path(),
        &[
            "show",
            &stored[0].conversation.id.to_string(),
            "--database",
            &db,
        ],
    );
    assert!(show.status.success());
    assert!(text(&show.stdout).contains("[USER]"));
}

/// The body of `GET path` over a plain HTTP/1.0 socket, if it answered 200.
fn get_body(base_url: &str, path: &str) -> Option<String> {
    let host_port = base_url.strip_prefix("http://")?.split('/').next()?;
    let addr = host_port.to_socket_addrs().ok()?.next()?;
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let request = format!("GET {path} HTTP/1.0\r\nHost: {host_port}\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    if !response.starts_with("HTTP/1.1 200") {
        return None;
    }
    Some(response.split_once("\r\n\r\n")?.1.to_string())
}

#[test]
fn the_local_server_has_a_slot_for_every_request_the_example_sends_at_once() {
    let url = base_url();
    if !server_is_healthy(&url) {
        eprintln!(
            "SKIPPED the_local_server_has_a_slot_for_every_request_the_example_sends_at_once: \
             no llama.cpp server answers {url} (/health)."
        );
        return;
    }
    let props: Value =
        serde_json::from_str(&get_body(&url, "/props").expect("GET /props")).unwrap();
    let slots = props["total_slots"].as_i64().expect("total_slots");
    let example: toml::Value = toml::from_str(
        &std::fs::read_to_string(repo().join("examples/local-smollm2.toml")).unwrap(),
    )
    .unwrap();
    let at_once = example["concurrency"].as_integer().unwrap().min(
        example["endpoints"]["local"]["max_in_flight"]
            .as_integer()
            .unwrap(),
    );
    assert!(
        at_once <= slots,
        "examples/local-smollm2.toml sends {at_once} requests at once; the server has {slots} slots"
    );
}

/// A short retail policy, so that the synthesis prompt (tools, records,
/// policy, brief) fits the small model's context.
const SHORT_POLICY: &str = "Retail agent policy (short):
- Authenticate the user first: by email, or by name and zip code.
- Only cancel orders that are pending; only return items of delivered orders.
- Before any write (cancel, return, exchange, modify), list the details and get an explicit yes.
- Transfer to a human agent only when the request is outside these rules.
";

#[tokio::test]
async fn synthesis_with_a_real_model_reports_every_rejection_and_failure_and_accepts_only_what_passes(
) {
    let url = base_url();
    if !server_is_healthy(&url) {
        eprintln!(
            "SKIPPED synthesis_with_a_real_model_reports_every_rejection_and_failure_and_accepts_only_what_passes: \
             no llama.cpp server answers {url} (/health). Start one with `scripts/local-llm start`, \
             or set SPARRING_LOCAL_LLM_URL."
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("policy.md"), SHORT_POLICY).unwrap();
    // The whole pipeline: the brief, validation by execution, a one-reviewer
    // committee on the same small model. One proposal at a time: the
    // generator's prompt is about 6,000 tokens, over a minute of both cores
    // the first time a server slot reads it.
    let config = format!(
        r#"name = "real-model-synthesis"
database = "sqlite://{dir}/synth.db"
target = 1
max_proposals = 1
max_attempts = 2
records_per_prompt = 1
examples_shown = 0
concurrency = 1
policy = "policy.md"

[endpoints.local]
base_url = "{url}"
model = "smollm2"
temperature = 0.7
max_tokens = 384
timeout_secs = 300
max_in_flight = 2

[roles]
generator = "local"
reviewer = "local"

[environment]
name = "builtin:retail"

[diversity]
refusal = 0.5

[committee]
quorum = 1

[[reviewers]]
name = "small"
builtin = "blueprint_review"
"#,
        dir = dir.path().display(),
    );
    let path = dir.path().join("synth.toml");
    std::fs::write(&path, config).unwrap();
    let run = sparring(
        dir.path(),
        &["synthesize", path.to_str().unwrap(), "--quiet"],
    );
    let stdout = text(&run.stdout);
    // 0: the target was met; 1: it was not (or every item failed). Never
    // invalid input, never a panic.
    assert!(
        matches!(run.status.code(), Some(0 | 1)),
        "{stdout}\n{}",
        text(&run.stderr)
    );
    assert!(stdout.contains("accepted "), "{stdout}");

    let store = sparring::store::open(&format!("sqlite://{}/synth.db", dir.path().display()))
        .await
        .unwrap();
    let job = store
        .find_job_by_name("real-model-synthesis")
        .await
        .unwrap()
        .expect("the job is stored");
    let counts = store.item_counts(job.id).await.unwrap();
    assert_eq!(counts.pending + counts.leased, 0, "{counts:?}");
    let proposals = store.proposals_page(job.id, -1, 100).await.unwrap();
    assert_eq!(proposals.len() as i64, counts.done, "{counts:?}");
    // Each failed item says why (a model call, the committee's quorum), and
    // the report says it too.
    let errors = store.item_errors(job.id, 10).await.unwrap();
    assert_eq!(errors.iter().map(|(_, n)| n).sum::<i64>(), counts.failed);
    if counts.failed > 0 {
        assert!(stdout.contains("Failed proposals"), "{stdout}");
    }
    let environment = sparring::env::builtin::retail::RetailEnvironment::new().unwrap();
    for row in &proposals {
        let p = &row.proposal;
        let attempts = p.attempts.as_array().unwrap();
        assert!(!attempts.is_empty() && attempts.len() <= 2, "{attempts:?}");
        match p.status {
            // Whatever the small model wrote that was kept runs on a fresh
            // store as the checks require: nothing is accepted unchecked.
            sparring::store::ProposalStatus::Valid => {
                let scenario: sparring::persona::Scenario =
                    serde_json::from_value(p.scenario.clone().unwrap()).unwrap();
                let brief = serde_json::from_value(p.brief.clone()).unwrap();
                sparring::synth::execute::validate(&environment, &scenario, &brief)
                    .await
                    .unwrap();
            }
            // A rejection names its stage and the exact reason, as the
            // report lists it.
            sparring::store::ProposalStatus::Rejected => {
                let stage = p.stage.as_deref().unwrap();
                assert!(!p.reason.as_deref().unwrap_or("").is_empty(), "{p:?}");
                assert!(stdout.contains(&format!("  {stage} ")), "{stage}: {stdout}");
            }
        }
    }
    println!("real-model synthesis:\n{stdout}");
}
