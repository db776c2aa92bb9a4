//! The mock's HTTP face: `/v1/chat/completions`, `/v1/responses` (see
//! `super::responses`), vLLM's `/tokenize` (see [`super::tokens`]), `/v1/models`, the Batch
//! API (`/v1/files`, `/v1/batches`: see [`super::batch`]), and `/mock/stats`
//! (requests received, for tests that check limits held).
//! Every completion first waits the configured latency, then may be answered
//! with an injected fault (see [`super::faults`]), then with its scripted reply
//! (`script_turn`, whichever wire format asked).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::watch;

use super::behaviour::{Behaviour, MockRole, MODELS};
use super::faults::{self, openai_error as error};
use super::stats::{Arrival, MockStats};
use super::{answer, judge, policy, replay, tools, user, user_tools};
use crate::config::{MockConfig, MockFault};
use crate::llm::endpoint::SCENARIO_HEADER;
use crate::llm::message::{Message, Role, ToolCall};
use crate::persona::Scenario;

pub(super) struct MockState {
    pub(super) scenarios: HashMap<String, Scenario>,
    /// The scenario of a request that names none, by its first user message.
    openings: super::openings::Openings,
    pub(super) config: MockConfig,
    pub(super) stats: Mutex<MockStats>,
    /// Files and batches of the Batch API.
    pub(super) batch: super::batch::BatchState,
    /// Closed when the server stops, so held requests end instead of keeping a
    /// graceful shutdown waiting for them.
    stopping: watch::Receiver<()>,
}

/// A running mock server; stops when dropped.
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<MockState>,
    /// Dropping it closes the channel, which stops the server.
    _stop: watch::Sender<()>,
}

impl MockServer {
    /// Serve on `addr` (port 0 picks a free port) with the scenarios it may be asked
    /// to play, and the latency and faults of `config`.
    pub async fn start(
        addr: SocketAddr,
        scenarios: Vec<Scenario>,
        config: MockConfig,
    ) -> std::io::Result<MockServer> {
        let (stop, stopping) = watch::channel(());
        let config = MockConfig {
            // NaN compares false with everything, so it injects nothing, like 0.
            fault_rate: config.fault_rate.clamp(0.0, 1.0),
            ..config
        };
        let state = Arc::new(MockState {
            openings: super::openings::Openings::of(&scenarios),
            scenarios: scenarios.into_iter().map(|s| (s.id.clone(), s)).collect(),
            config,
            stats: Mutex::new(MockStats::default()),
            batch: Default::default(),
            stopping: stopping.clone(),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .route("/v1/responses", post(super::responses::responses))
            .route("/tokenize", post(super::tokens::tokenize))
            .route("/v1/models", get(models))
            .route("/mock/stats", get(stats))
            .merge(super::batch::routes())
            .with_state(state.clone());
        let listener = super::listen::bind(addr)?;
        let addr = listener.local_addr()?;
        tokio::spawn(super::listen::serve(listener, app, stopping));
        Ok(MockServer {
            addr,
            state,
            _stop: stop,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The OpenAI-compatible base URL, e.g. `http://127.0.0.1:41234/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn stats(&self) -> MockStats {
        self.state
            .stats
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }
}

/// Wait `duration` unless the server stops first; `false` if it stopped.
async fn hold(state: &MockState, duration: Duration) -> bool {
    if duration.is_zero() {
        return true;
    }
    let mut stopping = state.stopping.clone();
    tokio::select! {
        () = tokio::time::sleep(duration) => true,
        _ = stopping.changed() => false,
    }
}

fn shutting_down() -> Response {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "the mock model server is shutting down",
        "service_unavailable",
    )
}

fn unix_second() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

async fn models() -> Json<serde_json::Value> {
    let data: Vec<_> = MODELS
        .iter()
        .map(|m| json!({"id": m, "object": "model", "owned_by": "sparring-mock"}))
        .collect();
    Json(json!({"object": "list", "data": data}))
}

async fn stats(State(state): State<Arc<MockState>>) -> Json<MockStats> {
    Json(state.stats.lock().map(|s| s.clone()).unwrap_or_default())
}

#[derive(Deserialize)]
struct IncomingRequest {
    model: String,
    #[serde(default)]
    messages: Vec<IncomingMessage>,
    #[serde(default)]
    seed: Option<i64>,
    /// `false`: the mock policy makes one tool call per reply.
    #[serde(default)]
    parallel_tool_calls: Option<bool>,
    #[serde(default)]
    tools: Vec<IncomingTool>,
    /// `metadata.sparring_scenario` names the scenario when no header does.
    #[serde(default)]
    metadata: Option<HashMap<String, serde_json::Value>>,
    /// vLLM's token capture: log probabilities, tokens named `token_id:N`,
    /// and the prompt's and generation's ids.
    #[serde(default)]
    logprobs: Option<bool>,
    #[serde(default)]
    return_tokens_as_token_ids: Option<bool>,
    #[serde(default)]
    return_token_ids: Option<bool>,
    /// `true`: the reply as Server-Sent Events of chunks.
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    stream_options: Option<StreamOptions>,
}

/// `stream_options` of a streamed request.
#[derive(Deserialize, Default)]
pub(super) struct StreamOptions {
    /// A last chunk with the usage and no choices.
    #[serde(default)]
    pub(super) include_usage: Option<bool>,
}

#[derive(Deserialize)]
struct IncomingTool {
    function: IncomingToolName,
}

#[derive(Deserialize)]
struct IncomingToolName {
    name: String,
}

#[derive(Deserialize)]
struct IncomingMessage {
    role: String,
    #[serde(default)]
    content: Option<serde_json::Value>,
    /// `null` as OpenAI's Python types write an assistant message without
    /// calls (verifiers sends them so), or left out.
    #[serde(default)]
    tool_calls: Option<Vec<IncomingToolCall>>,
    #[serde(default)]
    tool_call_id: Option<String>,
}

#[derive(Deserialize)]
struct IncomingToolCall {
    id: String,
    function: IncomingFunction,
}

#[derive(Deserialize)]
struct IncomingFunction {
    name: String,
    arguments: String,
}

/// A chat message as JSON, read as [`to_message`] reads it.
pub(super) fn message_of_value(value: serde_json::Value) -> Option<Message> {
    to_message(serde_json::from_value(value).ok()?)
}

fn to_message(m: IncomingMessage) -> Option<Message> {
    let content = match m.content {
        Some(serde_json::Value::String(s)) => s,
        // Content parts (NeMo Gym's converter may send them): their text.
        Some(serde_json::Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
            .collect(),
        _ => String::new(),
    };
    Some(Message {
        role: Role::parse(&m.role)?,
        content: content.into(),
        tool_calls: m
            .tool_calls
            .into_iter()
            .flatten()
            .map(|c| ToolCall {
                id: c.id,
                name: c.function.name,
                arguments: c.function.arguments,
            })
            .collect(),
        tool_call_id: m.tool_call_id,
        reasoning: None,
    })
}

pub(super) async fn chat_completions(
    State(state): State<Arc<MockState>>,
    version: axum::http::Version,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let handler_started = std::time::Instant::now();
    let request: IncomingRequest = match read_body(&body) {
        Ok(r) => r,
        Err(response) => return *response,
    };
    let capture = super::tokens::Capture {
        logprobs: request.logprobs.unwrap_or(false),
        as_token_ids: request.return_tokens_as_token_ids.unwrap_or(false),
        token_ids: request.return_token_ids.unwrap_or(false),
    };
    let stream = request.stream.unwrap_or(false).then(|| {
        request
            .stream_options
            .unwrap_or_default()
            .include_usage
            .unwrap_or(false)
    });
    let asked = Asked {
        scenario: scenario_id(&headers, request.metadata.as_ref()),
        model: request.model,
        seed: request.seed.unwrap_or(0) as u64,
        parallel: request.parallel_tool_calls.unwrap_or(true),
        messages: request
            .messages
            .into_iter()
            .filter_map(to_message)
            .collect(),
        offered: request.tools.into_iter().map(|t| t.function.name).collect(),
    };
    let answered = match script_turn(&state, version, &headers, asked, handler_started).await {
        Ok(answered) => answered,
        Err(response) => return response,
    };
    let Answered {
        reply,
        model,
        seen,
        prompt_tokens,
        completion_tokens,
        announced,
        prompt_text,
        ..
    } = answered;
    let finish = if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let tool_calls: Vec<_> = reply
        .tool_calls
        .iter()
        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
        .collect();
    let mut message = json!({"role": "assistant", "content": reply.content});
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
        message["content"] = serde_json::Value::Null;
    }
    let mut choice = json!({"index": 0, "message": message, "finish_reason": finish});
    let mut body = json!({
        "id": format!("mockcmpl-{seen}"),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens
        }
    });
    capture.fill(&prompt_text, &reply, &mut body, &mut choice);
    body["choices"] = json!([choice]);
    if let Some(include_usage) = stream {
        return super::stream::sse(super::stream::chat_chunks(&body, include_usage));
    }
    with_announced(Json(body), announced)
}

/// A JSON request body, or the 400 that says why it is not one.
pub(super) fn read_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Box<Response>> {
    serde_json::from_slice(body).map_err(|e| {
        Box::new(error(
            StatusCode::BAD_REQUEST,
            &format!("invalid request body: {e}"),
            "invalid_request_error",
        ))
    })
}

/// The body, with the remaining-tokens headers when the mock announces them.
pub(super) fn with_announced(
    body: Json<serde_json::Value>,
    announced: Option<(u64, u64)>,
) -> Response {
    match announced {
        Some((remaining, reset_secs)) => (
            [
                ("x-ratelimit-remaining-tokens", remaining.to_string()),
                ("x-ratelimit-reset-tokens", format!("{reset_secs}s")),
            ],
            body,
        )
            .into_response(),
        None => body.into_response(),
    }
}

/// The scenario a request names: the `X-Sparring-Scenario` header, else
/// `metadata.sparring_scenario` (the Responses API's, which a proxy such as
/// NeMo Gym's `vllm_model` passes on in its chat completions).
pub(super) fn scenario_id(
    headers: &HeaderMap,
    metadata: Option<&HashMap<String, serde_json::Value>>,
) -> Option<String> {
    if let Some(id) = headers.get(SCENARIO_HEADER).and_then(|v| v.to_str().ok()) {
        return Some(id.to_string());
    }
    metadata?
        .get(crate::llm::responses::request::SCENARIO_METADATA_KEY)?
        .as_str()
        .map(str::to_string)
}

/// What a request asks the mock, whichever wire format it came in.
pub(super) struct Asked {
    pub(super) model: String,
    pub(super) messages: Vec<Message>,
    pub(super) seed: u64,
    pub(super) parallel: bool,
    /// The tools offered, by name.
    pub(super) offered: Vec<String>,
    pub(super) scenario: Option<String>,
}

/// The scripted reply and what it counts.
pub(super) struct Answered {
    pub(super) reply: Message,
    pub(super) model: String,
    pub(super) behaviour: Behaviour,
    /// Requests for this model name so far, this one included.
    pub(super) seen: u64,
    pub(super) prompt_tokens: usize,
    pub(super) completion_tokens: usize,
    /// Remaining tokens and their reset, when the mock announces them.
    pub(super) announced: Option<(u64, u64)>,
    /// The prompt as the mock's tokenizer reads it (see `super::tokens`).
    pub(super) prompt_text: String,
}

/// One request: counted, held for its latency, maybe failed by an injected
/// fault or a model-name modifier, else answered by the scripted role.
pub(super) async fn script_turn(
    state: &MockState,
    version: axum::http::Version,
    headers: &HeaderMap,
    asked: Asked,
    handler_started: std::time::Instant,
) -> Result<Answered, Response> {
    let arrived = unix_second();
    let arrival = {
        let Ok(mut stats) = state.stats.lock() else {
            return Err(error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "stats lock poisoned",
                "server_error",
            ));
        };
        *stats
            .by_http_version
            .entry(format!("{version:?}"))
            .or_default() += 1;
        let bearer = headers
            .get(axum::http::header::AUTHORIZATION)
            .map_or("none", |v| v.to_str().unwrap_or("unreadable"));
        *stats
            .by_authorization
            .entry(bearer.to_string())
            .or_default() += 1;
        stats.record_request(&asked.model, arrived)
    };
    let Arrival {
        index,
        seen_for_model: seen,
    } = arrival;
    let draw = faults::draw(&state.config, index);
    if !hold(state, draw.delay).await {
        return Err(shutting_down());
    }
    if let Some(fault) = draw.fault {
        if let Ok(mut stats) = state.stats.lock() {
            stats.record_fault(fault.name());
        }
        match fault {
            MockFault::RateLimited => return Err(faults::rate_limited()),
            MockFault::ServerError => return Err(faults::server_error()),
            MockFault::Unavailable => return Err(faults::unavailable()),
            MockFault::Malformed => return Err(faults::malformed()),
            MockFault::Truncated => return Err(faults::truncated()),
            // A very slow server: a client with a shorter timeout gives up first;
            // one that waits gets the normal reply.
            MockFault::Timeout => {
                if !hold(state, faults::TIMEOUT_HOLD).await {
                    return Err(shutting_down());
                }
            }
        }
    }
    let behaviour = match Behaviour::parse(&asked.model) {
        Ok(b) => b,
        Err(message) => return Err(error(StatusCode::NOT_FOUND, &message, "model_not_found")),
    };
    let m = &behaviour.modifiers;
    if m.ratelimit_once && seen == 1 {
        return Err(faults::rate_limited());
    }
    if m.error500_once && seen == 1 {
        return Err(faults::server_error());
    }
    if m.malformed {
        return Err(faults::malformed());
    }

    if m.slow && !hold(state, Duration::from_secs(2)).await {
        return Err(shutting_down());
    }
    let messages = asked.messages;
    // A request that names no scenario (an agent framework calling the mock
    // as its model) plays the one its first user message opens.
    let scenario = match asked.scenario.as_deref() {
        Some(id) => state.scenarios.get(id),
        None => state
            .openings
            .scenario_of(&messages)
            .and_then(|id| state.scenarios.get(id)),
    };
    let prompt_chars: usize = messages.iter().map(|m| m.content.len()).sum();
    if let Ok(mut stats) = state.stats.lock() {
        stats.record_tool_calls_seen(&asked.model, &messages);
    }
    let seed = asked.seed;
    let reply = match behaviour.role {
        MockRole::Policy if m.empty => Message::assistant(""),
        MockRole::Policy => match scenario {
            Some(s) if replay::plays(s) => replay::policy(s, seed, &messages, m),
            Some(s) if answer::plays(s) => answer::policy(s, seed, m),
            _ => policy::respond(scenario, seed, &messages, m, asked.parallel),
        },
        MockRole::User => match user_tools::respond(&messages, &asked.offered, m) {
            Some(reply) => reply,
            None => Message::assistant(match scenario.filter(|s| replay::plays(s)) {
                Some(s) if !m.empty => replay::user(s, &messages),
                _ => user::respond(scenario, seed, &messages, m),
            }),
        },
        MockRole::Tools => Message::assistant(tools::respond(&messages, seed, m)),
        MockRole::Synth => {
            let prompt: Vec<&str> = messages.iter().map(|m| &*m.content).collect();
            Message::assistant(super::synth::respond(&prompt.join("\n")))
        }
        MockRole::Miner => {
            let prompt: Vec<&str> = messages.iter().map(|m| &*m.content).collect();
            Message::assistant(super::mine::respond(&prompt.join("\n"), m.garbled))
        }
        MockRole::Judge => {
            let prompt: Vec<&str> = messages.iter().map(|m| &*m.content).collect();
            Message::assistant(judge::respond(&prompt.join("\n"), m, seen))
        }
    };
    let completion_chars = reply.content.len()
        + reply
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.len())
            .sum::<usize>();
    let prompt_tokens = m.reported(prompt_chars / 4 + 4 * messages.len() + 1);
    let completion_tokens = m.reported(completion_chars / 4 + 1);
    let mut announced = None;
    if let Ok(mut stats) = state.stats.lock() {
        stats.record_tokens(
            &asked.model,
            arrived,
            (prompt_tokens + completion_tokens) as u64,
        );
        announced = state
            .config
            .announced_tokens_per_minute
            .map(|limit| stats.remaining_tokens(limit, arrived));
        if draw.fault.is_none() && !m.slow {
            stats.record_excess(handler_started.elapsed().saturating_sub(draw.delay));
        }
    }
    Ok(Answered {
        prompt_text: super::tokens::prompt_text(&messages, &asked.offered),
        reply,
        model: asked.model,
        behaviour,
        seen,
        prompt_tokens,
        completion_tokens,
        announced,
    })
}
