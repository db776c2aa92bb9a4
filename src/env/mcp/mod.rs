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
//! session, cut to a few of each kind). A scenario's `probes` may call the
//! `probe_tools`, which need not be offered to the policy.
//!
//! The policy knows the environment as `mcp:NAME`: the configured `name`, or
//! the name the server gives itself in `initialize`, never its command or
//! the machine's paths.

pub mod connect;
pub mod output;
pub mod process;
pub mod remote_error;
pub mod session;
pub mod session_dir;

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::Semaphore;

use crate::config::environment_name::name_from;
use crate::config::state_calls::{self, StateCall};
use crate::config::McpConfig;

use super::{EnvError, Environment, InitialState, Session, ToolSpec};
use connect::{connect, Connection};
use remote_error::request_failure;
use session::{McpSession, SessionTools};

pub struct McpEnvironment {
    config: McpConfig,
    /// `mcp:NAME`, as the policy's prompt and the exports show it.
    name: String,
    /// As errors show the server to the config's author (`mcp:COMMAND`).
    label: String,
    tools: Vec<ToolSpec>,
    session_tools: Arc<SessionTools>,
    probes: Arc<[StateCall]>,
    instructions: String,
    /// Places for sessions (server processes) open at once.
    places: Arc<Semaphore>,
}

impl McpEnvironment {
    /// Start the server once and list its tools.
    pub async fn start(config: &McpConfig) -> Result<McpEnvironment, EnvError> {
        session_dir::sweep_stale();
        let label = config.label();
        let fail = |message: String| EnvError::Mcp {
            server: label.clone(),
            message,
        };
        let connection = connect(config).await.map_err(&fail)?;
        let listed =
            tokio::time::timeout(config.timeout(), connection.client.list_all_tools()).await;
        let info = connection.client.peer_info();
        let instructions = info
            .as_ref()
            .and_then(|info| info.instructions.clone())
            .unwrap_or_default();
        let server_name = info
            .as_ref()
            .and_then(|info| info.server_info.as_ref().map(|server| server.name.clone()))
            .unwrap_or_default();
        let said = connection.said();
        // What the server says about itself may name the folder it was
        // started in (a filesystem server lists it): made `.`, as in calls.
        let instructions = connection.hide(&instructions);
        let listed = match listed {
            Ok(Ok(tools)) => Ok(tools
                .iter()
                .map(|tool| hide_in_spec(&connection, output::tool_spec(tool)))
                .collect::<Vec<_>>()),
            Ok(Err(e)) if connection.process.is_none() => {
                Err(format!("tools/list failed: it {}", request_failure(&e)))
            }
            Ok(Err(e)) => Err(connection.hide(&format!("tools/list failed: {e}{said}"))),
            Err(_) => Err(format!(
                "did not answer tools/list within {} s (timeout_secs){said}",
                config.timeout().as_secs_f64()
            )),
        };
        connection.close().await;
        let all = listed.map_err(&fail)?;
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
            None => all.clone(),
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
                all.iter()
                    .filter(|t| allowed.contains(&t.name))
                    .cloned()
                    .collect()
            }
        };
        if tools.is_empty() {
            return Err(fail(
                "lists no tools, so the policy would have no tools to call".into(),
            ));
        }
        let probe_tools = probe_tools(config, &all, &tools).map_err(&fail)?;
        let name = match &config.name {
            Some(name) => name.clone(),
            None => name_from(&server_name, "server"),
        };
        Ok(McpEnvironment {
            session_tools: Arc::new(SessionTools {
                policy: names(&tools).into_iter().map(str::to_string).collect(),
                probes: probe_tools.into(),
            }),
            probes: config.state_probes.iter().cloned().collect(),
            tools,
            instructions,
            places: Arc::new(Semaphore::new(config.max_processes())),
            config: config.clone(),
            name: format!("mcp:{name}"),
            label,
        })
    }
}

/// The tools probes may call: `probe_tools` (each listed by the server), or
/// the policy's tools and the `state_probes`' tools.
fn probe_tools(
    config: &McpConfig,
    all: &[ToolSpec],
    policy: &[ToolSpec],
) -> Result<Vec<String>, String> {
    match &config.probe_tools {
        Some(listed) => {
            let unknown: Vec<&str> = listed
                .iter()
                .filter(|p| !all.iter().any(|t| t.name == **p))
                .map(String::as_str)
                .collect();
            if unknown.is_empty() {
                Ok(listed.clone())
            } else {
                Err(format!(
                    "environment.probe_tools names {}, which the server does not list; it \
                     lists: {}",
                    unknown.join(", "),
                    names(all).join(", ")
                ))
            }
        }
        None => {
            let mut tools: Vec<String> = names(policy).into_iter().map(str::to_string).collect();
            for call in &config.state_probes {
                if !tools.contains(&call.tool) {
                    tools.push(call.tool.clone());
                }
            }
            Ok(tools)
        }
    }
}

/// A tool's description and schema with the session folder made `.`.
fn hide_in_spec(connection: &Connection, spec: ToolSpec) -> ToolSpec {
    let parameters = connection.hide(&spec.parameters.to_string());
    ToolSpec {
        description: connection.hide(&spec.description),
        parameters: serde_json::from_str(&parameters).unwrap_or(spec.parameters),
        name: spec.name,
    }
}

fn names(tools: &[ToolSpec]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
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

    fn probe_tools(&self) -> Vec<&str> {
        self.session_tools
            .probes
            .iter()
            .map(String::as_str)
            .collect()
    }

    async fn open(&self, _init: &InitialState) -> Result<Box<dyn Session>, EnvError> {
        let permit = self
            .places
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| EnvError::Mcp {
                server: self.label.clone(),
                message: format!("no place for a session: {e}"),
            })?;
        let connection = connect(&self.config)
            .await
            .map_err(|message| EnvError::Mcp {
                server: self.label.clone(),
                message,
            })?;
        let mut session = McpSession::new(
            connection,
            permit,
            Arc::clone(&self.session_tools),
            self.probes.clone(),
            self.label.clone(),
            self.config.timeout(),
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
