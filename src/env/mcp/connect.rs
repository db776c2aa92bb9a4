//! Reaching an MCP server for one session: a fresh process over stdio, or a
//! fresh session over streamable HTTP; `initialize` answered within the
//! startup timeout. What a process wrote on stderr is kept (its end), so a
//! server that exits at start says why.
//!
//! Over HTTP, rmcp's streamable-HTTP client runs on a reqwest client built
//! here: the clippy `disallowed-types` fence (clippy.toml) lets it through
//! because MCP's transport (JSON-RPC over POST, server-sent events, the
//! `Mcp-Session-Id` header) is rmcp's to speak, not `llm::transport`'s. No
//! retries: a failed MCP request fails the conversation as `env_error`.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use tokio::io::AsyncReadExt;
use tokio::task::JoinHandle;

use crate::config::{McpConfig, McpTransport};

use super::session_dir::SessionDir;

/// The client side of one MCP session.
pub type Client = RunningService<RoleClient, ClientConfig>;

/// Bytes of a server's stderr kept for error messages.
const STDERR_KEPT: usize = 2_000;

/// One open session with a server, and what belongs to it.
pub struct Connection {
    pub client: Client,
    /// The conversation's own folder (stdio only), removed after the process.
    pub dir: Option<SessionDir>,
    pub stderr: Option<StderrTail>,
}

/// The end of what a server process wrote on stderr.
#[derive(Clone, Default)]
pub struct StderrTail {
    text: Arc<Mutex<String>>,
}

impl StderrTail {
    /// Read `stderr` to its end in the background, keeping its last bytes.
    fn follow(mut stderr: tokio::process::ChildStderr) -> (StderrTail, JoinHandle<()>) {
        let tail = StderrTail::default();
        let text = tail.text.clone();
        let reader = tokio::spawn(async move {
            let mut buf = [0u8; 1024];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                if let Ok(mut kept) = text.lock() {
                    kept.push_str(&String::from_utf8_lossy(&buf[..n]));
                    if kept.len() > STDERR_KEPT {
                        let mut cut = kept.len() - STDERR_KEPT;
                        while !kept.is_char_boundary(cut) {
                            cut += 1;
                        }
                        kept.drain(..cut);
                    }
                }
            }
        });
        (tail, reader)
    }

    /// `; it wrote on stderr: …` when it wrote anything.
    pub fn said(&self) -> String {
        let kept = self
            .text
            .lock()
            .map(|t| t.trim().to_string())
            .unwrap_or_default();
        if kept.is_empty() {
            String::new()
        } else {
            format!("; it wrote on stderr: {kept}")
        }
    }
}

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("usersim", env!("CARGO_PKG_VERSION")),
    )
}

/// Open a session: start the server (stdio) or reach it (HTTP), and
/// initialize. The error says what failed, in words for the person who wrote
/// the config.
pub async fn connect(config: &McpConfig) -> Result<Connection, String> {
    match &config.transport {
        McpTransport::Stdio { command, cwd, env } => {
            let dir = SessionDir::create()
                .map_err(|e| format!("cannot make the session's folder: {e}"))?;
            let Some((program, args)) = command.split_first() else {
                return Err("the command is empty".into());
            };
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(args.iter().map(|a| dir.fill(a)))
                .current_dir(cwd)
                .kill_on_drop(true);
            for (key, value) in env {
                cmd.env(key, dir.fill(value));
            }
            let (transport, stderr) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start '{program}': {e}"))?;
            let (tail, reader) = match stderr {
                Some(stderr) => {
                    let (tail, reader) = StderrTail::follow(stderr);
                    (tail, Some(reader))
                }
                None => (StderrTail::default(), None),
            };
            match initialize(transport, config.startup_timeout).await {
                Ok(client) => Ok(Connection {
                    client,
                    dir: Some(dir),
                    stderr: Some(tail),
                }),
                Err(why) => {
                    // A server that exited: let its last words arrive.
                    if let Some(reader) = reader {
                        let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
                    }
                    Err(format!("'{}' {why}{}", command.join(" "), tail.said()))
                }
            }
        }
        McpTransport::Http { url } => {
            crate::llm::transport::install_crypto_provider();
            #[allow(clippy::disallowed_types)] // see the module comment
            let http = reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .timeout(config.timeout)
                // A redirect could lead past the service's egress allowlist.
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
            let transport = StreamableHttpClientTransport::with_client(
                http,
                StreamableHttpClientTransportConfig::with_uri(url.as_str()),
            );
            let client = initialize(transport, config.startup_timeout)
                .await
                .map_err(|why| format!("{url} {why}"))?;
            Ok(Connection {
                client,
                dir: None,
                stderr: None,
            })
        }
    }
}

async fn initialize<T, E, A>(transport: T, timeout: Duration) -> Result<Client, String>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match tokio::time::timeout(timeout, client_info().serve(transport)).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(format!(
            "did not complete the MCP handshake (exited at start, or does not speak MCP): {e}"
        )),
        Err(_) => Err(format!(
            "did not answer `initialize` within {} s (startup_timeout_secs)",
            timeout.as_secs_f64()
        )),
    }
}
