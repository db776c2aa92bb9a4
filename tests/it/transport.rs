//! Both clients of `llm::transport` against one scripted server on a real
//! socket: the lean HTTP/1.1 client (`http://`) and async-openai's
//! (`https://`, the server then speaking TLS with a self-signed certificate
//! the endpoint trusts through `ca_pem`). Every case runs on both paths, so
//! they behave alike: how responses are framed (length, chunks, close,
//! interim 1xx), keep-alive reuse, a connection closed unanswered (resent
//! once by `llm::retry`), bodies cut short, garbled or too large. Each case
//! goes through `Endpoint::complete`, as the engine calls it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::common;

use common::{endpoint_config, hello};
use sparring::config::{AzureDeployment, EndpointConfig};
use sparring::llm::{ChatModel, ChatRequest, Endpoint};

/// Which client a case runs on.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Path {
    /// `http://`: the lean HTTP/1.1 client.
    Http1,
    /// `https://`: async-openai's client over TLS.
    Https,
}

/// Run a case once per path: `mod NAME { http1, https }`.
macro_rules! on_both_paths {
    ($($case:ident),* $(,)?) => {$(
        mod $case {
            #[tokio::test]
            async fn http1() {
                super::$case(super::Path::Http1).await
            }
            #[tokio::test]
            async fn https() {
                super::$case(super::Path::Https).await
            }
        }
    )*};
}

on_both_paths!(
    a_request_is_a_well_formed_post_and_the_connection_carries_the_next_ones,
    a_chunked_response_is_read_whole_and_the_connection_reused,
    a_response_without_a_length_is_read_to_the_close_and_its_connection_not_reused,
    an_interim_100_continue_is_skipped_for_the_final_response,
    a_pooled_connection_the_server_dropped_is_resent_once_without_spending_a_retry,
    a_connection_closed_unanswered_twice_is_a_connection_error,
    a_body_cut_short_is_a_connection_error_and_retried,
    a_reply_that_is_not_http_is_a_malformed_response,
    an_error_status_is_read_with_its_body_and_retry_after,
    a_body_larger_than_the_cap_is_refused_unread,
    a_server_that_never_answers_times_out,
    concurrent_calls_open_a_connection_each_and_reuse_them_afterwards,
    a_redirect_is_an_error_and_is_not_followed,
    a_responses_api_endpoint_posts_to_responses_and_reads_its_reply,
);

/// A self-signed certificate for 127.0.0.1: the server's TLS config and the
/// PEM text a client must trust.
struct Certificate {
    tls: Arc<rustls::ServerConfig>,
    pem: String,
}

fn certificate() -> Certificate {
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(signing_key.serialize_der().into());
    let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert.der().clone()], key)
    .unwrap();
    Certificate {
        tls: Arc::new(tls),
        pem: cert.pem(),
    }
}

/// An endpoint of `path` to `url`, trusting `pem` when it is https.
fn endpoint_on(config: EndpointConfig, url: &str, path: Path, pem: Option<&str>) -> Endpoint {
    let mut config = config;
    config.ca_pem = pem.map(str::to_string);
    let endpoint = Endpoint::new(&config, url).unwrap();
    let expected = match path {
        Path::Http1 => "http1",
        Path::Https => "async-openai",
    };
    assert_eq!(endpoint.client(), expected, "{url}");
    endpoint
}

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
/// last one once the script runs out), over TLS on the https path.
struct Scripted {
    path: Path,
    url: String,
    pem: Option<String>,
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
async fn read_request<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
) -> Option<(String, String)> {
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

/// Answer the requests of one connection from the script.
async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    connection: usize,
    received: Arc<Mutex<Vec<Received>>>,
    next: Arc<AtomicUsize>,
    script: Arc<Vec<Answer>>,
) {
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
                if stream.write_all(&bytes).await.is_err() || stream.flush().await.is_err() {
                    return;
                }
            }
            Answer::BytesThenClose(bytes) => {
                let _ = stream.write_all(&bytes).await;
                let _ = stream.shutdown().await;
                return;
            }
            Answer::Close => {
                // A TLS close_notify is not an answer; the socket closes.
                let _ = stream.shutdown().await;
                return;
            }
        }
    }
}

impl Scripted {
    async fn start(path: Path, script: Vec<Answer>) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (url, tls, pem) = match path {
            Path::Http1 => (format!("http://{address}/v1"), None, None),
            Path::Https => {
                let certificate = certificate();
                (
                    format!("https://{address}/v1"),
                    Some(tokio_rustls::TlsAcceptor::from(certificate.tls)),
                    Some(certificate.pem),
                )
            }
        };
        let received = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let next = Arc::new(AtomicUsize::new(0));
        let script = Arc::new(script);
        let (r, c) = (received.clone(), connections.clone());
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let connection = c.fetch_add(1, Ordering::SeqCst);
                let (received, next, script) = (r.clone(), next.clone(), script.clone());
                let tls = tls.clone();
                tokio::spawn(async move {
                    match tls {
                        None => serve(stream, connection, received, next, script).await,
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(stream).await {
                                serve(stream, connection, received, next, script).await
                            }
                        }
                    }
                });
            }
        });
        Scripted {
            path,
            url,
            pem,
            received,
            connections,
        }
    }

    fn endpoint(&self, max_retries: u32) -> Endpoint {
        let config = {
            let mut endpoint = endpoint_config("scripted", &self.url, "m");
            endpoint.settings.max_retries = max_retries;
            endpoint.api_key = Some("sk-test".into());
            endpoint.settings.max_in_flight = 64;
            endpoint
        };
        endpoint_on(config, &self.url, self.path, self.pem.as_deref())
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// A redirect would resend the prompt (and key) to wherever it points, past
/// the service's egress allowlist: it is the endpoint's error, not followed.
async fn a_redirect_is_an_error_and_is_not_followed(path: Path) {
    let elsewhere = Scripted::start(Path::Http1, vec![Answer::Bytes(ok_with_length())]).await;
    let redirect = format!(
        "HTTP/1.1 307 Temporary Redirect\r\nLocation: {}/chat/completions\r\n\
         Content-Length: 0\r\n\r\n",
        elsewhere.url
    );
    let server = Scripted::start(path, vec![Answer::Bytes(redirect.into_bytes())]).await;
    let error = server
        .endpoint(0)
        .complete(with_scenario())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("307"), "{error}");
    assert_eq!(server.received().len(), 1);
    assert_eq!(elsewhere.received().len(), 0, "the redirect was followed");
}

fn with_scenario() -> ChatRequest {
    ChatRequest {
        scenario: Some("retail_001".into()),
        ..hello()
    }
}

async fn a_request_is_a_well_formed_post_and_the_connection_carries_the_next_ones(path: Path) {
    let server = Scripted::start(path, vec![Answer::Bytes(ok_with_length())]).await;
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
    let authority = server
        .url
        .split("//")
        .nth(1)
        .unwrap()
        .trim_end_matches("/v1");
    assert!(
        head.contains(&format!("\r\nhost: {authority}\r\n")),
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
        head.contains("\r\nx-sparring-scenario: retail_001\r\n"),
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

async fn a_chunked_response_is_read_whole_and_the_connection_reused(path: Path) {
    let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for piece in COMPLETION.as_bytes().chunks(17) {
        chunked.extend_from_slice(format!("{:x};ext=1\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\nX-Trailer: yes\r\n\r\n");
    let server = Scripted::start(path, vec![Answer::Bytes(chunked)]).await;
    let endpoint = server.endpoint(0);
    for _ in 0..2 {
        let response = endpoint.complete(hello()).await.unwrap();
        assert_eq!(&*response.message.content, "Hello there");
    }
    assert_eq!(server.connections(), 1);
}

async fn a_response_without_a_length_is_read_to_the_close_and_its_connection_not_reused(
    path: Path,
) {
    let close_delimited =
        format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{COMPLETION}");
    let server = Scripted::start(
        path,
        vec![Answer::BytesThenClose(close_delimited.into_bytes())],
    )
    .await;
    let endpoint = server.endpoint(0);
    for _ in 0..2 {
        let response = endpoint.complete(hello()).await.unwrap();
        assert_eq!(&*response.message.content, "Hello there");
    }
    assert_eq!(server.connections(), 2, "a new connection after each close");
}

async fn an_interim_100_continue_is_skipped_for_the_final_response(path: Path) {
    let mut answer = b"HTTP/1.1 100 Continue\r\n\r\n".to_vec();
    answer.extend_from_slice(&ok_with_length());
    let server = Scripted::start(path, vec![Answer::Bytes(answer)]).await;
    let response = server.endpoint(0).complete(hello()).await.unwrap();
    assert_eq!(&*response.message.content, "Hello there");
}

async fn a_pooled_connection_the_server_dropped_is_resent_once_without_spending_a_retry(
    path: Path,
) {
    // The second request arrives on the kept connection and the server closes
    // it unanswered, as a server whose idle timeout fired at that moment would.
    let server = Scripted::start(
        path,
        vec![
            Answer::Bytes(ok_with_length()),
            Answer::Close,
            Answer::Bytes(ok_with_length()),
        ],
    )
    .await;
    let endpoint = server.endpoint(0);
    endpoint.complete(hello()).await.unwrap();
    let response = endpoint.complete(hello()).await;
    assert!(
        response.is_ok(),
        "max_retries = 0, so only the resend could answer: {response:?}"
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

async fn a_connection_closed_unanswered_twice_is_a_connection_error(path: Path) {
    let server = Scripted::start(path, vec![Answer::Close]).await;
    let error = server.endpoint(0).complete(hello()).await.unwrap_err();
    assert_eq!(error.class(), "connection", "{error}");
    assert!(error.to_string().contains("without answering"), "{error}");
    assert_eq!(
        server.received().len(),
        2,
        "sent, resent once by llm::retry, and no retry (max_retries = 0)"
    );
}

async fn a_body_cut_short_is_a_connection_error_and_retried(path: Path) {
    let cut = b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"choices\":[".to_vec();
    let server = Scripted::start(
        path,
        vec![
            Answer::BytesThenClose(cut.clone()),
            Answer::Bytes(ok_with_length()),
        ],
    )
    .await;
    let response = server.endpoint(1).complete(hello()).await.unwrap();
    assert_eq!(&*response.message.content, "Hello there");
    assert_eq!(server.received().len(), 2, "one retry");

    let server = Scripted::start(path, vec![Answer::BytesThenClose(cut)]).await;
    let error = server.endpoint(0).complete(hello()).await.unwrap_err();
    assert_eq!(error.class(), "connection", "{error}");
    let message = error.to_string();
    assert!(
        message.contains("before the response was complete"),
        "{message}"
    );
    assert!(message.contains("of body received of 500"), "{message}");
    assert_eq!(server.received().len(), 1, "a response began: not resent");
}

async fn a_reply_that_is_not_http_is_a_malformed_response(path: Path) {
    let server = Scripted::start(
        path,
        vec![Answer::BytesThenClose(
            b"220 smtp.example.com ESMTP ready\r\n\r\n".to_vec(),
        )],
    )
    .await;
    let error = server.endpoint(0).complete(hello()).await.unwrap_err();
    assert_eq!(error.class(), "malformed_response", "{error}");
    assert!(
        error.to_string().contains("invalid HTTP response head"),
        "{error}"
    );
}

async fn an_error_status_is_read_with_its_body_and_retry_after(path: Path) {
    let error_body = r#"{"error":{"message":"slow down","code":"x"}}"#;
    let limited = format!(
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: {}\r\n\r\n{error_body}",
        error_body.len()
    )
    .into_bytes();
    let server = Scripted::start(
        path,
        vec![Answer::Bytes(limited), Answer::Bytes(ok_with_length())],
    )
    .await;
    let endpoint = server.endpoint(0);
    let error = endpoint.complete(hello()).await.unwrap_err();
    assert_eq!(error.class(), "rate_limited", "{error}");
    // Of the body, only OpenAI's error code: never its text.
    assert!(error.to_string().ends_with("(HTTP 429): x"), "{error}");
    assert!(!error.to_string().contains("slow down"), "{error}");
    let sparring::llm::LlmError::RateLimited { retry_after, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(*retry_after, Some(Duration::ZERO), "Retry-After is read");
    // The connection is kept after an error with a complete body.
    endpoint.complete(hello()).await.unwrap();
    assert_eq!(server.connections(), 1);
}

async fn a_body_larger_than_the_cap_is_refused_unread(path: Path) {
    let too_large = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{{",
        sparring::llm::MAX_BODY_BYTES + 1
    );
    let server = Scripted::start(path, vec![Answer::Bytes(too_large.into_bytes())]).await;
    let error = server.endpoint(0).complete(hello()).await.unwrap_err();
    assert_eq!(error.class(), "malformed_response", "{error}");
    assert!(error.to_string().contains("larger than"), "{error}");
}

async fn a_server_that_never_answers_times_out(path: Path) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (url, pem) = match path {
        Path::Http1 => (format!("http://{address}/v1"), None),
        // Not even the TLS handshake is answered.
        Path::Https => (format!("https://{address}/v1"), Some(certificate().pem)),
    };
    // Accept and hold the connection, reading nothing and answering nothing.
    let held = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        tokio::time::sleep(Duration::from_secs(10)).await;
        drop(stream);
    });
    let config = {
        let mut endpoint = endpoint_config("silent", &url, "m");
        endpoint.settings.timeout_secs = Duration::from_millis(200).as_secs_f64();
        endpoint
    };
    let error = endpoint_on(config, &url, path, pem.as_deref())
        .complete(hello())
        .await
        .unwrap_err();
    assert_eq!(error.class(), "timeout", "{error}");
    held.abort();
}

async fn concurrent_calls_open_a_connection_each_and_reuse_them_afterwards(path: Path) {
    let server = Scripted::start(path, vec![Answer::Bytes(ok_with_length())]).await;
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

#[tokio::test]
async fn an_azure_deployment_is_called_at_its_path_with_its_api_version_and_key() {
    let server = Scripted::start(Path::Https, vec![Answer::Bytes(ok_with_length())]).await;
    let config = {
        let mut endpoint = endpoint_config("azure", &server.url, "m");
        endpoint.api_key = Some("azure-key".into());
        endpoint.azure = Some(AzureDeployment {
            deployment: "gpt-4o-mini".into(),
            api_version: "2024-10-21".into(),
        });
        endpoint
    };
    let base = server.url.trim_end_matches("/v1");
    let endpoint = endpoint_on(config, base, Path::Https, server.pem.as_deref());
    let response = endpoint.complete(hello()).await.unwrap();
    assert_eq!(&*response.message.content, "Hello there");
    let head = server.received()[0].head.clone();
    assert!(
        head.starts_with(
            "POST /openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21 HTTP/1.1\r\n"
        ),
        "{head}"
    );
    let head = head.to_ascii_lowercase();
    assert!(head.contains("\r\napi-key: azure-key\r\n"), "{head}");
    assert!(!head.contains("authorization"), "{head}");
}

#[tokio::test]
async fn an_untrusted_certificate_is_a_connection_error_naming_it() {
    let server = Scripted::start(Path::Https, vec![Answer::Bytes(ok_with_length())]).await;
    let error = endpoint_on(
        endpoint_config("untrusted", &server.url, "m"),
        &server.url,
        Path::Https,
        None,
    )
    .complete(hello())
    .await
    .unwrap_err();
    assert_eq!(error.class(), "connection", "{error}");
    assert!(
        error.to_string().to_lowercase().contains("certificate"),
        "{error}"
    );
    assert!(server.received().is_empty());
}

/// `api = "responses"` goes through the same clients, to `/responses`.
async fn a_responses_api_endpoint_posts_to_responses_and_reads_its_reply(path: Path) {
    const REPLY: &str = r#"{"status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}],"usage":{"input_tokens":4,"output_tokens":1}}"#;
    let answer = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{REPLY}",
        REPLY.len()
    );
    let server = Scripted::start(path, vec![Answer::Bytes(answer.into_bytes())]).await;
    let config = {
        let mut endpoint = endpoint_config("scripted", &server.url, "m");
        endpoint.settings.api = sparring::config::Api::Responses;
        endpoint.api_key = Some("sk-test".into());
        endpoint
    };
    let endpoint = endpoint_on(config, &server.url, server.path, server.pem.as_deref());
    let response = endpoint.complete(with_scenario()).await.unwrap();
    assert_eq!(&*response.message.content, "Hi");
    assert_eq!(response.usage.prompt_tokens, 4);
    let received = server.received();
    assert!(
        received[0]
            .head
            .starts_with("POST /v1/responses HTTP/1.1\r\n"),
        "{}",
        received[0].head
    );
    let body: serde_json::Value = serde_json::from_str(&received[0].body).unwrap();
    assert_eq!(body["instructions"], "s");
    assert_eq!(body["input"][0]["content"], "hello");
    assert_eq!(body["metadata"]["sparring_scenario"], "retail_001");
}
