//! A NeMo Gym resources server as an environment
//! (`[environment] kind = "nemo_gym"`).
//!
//! Per conversation: `POST /seed_session` with the row (as NeMo Gym's own
//! agent sends it), keeping the session cookie the server sets; `POST /{tool}`
//! with each call's JSON arguments, the reply going back to the policy;
//! `POST /verify` with the row and the conversation as a Responses-API
//! `response`; `POST /close_session`. Tools and prompts come with each row
//! (the scenario), not with the environment. A server that cannot be reached
//! (after the retry policy's retries), a 5xx, or a `/verify` reply that is not
//! a verification end the conversation as `env_error`: it is not stored as a
//! reward of 0. A tool the row offers that the server does not serve (404) is,
//! as NeMo Gym's agent has it, an error output the policy reads, and the
//! conversation goes on to `/verify` (`xlam_fc`'s tools have no endpoints and
//! its verify compares only the calls); `on_missing_tool = "env_error"` fails
//! the conversation instead.
//!
//! Opening the environment reads the server's OpenAPI document: a server that
//! speaks NeMo Gym's Gymnasium protocol (`/reset`, `/step`; blackjack, wordle,
//! ...) is refused, since sparring does not drive it; and a row's fields that
//! the server's verify reply model declares (a recorded rollout used as a row
//! carries `reward`, `equivalence_score`, ...) are never sent to it.
//!
//! Scenario synthesis needs a session's state. NeMo Gym's protocol has no
//! call that reads it (`/seed_session`, tools, `/verify`, `/close_session`),
//! so it comes from `state_probes`: tool calls of the server's own that read
//! it, as `get_counter_value` does for `example_session_state_mgmt` (the one
//! server of nemo-gym 0.7.0 whose whole state a tool returns;
//! `workplace_assistant`'s search tools read parts of its state, a page at a
//! time). The records a generator is shown are the probes' outputs on a
//! session seeded with `records_row`.

pub mod openapi;
pub mod reply;
pub mod reverify;
pub mod rollout;
pub mod server;
pub mod tool_name;
pub mod training;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use crate::config::state_calls::StateCall;
use crate::config::{MissingTool, NemoGymConfig};
use crate::llm::message::{Message, ToolCall, ToolSpec};
use crate::llm::LlmError;
use crate::persona::nemo_gym::REQUEST_FIELD;
use crate::verify::{Criteria, Verification};

use super::{EnvError, EnvUsage, Environment, InitialState, Session, ToolOutput};
use openapi::{Protocol, ServerModels};
use server::{Cookies, Reply, ResourcesServer, LOGGED};
use tool_name::normalize_tool_name;

pub struct NemoGymEnvironment {
    server: Arc<ResourcesServer>,
    name: String,
    probes: Arc<[StateCall]>,
    records_row: Value,
    on_missing_tool: MissingTool,
    /// What the server's OpenAPI document says (unknown until `connect`).
    models: Arc<ServerModels>,
    /// Sessions opened so far, to name each one for `/close_session`.
    opened: AtomicU64,
}

impl NemoGymEnvironment {
    pub fn new(config: &NemoGymConfig) -> Result<Self, EnvError> {
        let server = ResourcesServer::new(config).map_err(|message| EnvError::Remote {
            url: config.base_url.clone(),
            message,
        })?;
        Ok(NemoGymEnvironment {
            name: config.label(),
            server: Arc::new(server),
            probes: config.state_probes.iter().cloned().collect(),
            records_row: config
                .records_row
                .clone()
                .unwrap_or_else(|| Value::Object(Map::new())),
            on_missing_tool: config.on_missing_tool,
            models: Arc::new(ServerModels::unknown()),
            opened: AtomicU64::new(0),
        })
    }

    /// [`NemoGymEnvironment::new`], refused when the server's OpenAPI
    /// document says it speaks the Gymnasium protocol. A server that serves
    /// no document (or is down) is taken as it is: its calls say what is wrong.
    pub async fn connect(config: &NemoGymConfig) -> Result<Self, EnvError> {
        let mut environment = Self::new(config)?;
        let models = openapi::fetch(&environment.server).await;
        if models.protocol == Protocol::Gymnasium {
            return Err(remote(
                &environment.server,
                "speaks NeMo Gym's Gymnasium protocol (POST /reset and /step, no \
                 /seed_session or /verify: blackjack, wordle, grl_sokoban, grl_tetris, \
                 indian_banking, openair_congestion, tales, example_multi_turn_gymnasium), \
                 which sparring does not drive; kind = \"nemo_gym\" needs a resources server \
                 (/seed_session, a route per tool, /verify)",
            ));
        }
        environment.models = Arc::new(models);
        Ok(environment)
    }

    pub fn server(&self) -> &Arc<ResourcesServer> {
        &self.server
    }
}

fn remote(server: &ResourcesServer, message: impl Into<String>) -> EnvError {
    EnvError::Remote {
        url: server.base_url().to_string(),
        message: message.into(),
    }
}

fn failed(server: &ResourcesServer, what: &str, e: LlmError) -> EnvError {
    remote(server, format!("{what} failed ({}): {e}", e.class()))
}

#[async_trait]
impl Environment for NemoGymEnvironment {
    fn name(&self) -> &str {
        &self.name
    }

    /// The rows bring their own prompts.
    fn policy_text(&self) -> &str {
        ""
    }

    /// The rows bring their own tools.
    fn tools(&self) -> &[ToolSpec] {
        &[]
    }

    async fn open(&self, init: &InitialState) -> Result<Box<dyn Session>, EnvError> {
        Ok(Box::new(self.open_session(init).await?))
    }

    /// The `state_probes`' outputs on a session seeded with `records_row`,
    /// each list cut to `n` records from a place `seed` picks.
    async fn sample_records(&self, seed: u64, n: usize) -> Result<Value, EnvError> {
        if self.probes.is_empty() {
            return Err(EnvError::NotSampleable {
                environment: self.name.clone(),
                reason: "NeMo Gym's protocol has no call that reads a session's state, so \
                         synthesis needs the server's own tools that do: add \
                         environment.state_probes, e.g. state_probes = [{ tool = \
                         \"get_counter_value\" }] for example_session_state_mgmt, and \
                         records_row with the fields its /seed_session needs. A server \
                         whose tools cannot read its state (mcqa, calendar, \
                         example_multi_step) cannot be synthesized over"
                    .to_string(),
            });
        }
        let init = InitialState {
            seed,
            data: self.records_row.clone(),
        };
        let mut session = self.open_session(&init).await?;
        let state = session.state().await;
        session.close().await;
        Ok(crate::env::sampled::bounded(
            &state?.unwrap_or_default(),
            seed,
            n,
        ))
    }
}

impl NemoGymEnvironment {
    /// A session seeded with the row `init.data`.
    async fn open_session(&self, init: &InitialState) -> Result<NemoGymSession, EnvError> {
        let Value::Object(row) = &init.data else {
            return Err(EnvError::InitialState(
                "a NeMo Gym environment needs its scenario's row (the scenarios must come from \
                 [dataset] format = \"nemo_gym\")"
                    .into(),
            ));
        };
        let n = self.opened.fetch_add(1, Ordering::Relaxed);
        let mut session = NemoGymSession {
            server: self.server.clone(),
            cookies: Cookies::default(),
            tools: row_tool_names(row),
            // A row may be a recorded rollout: what its verify answered
            // (`reward`, `equivalence_score`, ...) is not sent again.
            row: row
                .iter()
                .filter(|(k, _)| k.as_str() != "response" && !self.models.is_output(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            probes: self.probes.clone(),
            on_missing_tool: self.on_missing_tool,
            id: format!("sparring-{}-{n}", init.seed),
            usage: EnvUsage::default(),
        };
        session.seed().await?;
        Ok(session)
    }
}

/// The names of the tools a row offers.
fn row_tool_names(row: &Map<String, Value>) -> Vec<String> {
    row.get(REQUEST_FIELD)
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            t.get("function")
                .unwrap_or(t)
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect()
}

pub struct NemoGymSession {
    server: Arc<ResourcesServer>,
    cookies: Cookies,
    tools: Vec<String>,
    row: Map<String, Value>,
    /// The calls that read the state (`state_probes`).
    probes: Arc<[StateCall]>,
    on_missing_tool: MissingTool,
    /// Names this session in `/close_session`.
    id: String,
    usage: EnvUsage,
}

/// A reply's JSON, or what was wrong with it (never the body's text).
fn reply_json(reply: &Reply, what: &str) -> Result<Value, String> {
    serde_json::from_slice(&reply.body).map_err(|_| {
        format!(
            "{} with a body that is not JSON ({LOGGED})",
            reply.status_line(what)
        )
    })
}

/// What the policy reads of a tool's refusal (a 422 names the argument the
/// server did not accept, a 404 says it serves no such tool), cut short.
const TOOL_ERROR_CHARS: usize = 2000;

impl NemoGymSession {
    /// A request to the server in this session, its time counted.
    async fn post(&mut self, path: &str, body: &Value) -> Result<Reply, LlmError> {
        let started = std::time::Instant::now();
        let result = self.server.post(path, body, &mut self.cookies).await;
        self.usage.requests += 1;
        self.usage.wait += started.elapsed();
        result
    }

    async fn seed(&mut self) -> Result<(), EnvError> {
        let body = Value::Object(self.row.clone());
        let reply = self
            .post("/seed_session", &body)
            .await
            .map_err(|e| failed(&self.server, "POST /seed_session", e))?;
        if !reply.is_success() {
            return Err(remote(
                &self.server,
                format!(
                    "POST /seed_session was refused ({}; {LOGGED})",
                    reply.status_line("POST /seed_session was refused")
                ),
            ));
        }
        Ok(())
    }

    /// `/close_session` frees the server's state; its failure costs the
    /// conversation nothing, so it is only logged.
    async fn close(&mut self) {
        let body = json!({"resources_session_id": self.id, "episode_id": {"rollout_id": self.id}});
        match self.post("/close_session", &body).await {
            Ok(reply) if reply.is_success() => {}
            Ok(reply) => tracing::debug!(
                status = reply.status,
                "the resources server refused /close_session: {}",
                reply.excerpt()
            ),
            Err(e) => tracing::warn!("POST /close_session failed: {e}"),
        }
    }
}

#[async_trait]
impl Session for NemoGymSession {
    async fn call(&mut self, call: &ToolCall) -> Result<ToolOutput, EnvError> {
        let name = normalize_tool_name(&call.name);
        if !self.tools.iter().any(|t| t == name) {
            return Ok(ToolOutput::error(format!(
                "there is no tool named '{}' here; the tools are: {}",
                call.name,
                self.tools.join(", ")
            )));
        }
        let arguments: Value = match serde_json::from_str(&call.arguments) {
            Ok(arguments) => arguments,
            Err(e) => {
                return Ok(ToolOutput::error(format!(
                    "the arguments are not valid JSON ({e}); send one JSON object"
                )))
            }
        };
        let path = format!("/{name}");
        let reply = self
            .post(&path, &arguments)
            .await
            .map_err(|e| failed(&self.server, &format!("POST {path}"), e))?;
        match reply.status {
            200..=299 => Ok(ToolOutput::ok(
                String::from_utf8_lossy(&reply.body).into_owned(),
            )),
            404 if self.on_missing_tool == MissingTool::EnvError => Err(remote(
                &self.server,
                format!(
                    "has no tool '{name}' (HTTP 404 on POST {path}), although the row offers it \
                     to the policy; is base_url the resources server these rows were written \
                     for? (on_missing_tool = \"env_error\"; \"output\" gives the reply to the \
                     policy, as NeMo Gym's agent does)"
                ),
            )),
            // Like NeMo Gym's own agent: what the server said goes back to
            // the model (a 422 names the argument it did not accept, a 404
            // says the server serves no such tool).
            status => Ok(ToolOutput::error(format!(
                "HTTP {status}: {}",
                reply.excerpt_of(TOOL_ERROR_CHARS)
            ))),
        }
    }

    async fn verify(
        &mut self,
        messages: &[Message],
        _criteria: &Criteria,
    ) -> Result<Verification, EnvError> {
        let body = rollout::verify_request(&self.row, messages, "sparring-policy");
        let result = self.post("/verify", &body).await;
        self.close().await;
        let reply = result.map_err(|e| failed(&self.server, "POST /verify", e))?;
        if !reply.is_success() {
            return Err(remote(
                &self.server,
                format!(
                    "POST /verify was refused ({}; {LOGGED})",
                    reply.status_line("POST /verify was refused")
                ),
            ));
        }
        let json = reply_json(&reply, "POST /verify answered")
            .map_err(|e| remote(&self.server, format!("POST /verify answered {e}")))?;
        let Value::Object(request) = body else {
            return Err(remote(&self.server, "the verify request is not an object"));
        };
        reply::verification(&request, &json)
            .map_err(|e| remote(&self.server, format!("POST /verify answered, but {e}")))
    }

    fn usage(&self) -> EnvUsage {
        self.usage
    }

    /// What the `state_probes` read, by probe; `None` without probes. A
    /// probe the server refuses is the environment failing (the config
    /// names a call it does not answer), not an output.
    async fn state(&mut self) -> Result<Option<Value>, EnvError> {
        if self.probes.is_empty() {
            return Ok(None);
        }
        let probes = Arc::clone(&self.probes);
        let mut state = Map::new();
        for (i, probe) in probes.iter().enumerate() {
            let path = format!("/{}", normalize_tool_name(&probe.tool));
            let reply = self
                .post(&path, &probe.arguments)
                .await
                .map_err(|e| failed(&self.server, &format!("POST {path}"), e))?;
            if !reply.is_success() {
                return Err(remote(
                    &self.server,
                    format!(
                        "environment.state_probes[{i}] ({}): POST {path} was refused ({}; {LOGGED})",
                        probe.tool,
                        reply.status_line("a state probe was refused")
                    ),
                ));
            }
            let value = serde_json::from_slice(&reply.body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&reply.body).into()));
            state.insert(probe.key(), value);
        }
        Ok(Some(Value::Object(state)))
    }
}
