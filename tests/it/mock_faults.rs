//! The mock model server's knobs over real HTTP: latency, faults injected at a
//! rate (reproducibly, whoever asks), what each fault looks like to a client, and
//! the per-second request counts that tests use to check rate limits held.

use std::time::{Duration, Instant, SystemTime};

use crate::common;

use common::{endpoint_config, hello};
use sparring::config::{MockConfig, MockFault};
use sparring::llm::{ChatModel, Endpoint};
use sparring::mock_llm::{MockServer, MockStats};

fn always(fault: MockFault) -> MockConfig {
    MockConfig {
        fault_rate: 1.0,
        faults: vec![fault],
        ..MockConfig::default()
    }
}

fn latency(ms: u64) -> MockConfig {
    MockConfig {
        latency_ms: ms,
        ..MockConfig::default()
    }
}

fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

async fn post(client: &reqwest::Client, server: &MockServer, model: &str) -> reqwest::Response {
    let body = serde_json::json!({
        "model": model,
        "messages": [{"role": "user", "content": "hello"}]
    });
    client
        .post(format!("{}/chat/completions", server.base_url()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

/// What a plain HTTP client sees of one completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Completion,
    Status(u16),
    NotJson,
    CutOff,
}

async fn outcome(client: &reqwest::Client, server: &MockServer, model: &str) -> Outcome {
    let response = post(client, server, model).await;
    let status = response.status().as_u16();
    match response.bytes().await {
        Err(_) => Outcome::CutOff,
        Ok(_) if status != 200 => Outcome::Status(status),
        Ok(body) if serde_json::from_slice::<serde_json::Value>(&body).is_err() => Outcome::NotJson,
        Ok(_) => Outcome::Completion,
    }
}

fn endpoint(server: &MockServer, timeout: Duration) -> Endpoint {
    let config = {
        let mut endpoint = endpoint_config("faults", &server.base_url(), "mock-user");
        endpoint.settings.temperature = None;
        endpoint.settings.timeout_secs = timeout.as_secs_f64();
        endpoint
    };
    Endpoint::new(&config, &server.base_url()).unwrap()
}

#[tokio::test]
async fn every_completion_waits_the_latency_plus_at_most_the_jitter() {
    let server = common::mock(MockConfig {
        latency_ms: 300,
        latency_jitter_ms: 100,
        ..MockConfig::default()
    })
    .await;
    let client = http();
    for _ in 0..3 {
        let started = Instant::now();
        assert_eq!(
            outcome(&client, &server, "mock-user").await,
            Outcome::Completion
        );
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(300), "{took:?}");
        assert!(took < Duration::from_millis(400 + 500), "{took:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_requests_with_200ms_latency_wait_together_not_in_turn() {
    let server = std::sync::Arc::new(common::mock(latency(200)).await);
    let client = http();
    let started = Instant::now();
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let (client, server) = (client.clone(), server.clone());
            tokio::spawn(async move {
                let started = Instant::now();
                let got = outcome(&client, &server, "mock-user").await;
                (got, started.elapsed())
            })
        })
        .collect();
    for task in tasks {
        let (got, took) = task.await.unwrap();
        assert_eq!(got, Outcome::Completion);
        assert!(took >= Duration::from_millis(200), "{took:?}");
    }
    let took = started.elapsed();
    // In turn they would take 200 × 200 ms = 40 s.
    assert!(took < Duration::from_secs(3), "{took:?}");
    let stats = server.stats();
    assert_eq!(stats.requests, 200);
    assert_eq!(stats.max_in_any_window(60), 200);
}

#[tokio::test]
async fn each_fault_looks_on_the_wire_like_a_real_servers_failure() {
    let client = http();

    let server = common::mock(always(MockFault::RateLimited)).await;
    let response = post(&client, &server, "mock-user").await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "1");
    let body = json_body(response).await;
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");

    let server = common::mock(always(MockFault::ServerError)).await;
    let response = post(&client, &server, "mock-user").await;
    assert_eq!(response.status(), 500);
    let body = response.text().await.unwrap();
    assert!(body.starts_with("<html>"), "{body}");

    let server = common::mock(always(MockFault::Unavailable)).await;
    let response = post(&client, &server, "mock-user").await;
    assert_eq!(response.status(), 503);
    let body = json_body(response).await;
    assert_eq!(body["error"]["code"], "service_unavailable");

    let server = common::mock(always(MockFault::Malformed)).await;
    assert_eq!(
        outcome(&client, &server, "mock-user").await,
        Outcome::NotJson
    );

    let server = common::mock(always(MockFault::Truncated)).await;
    let mut response = post(&client, &server, "mock-user").await;
    assert_eq!(
        response.status(),
        200,
        "the status and headers arrive whole"
    );
    let declared = response.content_length().unwrap();
    let mut received = 0;
    let error = loop {
        match response.chunk().await {
            Ok(Some(chunk)) => received += chunk.len() as u64,
            Ok(None) => panic!("the body ended normally after {received} bytes"),
            Err(e) => break e,
        }
    };
    assert!(
        0 < received && received < declared,
        "{received} of {declared}"
    );
    assert!(error.is_decode() || error.is_body(), "{error:?}");
    let chain = error_chain(&error);
    assert!(
        chain.contains("end of file before message length reached"),
        "{chain}"
    );
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

async fn json_body(response: reqwest::Response) -> serde_json::Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

#[tokio::test]
async fn each_fault_reaches_the_client_as_its_error_class() {
    let cases = [
        (MockFault::RateLimited, "429", "rate_limited"),
        (MockFault::ServerError, "500", "server_error"),
        (MockFault::Unavailable, "503", "server_error"),
        (MockFault::Timeout, "timeout", "timeout"),
        (MockFault::Malformed, "malformed", "malformed_response"),
        // A body cut off mid-transfer is a transport failure, like a reset.
        (MockFault::Truncated, "truncated", "connection"),
    ];
    for (fault, name, class) in cases {
        let server = common::mock(always(fault)).await;
        let started = Instant::now();
        let error = endpoint(&server, Duration::from_millis(400))
            .complete(hello())
            .await
            .unwrap_err();
        assert_eq!(error.class(), class, "{name}: {error}");
        assert!(error.is_retryable(), "{name}: {error}");
        assert!(started.elapsed() < Duration::from_secs(3), "{name}");
        let stats = server.stats();
        assert_eq!(stats.requests, 1, "{name}: no retries were allowed");
        assert_eq!(stats.faults.get(name), Some(&1), "{name}");
    }
}

#[tokio::test]
async fn a_fault_rate_of_0_3_fails_about_30_percent_reproducibly_whoever_asks() {
    let config = MockConfig {
        fault_rate: 0.3,
        faults: vec![
            MockFault::RateLimited,
            MockFault::ServerError,
            MockFault::Unavailable,
            MockFault::Malformed,
            MockFault::Truncated,
        ],
        ..MockConfig::default()
    };
    const N: usize = 500;
    let client = http();
    let one_role = common::mock(config.clone()).await;
    let mut first = Vec::with_capacity(N);
    for _ in 0..N {
        first.push(outcome(&client, &one_role, "mock-user").await);
    }
    let roles = ["mock-policy", "mock-user", "mock-judge+perfect"];
    let all_roles = common::mock(config).await;
    let mut second = Vec::with_capacity(N);
    for i in 0..N {
        second.push(outcome(&client, &all_roles, roles[i % roles.len()]).await);
    }
    assert_eq!(
        first, second,
        "the n-th request gets the same fault, whichever role sends it"
    );

    let failed = first.iter().filter(|o| **o != Outcome::Completion).count();
    // Binomial(500, 0.3): mean 150, standard deviation √(500·0.3·0.7) ≈ 10.2.
    // The draws are fixed by the seed, so this never flakes; ±4σ (109..=191)
    // holds for all but ~1 in 15,000 seeds, and catches a wrong rate (0.2 or 0.4).
    assert!((109..=191).contains(&failed), "{failed} of {N} failed");
    let stats = one_role.stats();
    assert_eq!(stats.faults_injected(), failed as u64);
    assert_eq!(stats.faults, all_roles.stats().faults);
    for name in ["429", "500", "503", "malformed", "truncated"] {
        // Each kind's count is Binomial(500, 0.06): mean 30, σ ≈ 5.3.
        let n = stats.faults.get(name).copied().unwrap_or(0);
        assert!((9..=51).contains(&n), "{name}: {n}");
    }
    let seen = |o: Outcome| first.iter().filter(|x| **x == o).count() as u64;
    assert_eq!(seen(Outcome::Status(429)), stats.faults["429"]);
    assert_eq!(seen(Outcome::Status(500)), stats.faults["500"]);
    assert_eq!(seen(Outcome::Status(503)), stats.faults["503"]);
    assert_eq!(seen(Outcome::NotJson), stats.faults["malformed"]);
    assert_eq!(seen(Outcome::CutOff), stats.faults["truncated"]);
}

/// Sleep until `offset` past the next whole wall-clock second.
async fn sleep_into_next_second(offset: Duration) {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap();
    let into_second = Duration::from_nanos(u64::from(now.subsec_nanos()));
    tokio::time::sleep(Duration::from_secs(1) - into_second + offset).await;
}

#[tokio::test]
async fn requests_are_counted_per_wall_clock_second() {
    let server = common::mock(MockConfig::default()).await;
    let client = http();
    sleep_into_next_second(Duration::from_millis(20)).await;
    for _ in 0..5 {
        outcome(&client, &server, "mock-user").await;
    }
    sleep_into_next_second(Duration::from_millis(20)).await;
    for _ in 0..3 {
        outcome(&client, &server, "mock-judge").await;
    }

    let stats = server.stats();
    let buckets: Vec<(u64, u64)> = stats.per_second.iter().map(|(s, n)| (*s, *n)).collect();
    assert_eq!(buckets.len(), 2, "{buckets:?}");
    assert_eq!(buckets[1].0, buckets[0].0 + 1, "consecutive seconds");
    assert_eq!((buckets[0].1, buckets[1].1), (5, 3));
    assert_eq!(stats.max_in_any_window(1), 5);
    assert_eq!(stats.max_in_any_window(2), 8);
    assert_eq!(stats.max_in_any_window(60), 8);
    assert_eq!(stats.by_model["mock-user"], 5);
    assert_eq!(stats.by_model["mock-judge"], 3);

    let served: MockStats = serde_json::from_slice(
        &http()
            .get(format!("http://{}/mock/stats", server.addr()))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(served, stats, "/mock/stats serves the same counts as JSON");
}

#[tokio::test]
async fn model_name_modifiers_still_apply_under_latency() {
    let server = common::mock(latency(50)).await;
    let client = http();
    let model = "mock-user+ratelimit-once";
    assert_eq!(outcome(&client, &server, model).await, Outcome::Status(429));
    assert_eq!(outcome(&client, &server, model).await, Outcome::Completion);
    assert_eq!(
        outcome(&client, &server, "mock-user+malformed").await,
        Outcome::NotJson
    );
    assert!(
        server.stats().faults.is_empty(),
        "modifiers are not injected faults"
    );
}

#[test]
fn the_command_line_refuses_unknown_faults_and_lists_the_valid_ones() {
    let sparring = env!("CARGO_BIN_EXE_sparring");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(sparring)
            .arg("mock-llm")
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };

    let (code, stderr) = run(&["--fault-rate", "0.2", "--faults", "429,teapot"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("'teapot' is not a mock fault"), "{stderr}");
    assert!(
        stderr.contains("429, 500, 503, timeout, malformed, truncated"),
        "{stderr}"
    );

    let (code, stderr) = run(&["--fault-rate", "1.5", "--faults", "500"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("between 0 and 1"), "{stderr}");

    let (code, stderr) = run(&["--fault-rate", "0.2"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("needs --faults"), "{stderr}");
}
