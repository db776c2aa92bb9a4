//! An endpoint's limits over real HTTP to the mock model server: requests per
//! minute paced evenly, tokens per minute paced after a burst of half the limit,
//! requests that can never fit refused at once, endpoints independent of each
//! other, and a 429 pausing the whole endpoint instead of burning retries.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common;

use common::{endpoint_config, hello};
use usersim::config::{EndpointConfig, MockConfig};
use usersim::llm::message::Message;
use usersim::llm::{ChatModel, ChatRequest, Endpoint};
use usersim::mock_llm::MockServer;

fn config(server: &MockServer, name: &str, model: &str) -> EndpointConfig {
    EndpointConfig {
        max_in_flight: 16,
        max_retries: 1,
        ..endpoint_config(name, &server.base_url(), model)
    }
}

fn endpoint(server: &MockServer, config: EndpointConfig) -> Arc<Endpoint> {
    Arc::new(Endpoint::new(&config, &server.base_url()).unwrap())
}

/// `n` callers at once, as fast as they can; when each finished, since `start`, in order.
async fn call_at_once(endpoint: &Arc<Endpoint>, n: usize, start: Instant) -> Vec<Duration> {
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..n {
        let endpoint = endpoint.clone();
        tasks.spawn(async move {
            endpoint.complete(hello()).await.unwrap();
            start.elapsed()
        });
    }
    let mut done = tasks.join_all().await;
    done.sort();
    done
}

#[tokio::test]
async fn callers_sharing_an_endpoint_are_paced_evenly_by_its_rpm() {
    let server = common::mock(MockConfig::default()).await;
    let shared = endpoint(
        &server,
        EndpointConfig {
            requests_per_minute: Some(150),
            ..config(&server, "shared", "mock-user")
        },
    );
    let start = Instant::now();
    let done = call_at_once(&shared, 13, start).await;

    // One request every 60 s / 150 = 0.4 s, no burst: the 13th goes at 4.8 s.
    let elapsed = start.elapsed();
    assert!(elapsed >= Duration::from_millis(4800), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(6300), "{elapsed:?}");
    assert!(done[1] >= Duration::from_millis(400), "no burst: {done:?}");
    let stats = server.stats();
    assert_eq!(stats.requests, 13);
    assert!(
        stats.max_in_any_window(1) <= 3,
        "at most ⌈150/60⌉ = 3 in any second the server saw: {:?}",
        stats.per_second
    );
    let limits = shared.limit_stats();
    assert_eq!(limits.requests, 13);
    // The 13 waits were 0, 0.4, ..., 4.8 s: 31.2 s in all.
    assert!(limits.waited >= Duration::from_secs(30), "{limits:?}");
    assert_eq!(limits.paused, Duration::ZERO);
}

#[tokio::test]
async fn tpm_lets_half_the_limit_through_at_once_then_paces_the_rest() {
    let server = common::mock(MockConfig::default()).await;
    let probe = endpoint(&server, config(&server, "probe", "mock-user"));
    let estimate = probe.estimate_tokens(&hello());
    // Half of 60 estimates at once (30 requests), then 30·estimate + 1 tokens
    // per minute: a request every ~2 s.
    let tpm = 60 * estimate;
    let limited = endpoint(
        &server,
        EndpointConfig {
            tokens_per_minute: Some(tpm as u32),
            ..config(&server, "tokens", "mock-user")
        },
    );
    let period_ns = 60_000_000_000 / (tpm - tpm / 2 + 1) + 1;
    let at = |requests_after_the_burst: u64| {
        Duration::from_nanos(requests_after_the_burst * estimate * period_ns)
    };
    let start = Instant::now();
    let done = call_at_once(&limited, 32, start).await;

    assert!(done[29] < Duration::from_secs(1), "the burst: {done:?}");
    assert!(
        done[30] >= at(1),
        "31st at {:?}, not before {:?}",
        done[30],
        at(1)
    );
    assert!(
        done[31] >= at(2),
        "32nd at {:?}, not before {:?}",
        done[31],
        at(2)
    );
    assert!(done[31] < at(2) + Duration::from_millis(1500), "{done:?}");
    let limits = limited.limit_stats();
    assert_eq!(limits.requests, 32);
    assert_eq!(
        limits.estimated_tokens,
        32 * estimate,
        "each request charged what estimate_tokens said"
    );
    assert!(limits.estimated_tokens <= tpm, "all within one minute");
    assert_eq!(server.stats().requests, 32);
}

#[tokio::test]
async fn a_request_that_can_never_fit_the_tpm_limit_fails_at_once_unsent() {
    let server = common::mock(MockConfig::default()).await;
    let limited = endpoint(
        &server,
        EndpointConfig {
            tokens_per_minute: Some(2000),
            ..config(&server, "small", "mock-user")
        },
    );
    let big = ChatRequest {
        messages: vec![Message::user("x".repeat(5000))],
        ..ChatRequest::default()
    };
    let started = Instant::now();
    let error = limited.complete(big).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1), "no hang");
    assert_eq!(error.class(), "exceeds_token_limit", "{error}");
    assert!(!error.is_retryable());
    let message = error.to_string();
    assert!(message.contains("tokens_per_minute = 2000"), "{message}");
    assert!(message.contains("at most 1000"), "{message}");
    assert_eq!(server.stats().requests, 0, "never sent");
    // The limiter is not stuck: a small request still goes.
    limited.complete(hello()).await.unwrap();

    // A limit too small for even an empty request is refused up front.
    let too_small = EndpointConfig {
        tokens_per_minute: Some(600),
        ..config(&server, "tiny", "mock-user")
    };
    let error = Endpoint::new(&too_small, &server.base_url()).err().unwrap();
    assert_eq!(error.class(), "exceeds_token_limit", "{error}");
}

#[tokio::test]
async fn two_endpoints_with_different_limits_do_not_slow_each_other() {
    let server = common::mock(MockConfig::default()).await;
    let slow = endpoint(
        &server,
        EndpointConfig {
            requests_per_minute: Some(60),
            ..config(&server, "slow", "mock-user")
        },
    );
    let fast = endpoint(
        &server,
        EndpointConfig {
            requests_per_minute: Some(600),
            ..config(&server, "fast", "mock-policy")
        },
    );
    let start = Instant::now();
    let (slow_done, fast_done) = tokio::join!(
        call_at_once(&slow, 4, start),
        call_at_once(&fast, 21, start)
    );
    // slow: one a second, the 4th at 3 s; fast: one every 0.1 s, the 21st at 2 s.
    assert!(slow_done[3] >= Duration::from_secs(3), "{slow_done:?}");
    assert!(fast_done[20] >= Duration::from_secs(2), "{fast_done:?}");
    assert!(
        fast_done[20] < Duration::from_millis(2900),
        "the fast endpoint finished before the slow one: {fast_done:?}"
    );
    let by_model = server.stats().by_model;
    assert_eq!(by_model.get("mock-user"), Some(&4));
    assert_eq!(by_model.get("mock-policy"), Some(&21));
}

#[tokio::test]
async fn latency_leaves_out_the_wait_for_the_rate_limit() {
    let server = common::mock(MockConfig::default()).await;
    let paced = endpoint(
        &server,
        EndpointConfig {
            requests_per_minute: Some(60),
            ..config(&server, "paced", "mock-user")
        },
    );
    paced.complete(hello()).await.unwrap();
    let started = Instant::now();
    let second = paced.complete(hello()).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(900), "it waited");
    assert!(second.latency_ms < 500, "latency {} ms", second.latency_ms);
}

#[tokio::test]
async fn a_429_pauses_the_endpoint_and_the_other_callers_wait_without_spending_retries() {
    let server = common::mock(MockConfig::default()).await;
    let model = "mock-user+ratelimit-once";
    // One retry each: enough for the caller that gets the 429, none to spare.
    let shared = endpoint(&server, config(&server, "storm", model));
    let first = {
        let shared = shared.clone();
        tokio::spawn(async move { shared.complete(hello()).await })
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    let left = loop {
        if let Some(left) = shared.paused_for() {
            break left;
        }
        assert!(
            Instant::now() < deadline,
            "the 429 never paused the endpoint"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert!(
        left > Duration::from_millis(800),
        "Retry-After: 1 → {left:?}"
    );
    let paused_at = Instant::now();
    let others = call_at_once(&shared, 7, paused_at).await;
    first.await.unwrap().unwrap();

    assert!(
        others[0] >= left - Duration::from_millis(20),
        "every other caller waited out the pause ({left:?}) before sending: {others:?}"
    );
    assert_eq!(
        server.stats().by_model.get(model),
        Some(&(8 + 1)),
        "one 429, then each of the 8 callers sent once"
    );
    let limits = shared.limit_stats();
    assert!(
        limits.paused >= 7 * (left - Duration::from_millis(20)),
        "{limits:?}"
    );
}

#[tokio::test]
async fn a_429_to_one_of_many_queued_callers_holds_back_all_of_them() {
    let server = common::mock(MockConfig::default()).await;
    let model = "mock-user+ratelimit-once";
    // One request in flight at a time: the others queue behind the first,
    // which gets the 429, and must not go before its pause ends.
    let shared = endpoint(
        &server,
        EndpointConfig {
            max_in_flight: 1,
            ..config(&server, "queue", model)
        },
    );
    let start = Instant::now();
    let done = call_at_once(&shared, 6, start).await;
    assert!(
        done[0] >= Duration::from_millis(950),
        "nobody went before the pause ended: {done:?}"
    );
    assert!(done[5] < Duration::from_secs(3), "{done:?}");
    assert_eq!(server.stats().by_model.get(model), Some(&(6 + 1)));
}

#[tokio::test]
async fn the_rpm_limit_holds_under_injected_429s_and_500s_as_counted_by_the_mock() {
    use usersim::config::MockFault;
    let server = common::mock(MockConfig {
        fault_rate: 0.3,
        faults: vec![MockFault::RateLimited, MockFault::ServerError],
        ..MockConfig::default()
    })
    .await;
    let flaky = endpoint(
        &server,
        EndpointConfig {
            requests_per_minute: Some(240),
            max_retries: 8,
            ..config(&server, "flaky", "mock-user")
        },
    );
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let flaky = flaky.clone();
        tasks.spawn(async move { flaky.complete(hello()).await.is_ok() });
    }
    let succeeded = tasks.join_all().await.iter().filter(|ok| **ok).count();
    let elapsed = start.elapsed();
    let stats = server.stats();
    assert_eq!(
        succeeded, 16,
        "retries carried every call through the faults"
    );
    assert!(
        stats.faults_injected() >= 3,
        "faults were injected: {:?}",
        stats.faults
    );
    assert!(stats.requests > 16, "failed attempts were retried");
    // 240 rpm is one request every 250 ms: retries go through the same pacing.
    assert!(
        elapsed >= Duration::from_millis(250) * (stats.requests as u32 - 1),
        "{} requests in {elapsed:?}",
        stats.requests
    );
    for (second, n) in &stats.per_second {
        assert!(
            *n <= 5,
            "second {second} saw {n} requests: {:?}",
            stats.per_second
        );
    }
    assert!(stats.max_in_any_window(60) <= 240);
}
