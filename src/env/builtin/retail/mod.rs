//! `builtin:retail`: Lantern & Loom, a home and outdoor goods store. Customers
//! ask about orders and products, cancel or change pending orders, and return
//! or exchange delivered ones; the policy model acts through the store's tools.
//!
//! The seed database, the policy text and the scenario set are compiled into
//! the binary, so the environment works from any directory.

mod calculate;
pub mod db;
pub mod money;
mod reads;
mod records;
pub mod specs;
mod tools;
mod verify;
mod writes;

#[cfg(test)]
mod scenario_tests;
#[cfg(test)]
mod session_tests;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::env::{
    EnvError, Environment, InitialState, Message, Session, ToolCall, ToolOutput, ToolSpec,
};
use crate::verify::{Criteria, Verification};

use super::patch;
use db::Database;

pub use tools::TRANSFER_ACKNOWLEDGEMENT;

/// The name a job config uses for this environment.
pub const NAME: &str = "builtin:retail";

/// The seed database as shipped (`data/retail/db.json`).
pub const SEED_JSON: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/data/retail/db.json"));
const SEED_PATH: &str = "data/retail/db.json";

/// The agent policy (`data/retail/policy.md`).
pub const POLICY_TEXT: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/data/retail/policy.md"
));

/// The shipped scenario set (`data/retail/scenarios.jsonl`), one scenario a line.
pub const SCENARIOS_JSONL: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/data/retail/scenarios.jsonl"
));

/// What every session of the environment shares: tools and the parsed seed.
#[derive(Debug)]
struct Shared {
    tools: Vec<ToolSpec>,
    seed_json: Value,
    /// Shared by every session until it writes (copy-on-write).
    seed: Arc<Database>,
    /// Starting states of scenarios that patch the seed, by the patch's JSON
    /// text: parsed once, then shared like the seed.
    patched: std::sync::Mutex<std::collections::HashMap<String, Arc<Database>>>,
}

/// Most distinct patched starting states kept; beyond it they are parsed per
/// session (a dataset of thousands of distinct states should not pin them all).
const PATCHED_CACHE: usize = 1024;

impl Shared {
    /// The starting state for `data`: the seed itself, or the seed with `data`
    /// applied as a JSON merge-patch (RFC 7386).
    fn initial_database(&self, data: &Value) -> Result<Arc<Database>, EnvError> {
        if data.is_null() {
            return Ok(Arc::clone(&self.seed));
        }
        let key = data.to_string();
        if let Some(db) = self.patched.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(db);
        }
        let mut value = self.seed_json.clone();
        patch::merge_patch(&mut value, data);
        let db = Database::from_value(value).map(Arc::new).map_err(|e| {
            EnvError::InitialState(format!(
                "applied as a merge-patch to the retail seed database, it gives an invalid state: {e}"
            ))
        })?;
        if let Ok(mut cache) = self.patched.lock() {
            if cache.len() < PATCHED_CACHE {
                cache.insert(key, Arc::clone(&db));
            }
        }
        Ok(db)
    }
}

/// The retail environment. Cheap to share: sessions hold an `Arc` of its data.
#[derive(Debug, Clone)]
pub struct RetailEnvironment {
    shared: Arc<Shared>,
}

impl RetailEnvironment {
    /// Parse the embedded seed database once.
    pub fn new() -> Result<Self, EnvError> {
        let data_error = |message: String| EnvError::Data {
            path: SEED_PATH.to_string(),
            message,
        };
        let seed_json: Value =
            serde_json::from_str(SEED_JSON).map_err(|e| data_error(e.to_string()))?;
        let seed = Database::from_value(seed_json.clone()).map_err(data_error)?;
        Ok(RetailEnvironment {
            shared: Arc::new(Shared {
                tools: specs::tool_specs(),
                seed_json,
                seed: Arc::new(seed),
                patched: Default::default(),
            }),
        })
    }

    /// A session with its own copy of the starting state (typed, for callers
    /// that want the state itself; [`Environment::open`] boxes this).
    pub fn open_session(&self, init: &InitialState) -> Result<RetailSession, EnvError> {
        let initial = self.shared.initial_database(&init.data)?;
        Ok(RetailSession {
            shared: Arc::clone(&self.shared),
            db: Arc::clone(&initial),
            initial,
        })
    }
}

#[async_trait]
impl Environment for RetailEnvironment {
    fn name(&self) -> &str {
        NAME
    }

    fn policy_text(&self) -> &str {
        POLICY_TEXT
    }

    /// The policy says "Make one tool call at a time".
    fn allows_parallel_tool_calls(&self) -> bool {
        false
    }

    fn tools(&self) -> &[ToolSpec] {
        &self.shared.tools
    }

    async fn open(&self, init: &InitialState) -> Result<Box<dyn Session>, EnvError> {
        Ok(Box::new(self.open_session(init)?))
    }

    async fn sample_records(&self, seed: u64, n: usize) -> Result<Value, EnvError> {
        records::sample(&self.shared.seed, seed, n).map_err(|message| EnvError::Data {
            path: SEED_PATH.to_string(),
            message,
        })
    }
}

/// One conversation's store: the state the policy's calls have changed. Both
/// states are shared with the environment until a write (copy-on-write), so a
/// conversation that only reads never copies the store.
#[derive(Debug)]
pub struct RetailSession {
    shared: Arc<Shared>,
    initial: Arc<Database>,
    db: Arc<Database>,
}

impl RetailSession {
    /// The current state.
    pub fn state(&self) -> &Database {
        &self.db
    }

    /// sha256 of the current state's canonical JSON.
    pub fn state_hash(&self) -> String {
        self.db.canonical_hash()
    }

    /// Run one tool call; errors are outputs the model reads.
    pub fn call_tool(&mut self, call: &ToolCall) -> ToolOutput {
        let output = tools::run_call(&self.shared.tools, &mut self.db, call);
        if output.is_error {
            tracing::debug!(tool = %call.name, error = %output.content, "retail tool call failed");
        }
        output
    }

    /// Score the conversation against `criteria` (see [`verify::verify`]).
    pub fn verify_conversation(
        &self,
        messages: &[Message],
        criteria: &Criteria,
    ) -> Result<Verification, EnvError> {
        verify::verify(
            &self.shared.tools,
            Arc::clone(&self.initial),
            &self.db,
            messages,
            criteria,
        )
    }
}

#[async_trait]
impl Session for RetailSession {
    async fn call(&mut self, call: &ToolCall) -> Result<ToolOutput, EnvError> {
        Ok(self.call_tool(call))
    }

    async fn verify(
        &mut self,
        messages: &[Message],
        criteria: &Criteria,
    ) -> Result<Verification, EnvError> {
        self.verify_conversation(messages, criteria)
    }

    async fn state(&mut self) -> Result<Option<Value>, EnvError> {
        serde_json::to_value(self.db.as_ref())
            .map(Some)
            .map_err(|e| EnvError::Verification(format!("cannot show the retail state: {e}")))
    }
}
