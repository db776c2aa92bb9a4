//! One conversation's session with an MCP server: `tools/call` for each of
//! the policy's calls and each probe, closed (the process ended, its folder
//! removed) when the conversation is verified, and killed and removed at
//! once when the session is dropped on any other path. What the server says
//! reaches the policy, the probes and errors with the session folder's
//! absolute path made `.`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::ServiceError;
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;

use crate::config::state_calls::StateCall;
use crate::env::{EnvError, EnvUsage, Message, Session, ToolCall, ToolOutput};
use crate::verify::probes::ProbeOutput;
use crate::verify::{communicate, Component, Criteria, Verification};

use super::connect::Connection;
use super::output::{probe_output, tool_output};
use super::remote_error::request_failure;

/// What a `tools/call` came back with: a result, or the server's refusal (a
/// JSON-RPC error, e.g. arguments that do not fit), which the caller reads
/// as an error output.
enum Answer {
    Result(CallToolResult),
    Refused(String),
}

/// The tools a session may call, for whom.
pub struct SessionTools {
    /// Offered to the policy (`allowed_tools`).
    pub policy: Arc<[String]>,
    /// What probes may call (`probe_tools`).
    pub probes: Arc<[String]>,
}

pub struct McpSession {
    /// `None` once closed.
    connection: Option<Connection>,
    /// A place among the server processes allowed at once, held until the
    /// process has ended.
    permit: Option<OwnedSemaphorePermit>,
    /// The tools the policy and the probes may call.
    tools: Arc<SessionTools>,
    /// The calls that read the state (`state_probes`).
    probes: Arc<[StateCall]>,
    /// Names the server in errors.
    label: String,
    timeout: Duration,
    /// Reached at a `url`: its failures are told in sparring's words only.
    remote: bool,
    usage: EnvUsage,
}

impl McpSession {
    pub fn new(
        connection: Connection,
        permit: OwnedSemaphorePermit,
        tools: Arc<SessionTools>,
        probes: Arc<[StateCall]>,
        label: String,
        timeout: Duration,
    ) -> Self {
        let remote = connection.process.is_none();
        McpSession {
            connection: Some(connection),
            permit: Some(permit),
            tools,
            probes,
            label,
            timeout,
            remote,
            usage: EnvUsage::default(),
        }
    }

    /// `text` with the session folder's absolute path made `.`.
    fn hide(&self, text: &str) -> String {
        match &self.connection {
            Some(connection) => connection.hide(text),
            None => text.to_string(),
        }
    }

    fn failed(&self, message: String) -> EnvError {
        let said = self
            .connection
            .as_ref()
            .map(|c| c.said())
            .unwrap_or_default();
        EnvError::Mcp {
            server: self.label.clone(),
            message: self.hide(&format!("{message}{said}")),
        }
    }

    /// `tools/call` of any tool the server lists (who may call which is
    /// [`Session::call`]'s and [`Session::probe`]'s to enforce): a JSON-RPC
    /// error is a refusal, a server that fails or does not answer an `Err`.
    async fn call_tool(
        &mut self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<Answer, EnvError> {
        let Some(connection) = &self.connection else {
            return Err(self.failed("the session was already closed".into()));
        };
        let request = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        let started = Instant::now();
        let answer = tokio::time::timeout(self.timeout, connection.client.call_tool(request)).await;
        self.usage.requests += 1;
        self.usage.wait += started.elapsed();
        match answer {
            Ok(Ok(result)) => Ok(Answer::Result(result)),
            // The server answered with a JSON-RPC error: it refused this
            // call (unknown arguments, a tool it does not have); the policy
            // reads why, as it would from any tool.
            Ok(Err(ServiceError::McpError(error))) => {
                Ok(Answer::Refused(self.hide(&error.message)))
            }
            Ok(Err(e)) => {
                let why = if self.remote {
                    request_failure(&e)
                } else {
                    e.to_string()
                };
                Err(self.failed(format!(
                    "failed during the conversation (tools/call {name}): {why}"
                )))
            }
            Err(_) => Err(self.failed(format!(
                "did not answer tools/call {name} within {} s (timeout_secs)",
                self.timeout.as_secs_f64()
            ))),
        }
    }

    /// [`McpSession::call_tool`] as the policy reads it.
    async fn call_for_policy(
        &mut self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<ToolOutput, EnvError> {
        Ok(match self.call_tool(name, arguments).await? {
            Answer::Result(result) => {
                let output = tool_output(&result);
                ToolOutput {
                    content: self.hide(&output.content),
                    is_error: output.is_error,
                }
            }
            Answer::Refused(why) => ToolOutput::error(why),
        })
    }

    /// One configured call (`field[i]`, a seed call or a state probe); a
    /// tool error is the environment failing: the config names a call the
    /// server refuses.
    async fn configured_call(
        &mut self,
        field: &str,
        i: usize,
        call: &StateCall,
    ) -> Result<ToolOutput, EnvError> {
        let arguments = call.arguments.as_object().cloned().unwrap_or_default();
        let output = self.call_for_policy(&call.tool, arguments).await?;
        if output.is_error {
            return Err(self.failed(format!(
                "environment.{field}[{i}] ({}) failed: {}",
                call.tool, output.content
            )));
        }
        Ok(output)
    }

    /// Make the `seed_calls` on the fresh session, in order.
    pub async fn seed(&mut self, calls: &[StateCall]) -> Result<(), EnvError> {
        for (i, call) in calls.iter().enumerate() {
            self.configured_call("seed_calls", i, call).await?;
        }
        Ok(())
    }

    /// End the session: the client closed (the process ended), then its
    /// folder removed, then its place given back.
    async fn close(&mut self) {
        if let Some(connection) = self.connection.take() {
            connection.close().await;
        }
        self.permit.take();
    }
}

/// The arguments of a call as the server takes them: a JSON object (`null`
/// or nothing: no arguments); what is wrong with them otherwise.
fn arguments_of(call: &ToolCall) -> Result<serde_json::Map<String, Value>, String> {
    if call.arguments.trim().is_empty() {
        return Ok(serde_json::Map::new());
    }
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(Value::Null) => Ok(serde_json::Map::new()),
        Ok(other) => Err(format!(
            "the arguments are {other}, not a JSON object; send one JSON object"
        )),
        Err(e) => Err(format!(
            "the arguments are not valid JSON ({e}); send one JSON object"
        )),
    }
}

impl Drop for McpSession {
    /// A session dropped without `verify` (a conversation that ended with an
    /// error, a server that stopped answering, `validate`'s replays): its
    /// process is killed and its folder removed now, before its place is
    /// given back; nothing is left to a task that a runtime shutting down
    /// (the CLI exiting) would never run.
    fn drop(&mut self) {
        drop(self.connection.take());
        drop(self.permit.take());
    }
}

#[async_trait]
impl Session for McpSession {
    async fn call(&mut self, call: &ToolCall) -> Result<ToolOutput, EnvError> {
        if !self.tools.policy.contains(&call.name) {
            return Ok(ToolOutput::error(format!(
                "there is no tool named '{}' here; the tools are: {}",
                call.name,
                self.tools.policy.join(", ")
            )));
        }
        match arguments_of(call) {
            Ok(arguments) => self.call_for_policy(&call.name, arguments).await,
            Err(why) => Ok(ToolOutput::error(why)),
        }
    }

    /// A probe may call the `probe_tools` (by default the policy's tools and
    /// the `state_probes`' tools); its text is the result's text blocks, its
    /// structured content the result's `structuredContent`.
    async fn probe(&mut self, call: &ToolCall) -> Result<ProbeOutput, EnvError> {
        let refused = |why: String| ProbeOutput {
            content: format!("Error: {why}"),
            structured: None,
            is_error: true,
        };
        if !self.tools.probes.contains(&call.name) {
            return Ok(refused(format!(
                "'{}' is not one of the probe_tools: {}",
                call.name,
                self.tools.probes.join(", ")
            )));
        }
        let arguments = match arguments_of(call) {
            Ok(arguments) => arguments,
            Err(why) => return Ok(refused(why)),
        };
        Ok(match self.call_tool(&call.name, arguments).await? {
            Answer::Result(result) => {
                let output = probe_output(&result);
                let structured = output.structured.map(|value| {
                    let text = self.hide(&value.to_string());
                    serde_json::from_str(&text).unwrap_or(value)
                });
                ProbeOutput {
                    content: self.hide(&output.content),
                    structured,
                    is_error: output.is_error,
                }
            }
            Answer::Refused(why) => refused(why),
        })
    }

    async fn verify(
        &mut self,
        messages: &[Message],
        criteria: &Criteria,
    ) -> Result<Verification, EnvError> {
        self.close().await;
        if criteria.reward_basis.contains(&Component::Db) {
            return Err(EnvError::Verification(format!(
                "{}: an MCP server's state cannot be replayed and compared (`db`); check what \
                 the agent left behind with `probes` instead",
                self.label
            )));
        }
        let mut parts = std::collections::BTreeMap::new();
        if !criteria.communicate.is_empty() {
            parts.insert(
                Component::Communicate,
                communicate::score(messages, &criteria.communicate),
            );
        }
        Ok(Verification::combine(&criteria.reward_basis, parts))
    }

    fn usage(&self) -> EnvUsage {
        self.usage
    }

    /// What the `state_probes` read, by probe (their JSON output, or its
    /// text when it is not JSON); `None` without probes.
    async fn state(&mut self) -> Result<Option<Value>, EnvError> {
        if self.probes.is_empty() {
            return Ok(None);
        }
        let probes = Arc::clone(&self.probes);
        let mut state = serde_json::Map::new();
        for (i, probe) in probes.iter().enumerate() {
            let output = self.configured_call("state_probes", i, probe).await?;
            let value =
                serde_json::from_str(&output.content).unwrap_or(Value::String(output.content));
            state.insert(probe.key(), value);
        }
        Ok(Some(Value::Object(state)))
    }
}
