//! A lean HTTP/1.1 client for `http://` endpoints: one JSON POST per call over
//! a pooled keep-alive connection, the response read whole.
//!
//! Why not hyper's client (through reqwest): every hyper HTTP/1.1 connection
//! keeps a dispatch channel block (about 10 KiB), an 8 KiB header buffer and
//! a read buffer of 8 KiB or more for as long as it lives, and a thousand
//! calls in flight need a thousand connections; measured with heaptrack, that
//! was half of the memory of an in-flight conversation. Here a call holds
//! nothing while it waits for the server: the request is written and
//! dropped, and the read buffer is only allocated once the answer arrives.
//! What a model call needs of HTTP/1.1 is small (RFC 9112: a POST with a
//! `Content-Length`, a response framed by length, chunks or close), and
//! [`super::framing`] has it, tested case by case.

use std::io::IoSlice;
use std::sync::Arc;

use http::{HeaderMap, HeaderValue};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::framing::{Decoder, Response, FIRST_READ};
use super::pool::{pool_for, Pool};
use super::{Encode, Reply};
use crate::llm::LlmError;

pub struct Http1 {
    pool: Arc<Pool>,
    /// `host:port`, for messages.
    origin: String,
    /// The request line and the headers every request carries, each line
    /// ended; `Content-Length` and the blank line are added per request.
    head: Box<[u8]>,
}

/// Why an exchange failed.
enum Failure {
    /// Nothing of a response arrived before the connection failed.
    NothingReceived(String),
    Failed(LlmError),
}

impl Http1 {
    /// Requests to `host:port`, `path_and_query` on it, with `headers` (the
    /// endpoint's authorization and the like) on each.
    pub fn new(
        host: &str,
        port: u16,
        authority: &str,
        path_and_query: &str,
        headers: &HeaderMap,
    ) -> Self {
        let mut head =
            format!("POST {path_and_query} HTTP/1.1\r\nHost: {authority}\r\n").into_bytes();
        head.extend_from_slice(b"Content-Type: application/json\r\nAccept: */*\r\n");
        for (name, value) in headers {
            if name == http::header::CONTENT_TYPE || name == http::header::HOST {
                continue;
            }
            head.extend_from_slice(name.as_str().as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        Http1 {
            pool: pool_for(host, port),
            origin: format!("{host}:{port}"),
            head: head.into_boxed_slice(),
        }
    }

    /// The path requests are posted to, from the request line.
    #[cfg(test)]
    pub fn path(&self) -> &str {
        std::str::from_utf8(&self.head)
            .ok()
            .and_then(|head| head.split(' ').nth(1))
            .unwrap_or_default()
    }

    fn request_head(&self, content_length: usize, extra: &[(&str, &HeaderValue)]) -> Vec<u8> {
        use std::io::Write;
        let mut head = Vec::with_capacity(self.head.len() + 128);
        head.extend_from_slice(&self.head);
        for (name, value) in extra {
            head.extend_from_slice(name.as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        // Writing to a Vec cannot fail.
        let _ = write!(head, "Content-Length: {content_length}\r\n\r\n");
        head
    }

    /// Send `body` and read the response, on a kept connection unless
    /// `new_connection`. `encode` makes the body again when it was dropped
    /// while a new connection opened.
    ///
    /// A connection that fails before a byte of the answer arrives is
    /// [`LlmError::Unanswered`]: whether to send the request again is
    /// `llm::retry`'s decision, not this client's.
    pub async fn post(
        &self,
        body: String,
        extra: &[(&str, &HeaderValue)],
        new_connection: bool,
        encode: Encode<'_>,
    ) -> Result<Reply, LlmError> {
        let mut body = body;
        let idle = if new_connection {
            None
        } else {
            self.pool.idle()
        };
        let reused = idle.is_some();
        let mut stream = match idle {
            Some(stream) => stream,
            None => {
                // Opening a connection takes a round trip or more, and when a
                // job starts, a thousand calls open theirs at once: none
                // holds its body meanwhile.
                drop(std::mem::take(&mut body));
                let stream = self.pool.connect().await?;
                body = encode()?;
                stream
            }
        };
        let head = self.request_head(body.len(), extra);
        let sent = write_all(&mut stream, &head, body.as_bytes()).await;
        drop(head);
        // The call now waits for the model; it holds no copy of the request.
        drop(body);
        if let Err(e) = sent {
            let why = format!("cannot send the request to {}: {e}", self.origin);
            // A kept connection the server closed while it was idle.
            return Err(if reused {
                LlmError::Unanswered(why)
            } else {
                LlmError::Connection(why)
            });
        }
        match read_response(&mut stream).await {
            Ok((reply, keep_alive)) => {
                if keep_alive {
                    self.pool.put_back(stream);
                }
                Ok(reply)
            }
            Err(Failure::NothingReceived(why)) => Err(LlmError::Unanswered(format!(
                "{} closed the {} connection without answering ({why})",
                self.origin,
                if reused { "kept" } else { "new" }
            ))),
            Err(Failure::Failed(e)) => Err(e),
        }
    }
}

/// Write the head and the body, as one vectored write when the socket takes it.
async fn write_all(stream: &mut TcpStream, head: &[u8], body: &[u8]) -> std::io::Result<()> {
    let mut parts = [IoSlice::new(head), IoSlice::new(body)];
    let mut parts: &mut [IoSlice<'_>] = &mut parts;
    while !parts.is_empty() {
        let n = stream.write_vectored(parts).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        IoSlice::advance_slices(&mut parts, n);
    }
    Ok(())
}

/// Read one response: the reply and whether the connection may be reused.
async fn read_response(stream: &mut TcpStream) -> Result<(Reply, bool), Failure> {
    let mut buf: Vec<u8> = Vec::new();
    let mut decoder = Decoder::default();
    let mut received = 0usize;
    loop {
        // Most of a call is spent here, waiting for the model; nothing is
        // allocated for the answer until it starts to arrive.
        if let Err(e) = stream.readable().await {
            return Err(if received == 0 {
                Failure::NothingReceived(e.to_string())
            } else {
                failed(format!("reading the response failed: {e}"))
            });
        }
        let wanted = decoder.wanted(buf.len());
        if buf.capacity() - buf.len() < wanted.min(FIRST_READ) {
            buf.reserve(wanted);
        }
        let n = match stream.try_read_buf(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) if received == 0 => return Err(Failure::NothingReceived(e.to_string())),
            Err(e) => return Err(failed(format!("reading the response failed: {e}"))),
        };
        received += n;
        if n == 0 {
            if received == 0 {
                return Err(Failure::NothingReceived("the connection was closed".into()));
            }
            return match decoder.finish(buf) {
                Ok(response) => Ok((reply(response), false)),
                Err(why) => Err(failed(why)),
            };
        }
        match decoder.decode(&mut buf) {
            Ok(Some(response)) => {
                let keep_alive = response.keep_alive;
                return Ok((reply(response), keep_alive));
            }
            Ok(None) => {}
            Err(e) => return Err(Failure::Failed(LlmError::Malformed(e))),
        }
    }
}

fn failed(message: String) -> Failure {
    Failure::Failed(LlmError::Connection(message))
}

fn reply(response: Response) -> Reply {
    Reply {
        status: response.head.status,
        retry_after: response.head.retry_after,
        rate: response.head.rate,
        body: response.body,
    }
}
