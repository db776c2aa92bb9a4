//! An endpoint's limits over real HTTP to the mock model server: requests per
//! minute paced evenly, tokens per minute held in what the server reports,
//! requests that can never fit refused at once, endpoints independent of each
//! other, and a 429 pausing the whole endpoint instead of burning retries.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common;

use common::{endpoint_config, hello};
use sparring::config::{EndpointConfig, MockConfig};
use sparring::llm::message::Message;
use sparring::llm::{ChatModel, ChatRequest, Endpoint};
use sparring::mock_llm::MockServer;

fn config(server: &MockServer, name: &str, model: &str) -> EndpointConfig {
    let mut endpoint = endpoint_config(name, &server.base_url(), model);
    endpoint.settings.max_in_flight = 16;
    endpoint.settings.max_retries = 1;
    endpoint
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
    let shared = endpoint(&server, {
        let mut endpoint = config(&server, "shared", "mock-user");
        endpoint.settings.requests_per_minute = Some(150);
        endpoint
    });
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

/// `n` callers at once, each making one call, for at most `span`: how many
/// finished by then. The rest are dropped unsent or in flight.
async fn calls_finished_within(endpoint: &Arc<Endpoint>, n: usize, span: Duration) -> u64 {
    let finished = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..n {
        let (endpoint, finished) = (endpoint.clone(), finished.clone());
        tasks.spawn(async move {
            endpoint.complete(hello()).await.unwrap();
            finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        });
    }
    let _ = tokio::time::timeout(span, async { while tasks.join_next().await.is_some() {} }).await;
    tasks.abort_all();
    finished.load(std::sync::atomic::Ordering::Relaxed)
}

/// A tpm limit of 2,000 with callers that want far more: what the mock
/// reported in the first seconds stays within the limit and uses nearly all of
/// it, whether the server reports about what the request's size suggests,
/// three times that, or a quarter of it.
#[tokio::test]
async fn tpm_is_held_in_the_tokens_the_server_reports_and_nearly_all_of_it_is_used() {
    for model in ["mock-user", "mock-user+overreport", "mock-user+underreport"] {
        let server = common::mock(MockConfig::default()).await;
        let limited = endpoint(&server, {
            let mut endpoint = config(&server, "tokens", model);
            endpoint.settings.tokens_per_minute = Some(2000);
            endpoint
        });
        let finished = calls_finished_within(&limited, 1000, Duration::from_secs(3)).await;
        let stats = server.stats();
        let reported = stats.tokens();
        assert!(
            stats.max_tokens_in_any_window(60) <= 2000,
            "{model}: {} tokens reported in one minute",
            stats.max_tokens_in_any_window(60)
        );
        assert!(
            reported >= 1800,
            "{model}: only {reported} of 2000 tokens used in {finished} calls"
        );
        assert!(finished < 1000, "{model}: the limit held some back");
        let limits = limited.limit_stats();
        assert_eq!(limits.reported_tokens, reported, "{model}");
        // The byte bound would have let through at most 2000 / 470 requests.
        let bound = limited.estimate_tokens(&hello());
        assert!(bound < 100, "{model}: calibrated estimate {bound}");
        assert!(finished > 2000 / 470 * 5, "{model}: {finished} calls");
    }
}

/// The server announces a limit of 2,000 a minute in its headers while the
/// config says 6,000: sparring holds back what the server says is used, so
/// about 2,000 go through in the first seconds, not 6,000.
#[tokio::test]
async fn a_server_announcing_less_left_than_the_config_allows_is_believed() {
    let server = common::mock(MockConfig {
        announced_tokens_per_minute: Some(2000),
        ..MockConfig::default()
    })
    .await;
    let limited = endpoint(&server, {
        let mut endpoint = config(&server, "announced", "mock-user");
        endpoint.settings.tokens_per_minute = Some(6000);
        endpoint
    });
    let finished = calls_finished_within(&limited, 1000, Duration::from_secs(3)).await;
    let reported = server.stats().tokens();
    // Replies in flight when a reading arrives are not in it yet: at most
    // 16 in flight, about 20 tokens each.
    assert!(
        reported <= 2000 + 16 * 40,
        "{reported} tokens in {finished} calls: the headers were not heeded"
    );
    assert!(reported >= 1500, "{reported} tokens in {finished} calls");
}

#[tokio::test]
async fn a_request_larger_than_the_limit_runs_alone_before_calibration_and_fails_after() {
    let server = common::mock(MockConfig::default()).await;
    let limited = endpoint(&server, {
        let mut endpoint = config(&server, "small", "mock-user");
        endpoint.settings.tokens_per_minute = Some(2000);
        endpoint
    });
    // 5,000 bytes, first counted at 5,000 + 256 + 64: above the whole limit,
    // so it waits for an empty window and runs alone; the mock reports ~1,270.
    let big = |bytes: usize| ChatRequest {
        messages: vec![Message::user("x".repeat(bytes))],
        ..ChatRequest::default()
    };
    limited.complete(big(5000)).await.unwrap();
    for _ in 0..4 {
        limited.complete(hello()).await.unwrap();
    }
    // Calibrated now: 40,000 bytes are about 11,000 tokens, never within 2,000.
    let started = Instant::now();
    let error = limited.complete(big(40_000)).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1), "no hang");
    assert_eq!(error.class(), "exceeds_token_limit", "{error}");
    assert!(!error.is_retryable());
    let message = error.to_string();
    assert!(message.contains("tokens_per_minute = 2000"), "{message}");
    assert!(message.contains("at most 2000"), "{message}");
    assert_eq!(server.stats().requests, 5, "never sent");
    assert!(server.stats().max_tokens_in_any_window(60) <= 2000);

    // A limit too small for even an empty request is refused up front.
    let too_small = {
        let mut endpoint = config(&server, "tiny", "mock-user");
        endpoint.settings.tokens_per_minute = Some(300);
        endpoint
    };
    let error = Endpoint::new(&too_small, &server.base_url()).err().unwrap();
    assert_eq!(error.class(), "exceeds_token_limit", "{error}");
}

#[tokio::test]
async fn two_endpoints_with_different_limits_do_not_slow_each_other() {
    let server = common::mock(MockConfig::default()).await;
    let slow = endpoint(&server, {
        let mut endpoint = config(&server, "slow", "mock-user");
        endpoint.settings.requests_per_minute = Some(60);
        endpoint
    });
    let fast = endpoint(&server, {
        let mut endpoint = config(&server, "fast", "mock-policy");
        endpoint.settings.requests_per_minute = Some(600);
        endpoint
    });
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
    let paced = endpoint(&server, {
        let mut endpoint = config(&server, "paced", "mock-user");
        endpoint.settings.requests_per_minute = Some(60);
        endpoint
    });
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
    let shared = endpoint(&server, {
        let mut endpoint = config(&server, "queue", model);
        endpoint.settings.max_in_flight = 1;
        endpoint
    });
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
    use sparring::config::MockFault;
    let server = common::mock(MockConfig {
        fault_rate: 0.3,
        faults: vec![MockFault::RateLimited, MockFault::ServerError],
        ..MockConfig::default()
    })
    .await;
    let flaky = endpoint(&server, {
        let mut endpoint = config(&server, "flaky", "mock-user");
        endpoint.settings.requests_per_minute = Some(240);
        endpoint.settings.max_retries = 8;
        endpoint
    });
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
