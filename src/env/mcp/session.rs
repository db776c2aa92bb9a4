//! One conversation's session with an MCP server: `tools/call` for each of
//! the policy's calls, closed (the process ended, its folder removed) when
//! the conversation is verified or dropped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use rmcp::model::CallToolRequestParams;
use rmcp::ServiceError;
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;

use crate::config::state_calls::StateCall;
use crate::env::{EnvError, EnvUsage, Message, Session, ToolCall, ToolOutput};
use crate::verify::{communicate, Component, Criteria, Verification};

use super::connect::Connection;
use super::output::tool_output;

pub struct McpSession {
    /// `None` once closed.
    connection: Option<Connection>,
    /// A place among the server processes allowed at once, held until the
    /// process has ended.
    permit: Option<OwnedSemaphorePermit>,
    /// The tools offered to the policy.
    tools: Arc<[String]>,
    /// The calls that read the state (`state_probes`).
    probes: Arc<[StateCall]>,
    /// Names the server in errors.
    label: String,
    timeout: Duration,
    usage: EnvUsage,
}

impl McpSession {
    pub fn new(
        connection: Connection,
        permit: OwnedSemaphorePermit,
        tools: Arc<[String]>,
        probes: Arc<[StateCall]>,
        label: String,
        timeout: Duration,
    ) -> Self {
        McpSession {
            connection: Some(connection),
            permit: Some(permit),
            tools,
            probes,
            label,
            timeout,
            usage: EnvUsage::default(),
        }
    }

    fn failed(&self, message: String) -> EnvError {
        let said = self
            .connection
            .as_ref()
            .and_then(|c| c.stderr.as_ref())
            .map(|s| s.said())
            .unwrap_or_default();
        EnvError::Mcp {
            server: self.label.clone(),
            message: format!("{message}{said}"),
        }
    }

    /// `tools/call` of any tool the server lists (the policy's allow-list is
    /// [`Session::call`]'s to enforce): a JSON-RPC error is an error output,
    /// a server that fails or does not answer an `Err`.
    async fn call_tool(
        &mut self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<ToolOutput, EnvError> {
        let Some(connection) = &self.connection else {
            return Err(self.failed("the session was already closed".into()));
        };
        let request = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        let started = Instant::now();
        let answer = tokio::time::timeout(self.timeout, connection.client.call_tool(request)).await;
        self.usage.requests += 1;
        self.usage.wait += started.elapsed();
        match answer {
            Ok(Ok(result)) => Ok(tool_output(&result)),
            // The server answered with a JSON-RPC error: it refused this
            // call (unknown arguments, a tool it does not have); the policy
            // reads why, as it would from any tool.
            Ok(Err(ServiceError::McpError(error))) => Ok(ToolOutput::error(error.message)),
            Ok(Err(e)) => Err(self.failed(format!(
                "failed during the conversation (tools/call {name}): {e}"
            ))),
            Err(_) => Err(self.failed(format!(
                "did not answer tools/call {name} within {} s (timeout_secs)",
                self.timeout.as_secs_f64()
            ))),
        }
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
        let output = self.call_tool(&call.tool, arguments).await?;
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
            shut(connection).await;
        }
        self.permit.take();
    }
}

async fn shut(connection: Connection) {
    let Connection { client, dir, .. } = connection;
    if let Err(e) = client.cancel().await {
        tracing::debug!("closing an MCP session: {e}");
    }
    drop(dir);
}

impl Drop for McpSession {
    /// A session dropped without `verify` (a conversation that ended with an
    /// error) is closed in the background; its place is given back after.
    fn drop(&mut self) {
        let (Some(connection), permit) = (self.connection.take(), self.permit.take()) else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                shut(connection).await;
                drop(permit);
            });
        }
    }
}

#[async_trait]
impl Session for McpSession {
    async fn call(&mut self, call: &ToolCall) -> Result<ToolOutput, EnvError> {
        if !self.tools.contains(&call.name) {
            return Ok(ToolOutput::error(format!(
                "there is no tool named '{}' here; the tools are: {}",
                call.name,
                self.tools.join(", ")
            )));
        }
        let arguments = match serde_json::from_str::<Value>(&call.arguments) {
            Ok(Value::Object(map)) => map,
            Ok(Value::Null) => serde_json::Map::new(),
            Ok(other) => {
                return Ok(ToolOutput::error(format!(
                    "the arguments are {other}, not a JSON object; send one JSON object"
                )))
            }
            Err(e) => {
                return Ok(ToolOutput::error(format!(
                    "the arguments are not valid JSON ({e}); send one JSON object"
                )))
            }
        };
        self.call_tool(&call.name, arguments).await
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
