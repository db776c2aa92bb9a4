//! `llm::Endpoint` against the mock model server over real HTTP: exactly one
//! retry policy, Retry-After honoured, permanent errors not retried.

use std::time::{Duration, Instant};

use crate::common;

use common::{endpoint_config, hello};
use sparring::llm::{ChatModel, Endpoint};
use sparring::mock_llm::MockServer;

fn endpoint(server: &MockServer, model: &str, max_retries: u32) -> Endpoint {
    let config = {
        let mut endpoint = endpoint_config("test", &server.base_url(), model);
        endpoint.settings.max_retries = max_retries;
        endpoint
    };
    Endpoint::new(&config, &server.base_url()).unwrap()
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_exactly_once_after_the_wait() {
    let server = common::mock(sparring::config::MockConfig::default()).await;
    let model = "mock-user+ratelimit-once";
    let started = Instant::now();
    let response = endpoint(&server, model, 4).complete(hello()).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After: 1 honoured"
    );
    assert!(!response.message.content.is_empty());
    assert_eq!(
        server.stats().by_model.get(model),
        Some(&2),
        "one retry, no double retrying"
    );
}

#[tokio::test]
async fn a_500_with_a_non_json_body_is_retried_and_then_succeeds() {
    let server = common::mock(sparring::config::MockConfig::default()).await;
    let model = "mock-user+error500-once";
    let response = endpoint(&server, model, 4).complete(hello()).await.unwrap();
    assert!(
        response.usage.prompt_tokens > 0,
        "usage is read from the server"
    );
    assert_eq!(server.stats().by_model.get(model), Some(&2));
}

#[tokio::test]
async fn an_unknown_model_is_a_permanent_error_and_is_not_retried() {
    let server = common::mock(sparring::config::MockConfig::default()).await;
    let error = endpoint(&server, "gpt-nonexistent", 4)
        .complete(hello())
        .await
        .unwrap_err();
    assert_eq!(error.class(), "rejected");
    assert!(error.to_string().contains("404"), "{error}");
    // The server's error code, never the text of its reply.
    assert!(error.to_string().ends_with("model_not_found"), "{error}");
    assert!(!error.to_string().contains("does not exist"), "{error}");
    assert_eq!(server.stats().requests, 1);
}

#[tokio::test]
async fn malformed_bodies_are_retried_up_to_the_limit_then_reported() {
    let server = common::mock(sparring::config::MockConfig::default()).await;
    let model = "mock-user+malformed";
    let error = endpoint(&server, model, 2)
        .complete(hello())
        .await
        .unwrap_err();
    assert_eq!(error.class(), "malformed_response");
    assert_eq!(
        server.stats().by_model.get(model),
        Some(&3),
        "first try + 2 retries"
    );
}

#[tokio::test]
async fn a_refused_connection_is_a_connection_error() {
    let server = common::mock(sparring::config::MockConfig::default()).await;
    let ep = endpoint(&server, "mock-user", 0);
    drop(server);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let error = ep.complete(hello()).await.unwrap_err();
    assert_eq!(error.class(), "connection", "{error}");
}

#[tokio::test]
async fn a_server_slower_than_the_timeout_is_a_retried_timeout() {
    let server = common::mock(sparring::config::MockConfig::default()).await;
    let config = {
        let mut endpoint = endpoint_config("slow", &server.base_url(), "mock-user+slow");
        endpoint.settings.timeout_secs = Duration::from_millis(300).as_secs_f64();
        endpoint.settings.max_in_flight = 1;
        endpoint.settings.max_retries = 1;
        endpoint
    };
    let error = Endpoint::new(&config, &server.base_url())
        .unwrap()
        .complete(hello())
        .await
        .unwrap_err();
    assert_eq!(error.class(), "timeout", "{error}");
    assert_eq!(
        server.stats().by_model.get("mock-user+slow"),
        Some(&2),
        "timeouts are retried"
    );
}

#[tokio::test]
async fn an_http2_endpoint_sends_every_call_over_http2_and_a_default_one_over_http1() {
    let server = common::mock(sparring::config::MockConfig::default()).await;
    let h2 = Endpoint::new(
        &{
            let mut endpoint = endpoint_config("h2", &server.base_url(), "mock-user");
            endpoint.settings.http2 = true;
            endpoint
        },
        &server.base_url(),
    )
    .unwrap();
    let calls = (0..20).map(|_| h2.complete(hello()));
    for response in futures_util::future::join_all(calls).await {
        assert!(!response.unwrap().message.content.is_empty());
    }
    endpoint(&server, "mock-user", 0)
        .complete(hello())
        .await
        .unwrap();
    let versions = server.stats().by_http_version;
    assert_eq!(versions.get("HTTP/2.0"), Some(&20), "{versions:?}");
    assert_eq!(versions.get("HTTP/1.1"), Some(&1), "{versions:?}");
}

#[tokio::test]
async fn an_error_read_over_http2_is_classified_as_over_http1() {
    let server = common::mock(sparring::config::MockConfig::default()).await;
    let config = {
        let mut endpoint = endpoint_config("h2", &server.base_url(), "mock-user+error500-once");
        endpoint.settings.http2 = true;
        endpoint.settings.max_retries = 0;
        endpoint
    };
    let endpoint = Endpoint::new(&config, &server.base_url()).unwrap();
    let response = endpoint.complete(hello()).await.unwrap_err();
    assert_eq!(
        response.class(),
        "server_error",
        "a 500 is read over HTTP/2 too"
    );
}
