//! The mock's HTTP face: `/v1/chat/completions`, `/v1/models`, and
//! `/mock/stats` (requests received, for tests that check limits held).

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::behaviour::{Behaviour, MockRole, MODELS};
use super::{policy, user};
use crate::llm::endpoint::SCENARIO_HEADER;
use crate::llm::message::{Message, Role, ToolCall};
use crate::persona::Scenario;

/// Requests the mock received.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MockStats {
    pub requests: u64,
    /// Requests per model name (including modifiers).
    pub by_model: BTreeMap<String, u64>,
}

struct MockState {
    scenarios: HashMap<String, Scenario>,
    stats: Mutex<MockStats>,
}

/// A running mock server; stops when dropped.
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<MockState>,
    shutdown: Option<oneshot::Sender<()>>,
}

impl MockServer {
    /// Serve on `addr` (port 0 picks a free port) with the scenarios it may be asked to play.
    pub async fn start(addr: SocketAddr, scenarios: Vec<Scenario>) -> std::io::Result<MockServer> {
        let state = Arc::new(MockState {
            scenarios: scenarios.into_iter().map(|s| (s.id.clone(), s)).collect(),
            stats: Mutex::new(MockStats::default()),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .route("/v1/models", get(models))
            .route("/mock/stats", get(stats))
            .with_state(state.clone());
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let (tx, rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
            if let Err(e) = served {
                tracing::error!("mock model server stopped: {e}");
            }
        });
        Ok(MockServer {
            addr,
            state,
            shutdown: Some(tx),
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

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

fn error(status: StatusCode, message: &str, kind: &str) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": kind, "code": kind}})),
    )
        .into_response()
}

async fn models() -> Json<serde_json::Value> {
    let data: Vec<_> = MODELS
        .iter()
        .map(|m| json!({"id": m, "object": "model", "owned_by": "usersim-mock"}))
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
}

#[derive(Deserialize)]
struct IncomingMessage {
    role: String,
    #[serde(default)]
    content: Option<serde_json::Value>,
    #[serde(default)]
    tool_calls: Vec<IncomingToolCall>,
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

fn to_message(m: IncomingMessage) -> Option<Message> {
    let content = match m.content {
        Some(serde_json::Value::String(s)) => s,
        _ => String::new(),
    };
    Some(Message {
        role: Role::parse(&m.role)?,
        content,
        tool_calls: m
            .tool_calls
            .into_iter()
            .map(|c| ToolCall {
                id: c.id,
                name: c.function.name,
                arguments: c.function.arguments,
            })
            .collect(),
        tool_call_id: m.tool_call_id,
    })
}

async fn chat_completions(
    State(state): State<Arc<MockState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request: IncomingRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("invalid request body: {e}"),
                "invalid_request_error",
            )
        }
    };
    let seen = {
        let Ok(mut stats) = state.stats.lock() else {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "stats lock poisoned",
                "server_error",
            );
        };
        stats.requests += 1;
        let n = stats.by_model.entry(request.model.clone()).or_insert(0);
        *n += 1;
        *n
    };
    let behaviour = match Behaviour::parse(&request.model) {
        Ok(b) => b,
        Err(message) => return error(StatusCode::NOT_FOUND, &message, "model_not_found"),
    };
    let m = &behaviour.modifiers;
    if m.ratelimit_once && seen == 1 {
        let mut response = error(
            StatusCode::TOO_MANY_REQUESTS,
            "Rate limit reached (mock); retry after 1 second",
            "rate_limit_exceeded",
        );
        response
            .headers_mut()
            .insert("retry-after", axum::http::HeaderValue::from_static("1"));
        return response;
    }
    if m.error500_once && seen == 1 {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "<html><body>Internal Server Error</body></html>",
        )
            .into_response();
    }
    if m.malformed {
        return (
            StatusCode::OK,
            [("content-type", "application/json")],
            "{\"id\":\"mock\",\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"Hel",
        )
            .into_response();
    }

    if m.slow {
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    }
    let scenario = headers
        .get(SCENARIO_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|id| state.scenarios.get(id));
    let seed = request.seed.unwrap_or(0) as u64;
    let prompt_chars: usize = request
        .messages
        .iter()
        .map(|m| match &m.content {
            Some(serde_json::Value::String(s)) => s.len(),
            _ => 0,
        })
        .sum();
    let messages: Vec<Message> = request
        .messages
        .into_iter()
        .filter_map(to_message)
        .collect();
    let reply = match behaviour.role {
        MockRole::Policy if m.empty => Message::assistant(""),
        MockRole::Policy => policy::respond(scenario, seed, &messages, m),
        MockRole::User => Message::assistant(user::respond(scenario, &messages, m)),
        MockRole::Judge => {
            Message::assistant("The response is reasonable and complete. Rating: [[7]]")
        }
    };
    let completion_chars = reply.content.len()
        + reply
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.len())
            .sum::<usize>();
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
    let prompt_tokens = prompt_chars / 4 + 4 * messages.len() + 1;
    let completion_tokens = completion_chars / 4 + 1;
    Json(json!({
        "id": format!("mockcmpl-{seen}"),
        "object": "chat.completion",
        "created": 0,
        "model": request.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens
        }
    }))
    .into_response()
}
