//! Keep-alive connections to one origin (host and port), shared by every
//! endpoint on that server: a conversation alternates between its user and
//! policy endpoints, and with a pool each, every conversation would keep a
//! connection open in both.
//!
//! An idle connection is a socket and nothing more (no buffers), so a
//! thousand of them cost a thousand file descriptors and little memory.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::net::TcpStream;

use crate::llm::LlmError;

/// How long opening a connection may take (reqwest's setting before).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle connections older than this are closed rather than reused: servers
/// close idle connections after a while (uvicorn after 5 s, nginx after 75 s),
/// and one that did is caught before reuse anyway (see [`is_closed`]); this
/// bounds how many descriptors an idle process keeps.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

struct Idle {
    stream: TcpStream,
    since: Instant,
}

/// The idle connections to one origin.
pub struct Pool {
    /// `host:port` as connected to (an IPv6 host without brackets is fine:
    /// the port is split off at the last colon).
    host: String,
    port: u16,
    /// Oldest first: checkouts take the newest, expired ones leave at the front.
    idle: Mutex<VecDeque<Idle>>,
}

/// Every origin's pool, by host and port.
type Pools = Mutex<HashMap<(String, u16), Arc<Pool>>>;

/// The process's pool for `host:port`.
pub fn pool_for(host: &str, port: u16) -> Arc<Pool> {
    static POOLS: OnceLock<Pools> = OnceLock::new();
    let pools = POOLS.get_or_init(Default::default);
    let mut pools = pools
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    pools
        .entry((host.to_string(), port))
        .or_insert_with(|| {
            Arc::new(Pool {
                host: host.to_string(),
                port,
                idle: Mutex::new(VecDeque::new()),
            })
        })
        .clone()
}

/// Whether the server closed (or wrote to) an idle connection. Reading is
/// only attempted when the runtime saw the socket become readable, so a live
/// idle connection costs no system call here.
fn is_closed(stream: &TcpStream) -> bool {
    let mut probe = [0u8; 1];
    !matches!(stream.try_read(&mut probe), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Idle>> {
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The most recently used idle connection still open, if any.
    pub fn idle(&self) -> Option<TcpStream> {
        loop {
            let idle = self.lock().pop_back()?;
            if idle.since.elapsed() < IDLE_TIMEOUT && !is_closed(&idle.stream) {
                return Some(idle.stream);
            }
        }
    }

    /// A new connection, never a pooled one.
    pub async fn connect(&self) -> Result<TcpStream, LlmError> {
        let address = (self.host.as_str(), self.port);
        let stream = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await
        {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => {
                return Err(LlmError::Connection(format!(
                    "cannot connect to {}:{}: {e}",
                    self.host, self.port
                )))
            }
            Err(_) => {
                return Err(LlmError::Connection(format!(
                    "cannot connect to {}:{}: no answer within {CONNECT_TIMEOUT:?}",
                    self.host, self.port
                )))
            }
        };
        // Requests are written whole; waiting to coalesce them only adds latency.
        let _ = stream.set_nodelay(true);
        Ok(stream)
    }

    /// Return a connection whose last response was read in full.
    pub fn put_back(&self, stream: TcpStream) {
        let now = Instant::now();
        let mut idle = self.lock();
        while idle
            .front()
            .is_some_and(|c| now.duration_since(c.since) >= IDLE_TIMEOUT)
        {
            idle.pop_front();
        }
        idle.push_back(Idle { stream, since: now });
    }
}
