//! The lean HTTP/1.1 client behind `http://` endpoints, against a scripted
//! server on a real socket: how responses are framed (length, chunks, close,
//! interim 1xx), keep-alive reuse, a pooled connection the server closed, and
//! bodies cut short or garbled. Each case goes through `Endpoint::complete`,
//! as the engine calls it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::common;

use common::{endpoint_config, hello};
use usersim::config::EndpointConfig;
use usersim::llm::{ChatModel, ChatRequest, Endpoint};

/// What the server does with one request.
#[derive(Clone)]
enum Answer {
    /// Write these bytes and keep the connection for the next request.
    Bytes(Vec<u8>),
    /// Write these bytes, then close the connection.
    BytesThenClose(Vec<u8>),
    /// Close the connection without a byte of answer.
    Close,
}

/// A request as the server read it.
#[derive(Debug, Clone)]
struct Received {
    connection: usize,
    head: String,
    body: String,
}

/// A server answering the n-th request it reads with the n-th answer (the
/// last one once the script runs out).
struct Scripted {
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
    connections: Arc<AtomicUsize>,
}

const COMPLETION: &str = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#;

fn ok_with_length() -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{COMPLETION}",
        COMPLETION.len()
    )
    .into_bytes()
}

/// Read one request (head and `Content-Length` body); `None` at the close.
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(String, String)> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end + 4]).to_string();
            let length: usize = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse().ok())?
                })
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                let mut more = [0u8; 4096];
                let n = stream.read(&mut more).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&more[..n]);
            }
            let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).to_string();
            buf.drain(..end + 4 + length);
            return Some((head, body));
        }
        let mut more = [0u8; 4096];
        let n = stream.read(&mut more).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&more[..n]);
    }
}

impl Scripted {
    async fn start(script: Vec<Answer>) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let next = Arc::new(AtomicUsize::new(0));
        let script = Arc::new(script);
        let (r, c) = (received.clone(), connections.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let connection = c.fetch_add(1, Ordering::SeqCst);
                let (received, next, script) = (r.clone(), next.clone(), script.clone());
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    while let Some((head, body)) = read_request(&mut stream, &mut buf).await {
                        received.lock().unwrap().push(Received {
                            connection,
                            head,
                            body,
                        });
                        let n = next.fetch_add(1, Ordering::SeqCst);
                        let answer = script[n.min(script.len() - 1)].clone();
                        match answer {
                            Answer::Bytes(bytes) => {
                                if stream.write_all(&bytes).await.is_err() {
                                    return;
                                }
                            }
                            Answer::BytesThenClose(bytes) => {
                                let _ = stream.write_all(&bytes).await;
                                return;
                            }
                            Answer::Close => return,
                        }
                    }
                });
            }
        });
        Scripted {
            url,
            received,
            connections,
        }
    }

    fn endpoint(&self, max_retries: u32) -> Endpoint {
        let config = EndpointConfig {
            max_retries,
            api_key: Some("sk-test".into()),
            max_in_flight: 64,
            ..endpoint_config("scripted", &self.url, "m")
        };
        let endpoint = Endpoint::new(&config, &self.url).unwrap();
        assert_eq!(
            endpoint.client(),
            "http1",
            "http:// goes through the lean client"
        );
        endpoint
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

fn with_scenario() -> ChatRequest {
    ChatRequest {
        scenario: Some("retail_001".into()),
        ..hello()
    }
}

#[tokio::test]
async fn a_request_is_a_well_formed_post_and_the_connection_carries_the_next_ones() {
    let server = Scripted::start(vec![Answer::Bytes(ok_with_length())]).await;
    let endpoint = server.endpoint(0);
    for _ in 0..3 {
        let response = endpoint.complete(with_scenario()).await.unwrap();
        assert_eq!(&*response.message.content, "Hello there");
        assert_eq!(response.usage.prompt_tokens, 5);
    }
    let received = server.received();
    assert_eq!(received.len(), 3);
    assert_eq!(
        server.connections(),
        1,
        "one keep-alive connection for all three"
    );
    let first = &received[0];
    assert!(
        first
            .head
            .starts_with("POST /v1/chat/completions HTTP/1.1\r\n"),
        "{}",
        first.head
    );
    let head = first.head.to_ascii_lowercase();
    assert!(
        head.contains(&format!(
            "\r\nhost: {}\r\n",
            &server.url[7..server.url.len() - 3]
        )),
        "{head}"
    );
    assert!(
        head.contains("\r\nauthorization: bearer sk-test\r\n"),
        "{head}"
    );
    assert!(
        head.contains("\r\ncontent-type: application/json\r\n"),
        "{head}"
    );
    assert!(
        head.contains("\r\nx-usersim-scenario: retail_001\r\n"),
        "{head}"
    );
    assert!(
        head.contains(&format!("\r\ncontent-length: {}\r\n", first.body.len())),
        "{head}"
    );
    let body: serde_json::Value = serde_json::from_str(&first.body).unwrap();
    assert_eq!(body["model"], "m");
    assert_eq!(body["messages"][1]["content"], "hello");
}

#[tokio::test]
async fn a_chunked_response_is_read_whole_and_the_connection_reused() {
    let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for piece in COMPLETION.as_bytes().chunks(17) {
        chunked.extend_from_slice(format!("{:x};ext=1\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\nX-Trailer: yes\r\n\r\n");
    let server = Scripted::start(vec![Answer::Bytes(chunked)]).await;
    let endpoint = server.endpoint(0);
    for _ in 0..2 {
        let response = endpoint.complete(hello()).await.unwrap();
        assert_eq!(&*response.message.content, "Hello there");
    }
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn a_response_without_a_length_is_read_to_the_close_and_its_connection_not_reused() {
    let close_delimited =
        format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{COMPLETION}");
    let server = Scripted::start(vec![Answer::BytesThenClose(close_delimited.into_bytes())]).await;
    let endpoint = server.endpoint(0);
    for _ in 0..2 {
        let response = endpoint.complete(hello()).await.unwrap();
        assert_eq!(&*response.message.content, "Hello there");
    }
    assert_eq!(server.connections(), 2, "a new connection after each close");
}

#[tokio::test]
async fn an_interim_100_continue_is_skipped_for_the_final_response() {
    let mut answer = b"HTTP/1.1 100 Continue\r\n\r\n".to_vec();
    answer.extend_from_slice(&ok_with_length());
    let server = Scripted::start(vec![Answer::Bytes(answer)]).await;
    let response = server.endpoint(0).complete(hello()).await.unwrap();
    assert_eq!(&*response.message.content, "Hello there");
}

#[tokio::test]
async fn a_pooled_connection_the_server_dropped_is_replaced_without_spending_a_retry() {
    // The second request arrives on the kept connection and the server closes
    // it unanswered, as a server whose idle timeout fired at that moment would.
    let server = Scripted::start(vec![
        Answer::Bytes(ok_with_length()),
        Answer::Close,
        Answer::Bytes(ok_with_length()),
    ])
    .await;
    let endpoint = server.endpoint(0);
    endpoint.complete(hello()).await.unwrap();
    let response = endpoint.complete(hello()).await;
    assert!(
        response.is_ok(),
        "max_retries = 0, so only a resend could answer: {response:?}"
    );
    let received = server.received();
    assert_eq!(received.len(), 3);
    assert_eq!(
        received[1].connection, 0,
        "sent on the kept connection first"
    );
    assert_eq!(received[2].connection, 1, "then once on a new one");
    assert_eq!(received[1].body, received[2].body, "the same request again");
}

#[tokio::test]
async fn a_new_connection_closed_unanswered_is_a_connection_error_not_resent() {
    let server = Scripted::start(vec![Answer::Close]).await;
    let error = server.endpoint(0).complete(hello()).await.unwrap_err();
    assert_eq!(error.class(), "connection", "{error}");
    assert!(error.to_string().contains("without answering"), "{error}");
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_body_cut_short_is_a_connection_error_and_retried() {
    let cut = b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"choices\":[".to_vec();
    let server = Scripted::start(vec![
        Answer::BytesThenClose(cut.clone()),
        Answer::Bytes(ok_with_length()),
    ])
    .await;
    let response = server.endpoint(1).complete(hello()).await.unwrap();
    assert_eq!(&*response.message.content, "Hello there");
    assert_eq!(server.received().len(), 2, "one retry");

    let server = Scripted::start(vec![Answer::BytesThenClose(cut)]).await;
    let error = server.endpoint(0).complete(hello()).await.unwrap_err();
    assert_eq!(error.class(), "connection", "{error}");
    let message = error.to_string();
    assert!(
        message.contains("before the response was complete"),
        "{message}"
    );
    assert!(
        message.contains("12 bytes of body received of 500"),
        "{message}"
    );
}

#[tokio::test]
async fn a_reply_that_is_not_http_is_a_malformed_response() {
    let server = Scripted::start(vec![Answer::BytesThenClose(
        b"220 smtp.example.com ESMTP ready\r\n\r\n".to_vec(),
    )])
    .await;
    let error = server.endpoint(0).complete(hello()).await.unwrap_err();
    assert_eq!(error.class(), "malformed_response", "{error}");
    assert!(
        error.to_string().contains("invalid HTTP response head"),
        "{error}"
    );
}

#[tokio::test]
async fn an_error_status_is_read_with_its_body_and_retry_after() {
    let error_body = r#"{"error":{"message":"slow down","code":"x"}}"#;
    let limited = format!(
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: {}\r\n\r\n{error_body}",
        error_body.len()
    )
    .into_bytes();
    let server = Scripted::start(vec![
        Answer::Bytes(limited),
        Answer::Bytes(ok_with_length()),
    ])
    .await;
    let endpoint = server.endpoint(0);
    let error = endpoint.complete(hello()).await.unwrap_err();
    assert_eq!(error.class(), "rate_limited", "{error}");
    assert!(error.to_string().contains("slow down"), "{error}");
    // The connection is kept after an error with a complete body.
    endpoint.complete(hello()).await.unwrap();
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    // Accept and hold the connection, reading nothing and answering nothing.
    let held = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        tokio::time::sleep(Duration::from_secs(10)).await;
        drop(stream);
    });
    let config = EndpointConfig {
        timeout: Duration::from_millis(200),
        ..endpoint_config("silent", &url, "m")
    };
    let error = Endpoint::new(&config, &url)
        .unwrap()
        .complete(hello())
        .await
        .unwrap_err();
    assert_eq!(error.class(), "timeout", "{error}");
    held.abort();
}

#[tokio::test]
async fn concurrent_calls_open_a_connection_each_and_reuse_them_afterwards() {
    let server = Scripted::start(vec![Answer::Bytes(ok_with_length())]).await;
    let endpoint = server.endpoint(0);
    for _ in 0..3 {
        let calls = (0..16).map(|_| endpoint.complete(hello()));
        for response in futures_util::future::join_all(calls).await {
            response.unwrap();
        }
    }
    assert_eq!(server.received().len(), 48);
    assert!(
        server.connections() <= 16,
        "{} connections for 16 calls at a time",
        server.connections()
    );
}
