//! OpenEnv's WebSocket session protocol on `/ws`: one session per
//! connection, holding one of the server's places from the upgrade to the
//! close (OpenEnv's `max_concurrent_envs`). Messages `reset` (`data`: what
//! opens the episode), `step` (`data`: the action), `state`, `close`, and
//! `mcp` (JSON-RPC `tools/list` and `tools/call`, a call being a step with
//! that one tool call); replies `observation`, `state`, `mcp` and `error`
//! (`data.code`: OpenEnv's `WSErrorCode`). A wrong message is answered
//! with an error and the session goes on; a connection that closes, drops
//! or idles out takes its episode with it, stored only if it had ended.

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::stepped::{too_large, Invalid, Live, OpenRequest, SessionError, Sessions, WsCode};

use super::OpenEnvState;

/// Largest message read: a 10 MB action is read whole and refused by its
/// size, the session going on; a larger frame closes the connection
/// (1009, message too big), its episode unstored.
pub const WS_MAX_MESSAGE: usize = 12 * 1024 * 1024;
/// Largest message acted on: an action's limit and room for its envelope.
const MAX_ACTED_ON: usize = crate::stepped::MAX_ACTION_BYTES + 64 * 1024;

pub(super) async fn upgrade(ws: WebSocketUpgrade, State(state): State<OpenEnvState>) -> Response {
    ws.max_message_size(WS_MAX_MESSAGE)
        .max_frame_size(WS_MAX_MESSAGE)
        .on_upgrade(move |socket| connection(socket, state))
}

/// What to do after a message.
enum Reply {
    Send(Value),
    Close,
}

fn error_message(code: WsCode, message: String, details: Value) -> Value {
    let mut data = json!({"message": message, "code": code.as_str()});
    if let (Some(map), Value::Object(details)) = (data.as_object_mut(), details) {
        map.extend(details);
    }
    json!({"type": "error", "data": data})
}

fn session_error(e: &SessionError) -> Value {
    if let SessionError::Store(inner) = e {
        tracing::error!("stepped session: the store failed: {inner}");
    }
    error_message(e.ws_code(), e.message(), e.details())
}

async fn send(socket: &mut WebSocket, value: &Value) -> bool {
    socket
        .send(Message::Text(value.to_string().into()))
        .await
        .is_ok()
}

async fn connection(mut socket: WebSocket, state: OpenEnvState) {
    let slot = match state.sessions.reserve() {
        Ok(slot) => slot,
        Err(e) => {
            send(&mut socket, &session_error(&e)).await;
            let _ = socket.send(Message::Close(None)).await;
            return;
        }
    };
    let idle = state.sessions.limits().idle;
    let mut live: Option<Live> = None;
    loop {
        let message = match tokio::time::timeout(idle, socket.recv()).await {
            Err(_) => {
                let id = live.as_ref().map_or("", |l| l.id()).to_string();
                let expired = SessionError::Expired {
                    id,
                    idle_secs: idle.as_secs(),
                };
                send(&mut socket, &session_error(&expired)).await;
                break;
            }
            // The client went away (or broke the protocol, or sent a
            // frame over the limit): its episode goes with it.
            Ok(None) | Ok(Some(Err(_))) => break,
            Ok(Some(Ok(message))) => message,
        };
        let text = match message {
            Message::Text(text) => text,
            Message::Binary(_) => {
                let reply = error_message(
                    WsCode::InvalidJson,
                    "Invalid JSON: a binary frame; send each message as a JSON text frame".into(),
                    json!({}),
                );
                if !send(&mut socket, &reply).await {
                    break;
                }
                continue;
            }
            Message::Ping(_) | Message::Pong(_) => continue,
            Message::Close(_) => break,
        };
        match handle(&state, &mut live, text.as_str()).await {
            Reply::Send(reply) => {
                if !send(&mut socket, &reply).await {
                    break;
                }
            }
            Reply::Close => break,
        }
    }
    if let Some(live) = &live {
        if !live.is_over() {
            tracing::info!(session = %live.id(), "the connection ended mid-episode; nothing stored");
        }
    }
    drop(live);
    drop(slot);
    let _ = socket.send(Message::Close(None)).await;
}

/// The fields of a message besides `type`, and whether `data` is required.
fn check_fields(message: &Map<String, Value>, allowed: &[&str]) -> Result<(), Invalid> {
    match message
        .keys()
        .find(|k| k.as_str() != "type" && !allowed.contains(&k.as_str()))
    {
        Some(extra) => Err(Invalid::at(
            extra.as_str(),
            "is not a field of this message (OpenEnv's messages are {\"type\", \"data\"})",
        )),
        None => Ok(()),
    }
}

async fn handle(state: &OpenEnvState, live: &mut Option<Live>, text: &str) -> Reply {
    if text.len() > MAX_ACTED_ON {
        return Reply::Send(session_error(&SessionError::Invalid(too_large(text.len()))));
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Reply::Send(error_message(
                WsCode::InvalidJson,
                format!("Invalid JSON: {e}"),
                json!({}),
            ))
        }
    };
    let Value::Object(mut message) = value else {
        return Reply::Send(error_message(
            WsCode::InvalidJson,
            "Invalid JSON: a message is an object {\"type\", \"data\"}".into(),
            json!({}),
        ));
    };
    let kind = message
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let result = match kind.as_str() {
        "reset" => reset(state, live, &mut message).await,
        "step" => step(live, &mut message).await,
        "state" => check_fields(&message, &[])
            .map_err(SessionError::from)
            .map(|()| {
                let data = live
                    .as_ref()
                    .map_or_else(|| json!({"episode_id": null, "step_count": 0}), Live::state);
                json!({"type": "state", "data": data})
            }),
        "close" => return Reply::Close,
        "mcp" => mcp(live, &mut message).await,
        other => {
            return Reply::Send(error_message(
                WsCode::UnknownType,
                format!("Unknown message type: {other}"),
                json!({"known": ["reset", "step", "state", "close", "mcp"]}),
            ))
        }
    };
    Reply::Send(match result {
        Ok(reply) => reply,
        Err(e) => session_error(&e),
    })
}

async fn reset(
    state: &OpenEnvState,
    live: &mut Option<Live>,
    message: &mut Map<String, Value>,
) -> Result<Value, SessionError> {
    check_fields(message, &["data"])?;
    let data = message.remove("data").unwrap_or(Value::Null);
    let request = OpenRequest::read(&data).map_err(|e| e.under("data"))?;
    // A reset ends the episode running on this connection, unstored
    // unless it had ended.
    *live = None;
    let id = Sessions::new_id();
    let (opened, observation) = state.host.open_session(&id, request).await?;
    *live = Some(opened);
    Ok(json!({"type": "observation", "data": observation.openenv_json()}))
}

async fn step(
    live: &mut Option<Live>,
    message: &mut Map<String, Value>,
) -> Result<Value, SessionError> {
    check_fields(message, &["data"])?;
    let Some(data) = message.remove("data") else {
        return Err(Invalid::at("data", "is missing; a step's data is the action").into());
    };
    let Some(live) = live.as_mut() else {
        return Err(SessionError::NotStarted);
    };
    let observation = live.step(&data).await?;
    Ok(json!({"type": "observation", "data": observation.openenv_json()}))
}

/// JSON-RPC 2.0 over the session: `tools/list` (the episode's tools in
/// MCP's shape) and `tools/call` (a step whose message is that one call;
/// its result as MCP text content).
async fn mcp(
    live: &mut Option<Live>,
    message: &mut Map<String, Value>,
) -> Result<Value, SessionError> {
    check_fields(message, &["data"])?;
    let request = message.remove("data").unwrap_or(Value::Null);
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let answer = |body: Value| json!({"type": "mcp", "data": body});
    let error = |code: i64, text: String| {
        answer(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}}))
    };
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return Ok(error(-32600, "Invalid request: `method` is missing".into()));
    };
    let Some(live) = live.as_mut() else {
        return Err(SessionError::NotStarted);
    };
    match method {
        "tools/list" => Ok(answer(json!({
            "jsonrpc": "2.0", "id": id, "result": {"tools": live.mcp_tools()}
        }))),
        "tools/call" => {
            let params = request.get("params").cloned().unwrap_or(Value::Null);
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return Ok(error(-32602, "Invalid params: `name` is missing".into()));
            };
            let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
            let action =
                json!({"tool_calls": [{"function": {"name": name, "arguments": arguments}}]});
            let observation = live.step(&action).await?;
            let text: Vec<Value> = observation
                .messages
                .iter()
                .filter(|m| m.role == crate::llm::message::Role::Tool)
                .map(|m| json!({"type": "text", "text": &*m.content}))
                .collect();
            Ok(answer(json!({
                "jsonrpc": "2.0", "id": id,
                "result": {"content": text, "isError": false,
                           "_meta": {"sparring_observation": observation.openenv_json()}}
            })))
        }
        other => Ok(error(-32601, format!("Method not found: {other}"))),
    }
}
