//! What goes wrong in an agent server: a run request that is not one (a
//! NeMo Gym-style 422 naming the field), a rollout that could not be made
//! (an infrastructure failure, never a reward of 0), and a job config that
//! cannot serve.

use serde_json::{json, Value};

use crate::config::Problem;
use crate::store::StoreError;

/// A request the agent cannot read: which field, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{}`: {message}", field.join("."))]
pub struct Invalid {
    /// The path to the field in the body (`["responses_create_params", "input"]`).
    pub field: Vec<String>,
    pub message: String,
}

impl Invalid {
    pub fn at(field: &[&str], message: impl Into<String>) -> Invalid {
        Invalid {
            field: field.iter().map(|f| f.to_string()).collect(),
            message: message.into(),
        }
    }

    /// The body of a 422, in FastAPI's shape (what NeMo Gym's servers answer).
    pub fn detail(&self) -> Value {
        let mut loc = vec![Value::from("body")];
        loc.extend(self.field.iter().map(|f| Value::from(f.as_str())));
        json!({"detail": [{"type": "value_error", "loc": loc, "msg": self.to_string()}]})
    }
}

/// Why a run request got no rollout.
#[derive(Debug, thiserror::Error)]
pub enum RunFailure {
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// The episode failed (a model, the environment, a template): the
    /// failure's class and message; nothing is stored as a reward.
    #[error("the rollout failed ({class}): {message}")]
    Rollout { class: String, message: String },
    #[error("the store failed: {0}")]
    Store(#[from] StoreError),
}

impl RunFailure {
    /// The HTTP status it is answered with.
    pub fn status(&self) -> u16 {
        match self {
            RunFailure::Invalid(_) => 422,
            RunFailure::Rollout { .. } => 502,
            RunFailure::Store(_) => 500,
        }
    }

    /// The body it is answered with.
    pub fn body(&self) -> Value {
        match self {
            RunFailure::Invalid(invalid) => invalid.detail(),
            RunFailure::Rollout { class, .. } => {
                json!({"detail": self.to_string(), "failure_class": class})
            }
            // The store's detail is logged, not answered.
            RunFailure::Store(_) => json!({"detail": "the store failed; see the agent's log"}),
        }
    }
}

/// Why a job config cannot serve as an agent.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("the job config has problems")]
    Invalid(Vec<Problem>),
    #[error(transparent)]
    Models(#[from] crate::jobs::models::ModelsError),
    #[error(transparent)]
    Store(#[from] StoreError),
}
