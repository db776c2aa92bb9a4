//! An MCP server as an environment (`[environment] kind = "mcp"`), on rmcp.
//!
//! The server is started once when the job is prepared, to list its tools
//! (`tools/list`, filtered by `allowed_tools`): they become the policy's
//! tools, and its `instructions` the domain policy text. Each conversation
//! then gets a fresh session: a fresh process for a `command` (at most
//! `max_processes` alive at once; `{session_dir}` in its arguments or
//! environment is the conversation's own empty folder), a fresh MCP session
//! for a `url`. A call is `tools/call`; a server that dies or stops answering
//! mid-conversation fails it as `env_error`, never as a reward of 0.
//!
//! `seed_calls` are made on every fresh session before the conversation, so
//! each starts from the same state; `state_probes` read a session's state,
//! which is what scenario synthesis compares and grounds its proposals in
//! (the records it shows its generator are the probes' outputs on a fresh
//! session, cut to a few of each kind).

pub mod connect;
pub mod output;
pub mod session;
pub mod session_dir;

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::Semaphore;

use crate::config::state_calls::{self, StateCall};
use crate::config::McpConfig;

use super::{EnvError, Environment, InitialState, Session, ToolSpec};
use connect::{connect, Connection};
use session::McpSession;

pub struct McpEnvironment {
    config: McpConfig,
    name: String,
    tools: Vec<ToolSpec>,
    tool_names: Arc<[String]>,
    probes: Arc<[StateCall]>,
    instructions: String,
    /// Places for sessions (server processes) open at once.
    places: Arc<Semaphore>,
}

impl McpEnvironment {
    /// Start the server once and list its tools.
    pub async fn start(config: &McpConfig) -> Result<McpEnvironment, EnvError> {
        let name = config.label();
        let fail = |message: String| EnvError::Mcp {
            server: name.clone(),
            message,
        };
        let connection = connect(config).await.map_err(&fail)?;
        let listed = tokio::time::timeout(config.timeout, connection.client.list_all_tools()).await;
        let instructions = connection
            .client
            .peer_info()
            .and_then(|info| info.instructions.clone())
            .unwrap_or_default();
        let said = connection
            .stderr
            .as_ref()
            .map(|s| s.said())
            .unwrap_or_default();
        close(connection).await;
        let listed = match listed {
            Ok(Ok(tools)) => tools,
            Ok(Err(e)) => return Err(fail(format!("tools/list failed: {e}{said}"))),
            Err(_) => {
                return Err(fail(format!(
                    "did not answer tools/list within {} s (timeout_secs){said}",
                    config.timeout.as_secs_f64()
                )))
            }
        };
        let all: Vec<ToolSpec> = listed.iter().map(output::tool_spec).collect();
        for (field, calls) in [
            ("state_probes", &config.state_probes),
            ("seed_calls", &config.seed_calls),
        ] {
            let unknown = state_calls::unlisted(calls, &names(&all));
            if !unknown.is_empty() {
                return Err(fail(format!(
                    "environment.{field} names {}, which the server does not list; it lists: {}",
                    unknown.join(", "),
                    names(&all).join(", ")
                )));
            }
        }
        let tools = match &config.allowed_tools {
            None => all,
            Some(allowed) => {
                let unknown: Vec<&str> = allowed
                    .iter()
                    .filter(|a| !all.iter().any(|t| t.name == **a))
                    .map(String::as_str)
                    .collect();
                if !unknown.is_empty() {
                    return Err(fail(format!(
                        "allowed_tools names {}, which the server does not list; it lists: {}",
                        unknown.join(", "),
                        names(&all).join(", ")
                    )));
                }
                all.into_iter()
                    .filter(|t| allowed.contains(&t.name))
                    .collect()
            }
        };
        if tools.is_empty() {
            return Err(fail(
                "lists no tools, so the policy would have none to call".into(),
            ));
        }
        Ok(McpEnvironment {
            tool_names: names(&tools).into_iter().map(str::to_string).collect(),
            probes: config.state_probes.iter().cloned().collect(),
            tools,
            instructions,
            places: Arc::new(Semaphore::new(config.max_processes)),
            config: config.clone(),
            name,
        })
    }
}

fn names(tools: &[ToolSpec]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

async fn close(connection: Connection) {
    if let Err(e) = connection.client.cancel().await {
        tracing::debug!("closing an MCP session: {e}");
    }
}

#[async_trait]
impl Environment for McpEnvironment {
    fn name(&self) -> &str {
        &self.name
    }

    /// The server's `instructions` (empty when it gives none).
    fn policy_text(&self) -> &str {
        &self.instructions
    }

    fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    async fn open(&self, _init: &InitialState) -> Result<Box<dyn Session>, EnvError> {
        let permit = self
            .places
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| EnvError::Mcp {
                server: self.name.clone(),
                message: format!("no place for a session: {e}"),
            })?;
        let connection = connect(&self.config)
            .await
            .map_err(|message| EnvError::Mcp {
                server: self.name.clone(),
                message,
            })?;
        let mut session = McpSession::new(
            connection,
            permit,
            self.tool_names.clone(),
            self.probes.clone(),
            self.name.clone(),
            self.config.timeout,
        );
        session.seed(&self.config.seed_calls).await?;
        Ok(Box::new(session))
    }

    fn scores_db(&self) -> bool {
        false
    }

    /// The `state_probes`' outputs on a fresh session (after its
    /// `seed_calls`), each list cut to `n` records from a place `seed` picks.
    async fn sample_records(&self, seed: u64, n: usize) -> Result<serde_json::Value, EnvError> {
        if self.probes.is_empty() {
            return Err(EnvError::NotSampleable {
                environment: self.name.clone(),
                reason: "its state cannot be read: add environment.state_probes, the tool calls \
                         that read a session's state, e.g. state_probes = [{ tool = \"read_graph\" }] \
                         for the memory server (and seed_calls to start every session from \
                         the same records)"
                    .to_string(),
            });
        }
        let mut session = self.open(&InitialState::default()).await?;
        let state = session.state().await?.unwrap_or_default();
        Ok(crate::env::sampled::bounded(&state, seed, n))
    }
}
