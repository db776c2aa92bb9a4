//! Reaching an MCP server for one session: a fresh process over stdio, or a
//! fresh session over streamable HTTP; `initialize` answered within the
//! startup timeout. What a process wrote on stderr is kept (its end), so a
//! server that exits at start says why. A server at a `url` is described in
//! sparring's own words only ([`super::remote_error`]): never its reply.
//!
//! Over stdio, sparring spawns the process itself and hands rmcp its stdout
//! and stdin, so that the process and its folder belong to the session
//! ([`ServerProcess`]) and end with it on every path.
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
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use tokio::io::AsyncReadExt;
use tokio::task::JoinHandle;

use crate::config::mcp::SESSION_DIR;
use crate::config::{McpConfig, McpTransport};

use super::process::ServerProcess;
use super::remote_error::initialize_failure;
use super::session_dir::SessionDir;

/// What a server sparring starts inherits of sparring's environment, as the
/// MCP SDKs' stdio clients do on Unix (`get_default_environment`).
pub const INHERITED_ENV: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The client side of one MCP session.
pub type Client = RunningService<RoleClient, ClientConfig>;

/// Bytes of a server's stderr kept for error messages.
const STDERR_KEPT: usize = 2_000;

/// One open session with a server, and what belongs to it.
pub struct Connection {
    pub client: Client,
    /// The process and the conversation's own folder (stdio only).
    pub process: Option<ServerProcess>,
    pub stderr: Option<StderrTail>,
}

impl Connection {
    /// `text` as the policy or an error may show it: the session folder's
    /// absolute path made `.` (see [`SessionDir::hide`]).
    pub fn hide(&self, text: &str) -> String {
        match &self.process {
            Some(process) => process.dir().hide(text),
            None => text.to_string(),
        }
    }

    /// The end of what the process wrote on stderr (`; it wrote on stderr:
    /// …`), its folder hidden; empty over HTTP.
    pub fn said(&self) -> String {
        let said = self.stderr.as_ref().map(|s| s.said()).unwrap_or_default();
        self.hide(&said)
    }

    /// Close the session: the client first (the server's input closed, so
    /// it can exit), then the process ended and its folder removed.
    pub async fn close(self) {
        let Connection {
            client, process, ..
        } = self;
        if let Err(e) = client.cancel().await {
            tracing::debug!("closing an MCP session: {e}");
        }
        if let Some(process) = process {
            process.end().await;
        }
    }
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
        Implementation::new("sparring", env!("CARGO_PKG_VERSION")),
    )
}

/// Open a session: start the server (stdio) or reach it (HTTP), and
/// initialize. The error says what failed, in words for the person who wrote
/// the config.
pub async fn connect(config: &McpConfig) -> Result<Connection, String> {
    match config.transport() {
        McpTransport::Stdio { command, cwd, env } => {
            let dir = SessionDir::create()
                .map_err(|e| format!("cannot make the session's folder: {e}"))?;
            let Some((program, args)) = command.split_first() else {
                return Err("the command is empty".into());
            };
            let cwd = if cwd.as_os_str() == SESSION_DIR {
                dir.path()
            } else {
                cwd
            };
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(args.iter().map(|a| dir.fill(a)))
                .current_dir(cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true);
            // As the MCP SDKs start a server: only the few variables a
            // program needs to run, then the config's `env`. Never the rest of
            // sparring's environment (API keys, SPARRING_API_TOKEN): the server
            // is often a package fetched from a registry.
            cmd.env_clear();
            for key in INHERITED_ENV {
                if let Some(value) = std::env::var_os(key) {
                    cmd.env(key, value);
                }
            }
            for (key, value) in env {
                cmd.env(key, dir.fill(value));
            }
            let mut child = cmd
                .spawn()
                .map_err(|e| format!("cannot start '{program}': {e}"))?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(format!("'{program}' started without its stdin and stdout"));
            };
            let (tail, reader) = match child.stderr.take() {
                Some(stderr) => {
                    let (tail, reader) = StderrTail::follow(stderr);
                    (tail, Some(reader))
                }
                None => (StderrTail::default(), None),
            };
            let process = ServerProcess::new(child, dir);
            match initialize((stdout, stdin), config.startup_timeout()).await {
                Ok(client) => Ok(Connection {
                    client,
                    process: Some(process),
                    stderr: Some(tail),
                }),
                Err(why) => {
                    // A server that exited: let its last words arrive.
                    if let Some(reader) = reader {
                        let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
                    }
                    let why = match why {
                        Failure::Handshake(e) => format!(
                            "did not complete the MCP handshake (exited at start, or does not \
                             speak MCP): {e}"
                        ),
                        timeout => timeout.to_string(),
                    };
                    let said = process.dir().hide(&tail.said());
                    Err(format!("'{}' {why}{said}", command.join(" ")))
                }
            }
        }
        McpTransport::Http { url } => {
            crate::llm::transport::install_crypto_provider();
            #[allow(clippy::disallowed_types)] // see the module comment
            let http = reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .timeout(config.timeout())
                // A redirect could lead past the service's egress allowlist.
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
            let transport = StreamableHttpClientTransport::with_client(
                http,
                StreamableHttpClientTransportConfig::with_uri(url),
            );
            let client = initialize(transport, config.startup_timeout())
                .await
                .map_err(|why| match why {
                    Failure::Handshake(e) => format!(
                        "{url} did not complete the MCP handshake: it {}",
                        initialize_failure(&e)
                    ),
                    timeout => format!("{url} {timeout}"),
                })?;
            Ok(Connection {
                client,
                process: None,
                stderr: None,
            })
        }
    }
}

/// Why `initialize` did not succeed.
enum Failure {
    Handshake(Box<ClientInitializeError>),
    Timeout(Duration),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Handshake(e) => write!(f, "did not complete the MCP handshake: {e}"),
            Failure::Timeout(timeout) => write!(
                f,
                "did not answer `initialize` within {} s (startup_timeout_secs)",
                timeout.as_secs_f64()
            ),
        }
    }
}

async fn initialize<T, E, A>(transport: T, timeout: Duration) -> Result<Client, Failure>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match tokio::time::timeout(timeout, client_info().serve(transport)).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(Failure::Handshake(Box::new(e))),
        Err(_) => Err(Failure::Timeout(timeout)),
    }
}
