//! What goes wrong with a stepped session, each case with the HTTP status
//! and the OpenEnv WebSocket error code it is answered with. A malformed
//! request names its field and leaves the session as it was.

use serde_json::{json, Value};

use crate::config::Problem;
use crate::store::StoreError;

/// A field of a request that is not what it must be: which one (a path,
/// `tool_calls[0].function.name`) and what would be right.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{field}`: {message}")]
pub struct Invalid {
    pub field: String,
    pub message: String,
}

impl Invalid {
    pub fn at(field: impl Into<String>, message: impl Into<String>) -> Invalid {
        Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The same problem under `prefix` (`action` + `content` = `action.content`).
    pub fn under(self, prefix: &str) -> Invalid {
        let field = if self.field.is_empty() {
            prefix.to_string()
        } else if self.field.starts_with('[') {
            format!("{prefix}{}", self.field)
        } else {
            format!("{prefix}.{}", self.field)
        };
        Invalid { field, ..self }
    }
}

/// OpenEnv's WebSocket error codes (`WSErrorCode`), as its clients read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WsCode {
    InvalidJson,
    UnknownType,
    ValidationError,
    ExecutionError,
    CapacityReached,
    FactoryError,
    SessionError,
}

impl WsCode {
    pub fn as_str(self) -> &'static str {
        match self {
            WsCode::InvalidJson => "INVALID_JSON",
            WsCode::UnknownType => "UNKNOWN_TYPE",
            WsCode::ValidationError => "VALIDATION_ERROR",
            WsCode::ExecutionError => "EXECUTION_ERROR",
            WsCode::CapacityReached => "CAPACITY_REACHED",
            WsCode::FactoryError => "FACTORY_ERROR",
            WsCode::SessionError => "SESSION_ERROR",
        }
    }
}

/// Why a session request got no observation.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A field of the request is wrong; nothing changed.
    #[error("{0}")]
    Invalid(#[from] Invalid),
    /// The session's job config has problems (the service's session API
    /// loads a config per request).
    #[error("the job config has problems")]
    Config(Vec<Problem>),
    #[error("no session '{0}' is open here; open one first")]
    Unknown(String),
    #[error("session '{0}' was closed; open a new one")]
    Closed(String),
    #[error(
        "session '{id}' expired after {idle_secs} s without a request; nothing of it was stored; \
         open a new one"
    )]
    Expired { id: String, idle_secs: u64 },
    /// A step after the episode ended.
    #[error(
        "the episode already ended ({termination}) and is stored as conversation \
         {conversation_id}; reset (or open a new session) to start another"
    )]
    Ended {
        termination: String,
        conversation_id: i64,
    },
    /// A step before any episode was opened on this connection.
    #[error("no episode is running on this connection; send `reset` first")]
    NotStarted,
    /// A step while another step of the same session is still running.
    #[error("session '{0}' is answering another step; send one step at a time")]
    Busy(String),
    #[error(
        "{open} sessions are open, the most this server holds (max_concurrent_envs = {max}); \
         close one or wait for one to end"
    )]
    Capacity { open: usize, max: usize },
    /// A service holding sessions of many job configs holds this many at most.
    #[error(
        "sessions of {max} job configs are open, the most this server holds; close the sessions \
         of another config first"
    )]
    Configs { max: usize },
    /// The episode failed (a model call of the simulated user, the
    /// environment): it ends unstored, never with a reward of 0.
    #[error("the episode failed ({class}): {message}; nothing of it was stored")]
    Failed { class: String, message: String },
    #[error("the store failed: {0}")]
    Store(#[from] StoreError),
}

impl SessionError {
    /// The HTTP status it is answered with.
    pub fn status(&self) -> u16 {
        match self {
            SessionError::Invalid(_) | SessionError::Config(_) => 422,
            SessionError::Unknown(_) => 404,
            SessionError::Closed(_) | SessionError::Expired { .. } => 410,
            SessionError::Ended { .. } | SessionError::NotStarted | SessionError::Busy(_) => 409,
            SessionError::Capacity { .. } | SessionError::Configs { .. } => 503,
            SessionError::Failed { .. } => 502,
            SessionError::Store(_) => 500,
        }
    }

    /// The OpenEnv WebSocket error code it is answered with.
    pub fn ws_code(&self) -> WsCode {
        match self {
            SessionError::Invalid(_) => WsCode::ValidationError,
            SessionError::Config(_) => WsCode::FactoryError,
            SessionError::Capacity { .. } | SessionError::Configs { .. } => WsCode::CapacityReached,
            SessionError::Unknown(_)
            | SessionError::Closed(_)
            | SessionError::Expired { .. }
            | SessionError::Busy(_) => WsCode::SessionError,
            SessionError::Ended { .. }
            | SessionError::NotStarted
            | SessionError::Failed { .. }
            | SessionError::Store(_) => WsCode::ExecutionError,
        }
    }

    /// A short name of the case, stable for clients (`invalid`, `expired`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            SessionError::Invalid(_) => "invalid",
            SessionError::Config(_) => "config",
            SessionError::Unknown(_) => "unknown_session",
            SessionError::Closed(_) => "closed",
            SessionError::Expired { .. } => "expired",
            SessionError::Ended { .. } => "ended",
            SessionError::NotStarted => "not_started",
            SessionError::Busy(_) => "busy",
            SessionError::Capacity { .. } => "capacity",
            SessionError::Configs { .. } => "configs",
            SessionError::Failed { .. } => "failed",
            SessionError::Store(_) => "store",
        }
    }

    /// The details beside the message: the field of an invalid request,
    /// the problems of a config, the counts of a full server, the class of
    /// a failure.
    pub fn details(&self) -> Value {
        let mut details = json!({"kind": self.kind()});
        let extra = match self {
            SessionError::Invalid(invalid) => json!({"field": invalid.field}),
            SessionError::Config(problems) => json!({
                "problems": problems.iter().map(|p| json!({
                    "file": p.file.display().to_string(),
                    "field": p.location,
                    "message": p.message,
                })).collect::<Vec<_>>()
            }),
            SessionError::Capacity { open, max } => {
                json!({"active_sessions": open, "max_sessions": max})
            }
            SessionError::Failed { class, .. } => json!({"failure_class": class}),
            SessionError::Ended {
                termination,
                conversation_id,
            } => json!({"termination": termination, "conversation_id": conversation_id}),
            _ => json!({}),
        };
        if let (Some(map), Value::Object(extra)) = (details.as_object_mut(), extra) {
            map.extend(extra);
        }
        details
    }

    /// The message as the client reads it: the store's detail is logged,
    /// not answered; a config's problems each on a line.
    pub fn message(&self) -> String {
        match self {
            SessionError::Store(_) => "the store failed; see the server's log".to_string(),
            SessionError::Config(problems) => {
                let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
                format!("the job config has problems:\n{}", lines.join("\n"))
            }
            other => other.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_under_a_prefix_reads_as_one_path() {
        assert_eq!(
            Invalid::at("content", "x").under("action").field,
            "action.content"
        );
        assert_eq!(
            Invalid::at("[0].id", "x").under("tool_calls").field,
            "tool_calls[0].id"
        );
        assert_eq!(Invalid::at("", "x").under("action").field, "action");
    }

    #[test]
    fn each_case_has_a_status_and_a_code_a_client_can_act_on() {
        let full = SessionError::Capacity { open: 4, max: 4 };
        assert_eq!(
            (full.status(), full.ws_code().as_str()),
            (503, "CAPACITY_REACHED")
        );
        assert_eq!(full.details()["max_sessions"], 4);
        let bad = SessionError::from(Invalid::at("action.content", "is not a string"));
        assert_eq!(
            (bad.status(), bad.ws_code().as_str()),
            (422, "VALIDATION_ERROR")
        );
        assert_eq!(bad.details()["field"], "action.content");
        let gone = SessionError::Expired {
            id: "s".into(),
            idle_secs: 600,
        };
        assert_eq!(
            (gone.status(), gone.ws_code().as_str()),
            (410, "SESSION_ERROR")
        );
        assert!(gone.message().contains("nothing of it was stored"));
    }
}
