//! The black-box policy kinds: a deployed agent reached over HTTP plays the
//! policy (`[policy] kind`). Each kind is a [`crate::sim::Policy`]; its calls
//! go through the `[roles] policy` endpoint's raw calls
//! ([`crate::llm::ChatModel::call_raw`]), so they share the endpoint's limits,
//! timeout, retry policy, error classes and telemetry. An agent that fails
//! fails its item (an [`EpisodeError`]), never scores a reward of 0.

pub mod a2a;
pub mod http;
pub mod reply;
pub mod responses_agent;
pub mod sse;
pub mod trace;
pub mod usage;

use std::path::Path;
use std::sync::Arc;

use crate::config::job::PolicyFile;
use crate::config::policy::PolicyKind;
use crate::env::ToolSpec;
use crate::llm::{ChatModel, LlmError};
use crate::sim::episode_error::EpisodeError;
use crate::sim::{ModelPolicy, Policy};

/// The policy a job's items run: its model with tools, or its agent
/// (`source`: the job's config file, named in a template's errors).
pub fn build(
    config: &PolicyFile,
    source: &Path,
    model: Arc<dyn ChatModel>,
    tools: Arc<[ToolSpec]>,
    parallel_tool_calls: bool,
) -> Arc<dyn Policy> {
    let steps = config.max_steps_per_turn;
    let replay = config.replay_agent_tools();
    match &config.checked {
        PolicyKind::Model => Arc::new(ModelPolicy::new(model, tools, steps, parallel_tool_calls)),
        PolicyKind::ResponsesAgent(kind) => Arc::new(responses_agent::ResponsesAgent::new(
            kind.clone(),
            model,
            tools,
            steps,
            replay,
        )),
        PolicyKind::A2a(kind) => Arc::new(a2a::A2aAgent::new(kind.clone(), model, steps, replay)),
        PolicyKind::Http(kind) => {
            Arc::new(http::HttpAgent::new(kind.clone(), source, model, replay))
        }
    }
}

/// An agent's failure as the episode's: classified like a model's.
pub fn failed(error: LlmError) -> EpisodeError {
    EpisodeError::Model {
        role: "policy",
        error,
    }
}

/// An agent that answered nothing: the item fails (`empty_reply`), so a
/// stored reward of 0 always means a conversation that ran and failed its
/// checks. `what` says what was empty, for the item's error.
pub fn empty_reply(what: impl Into<String>) -> EpisodeError {
    failed(LlmError::EmptyReply(what.into()))
}

/// A reply that is not what the kind's contract says: a terminal failure
/// (`malformed_response`), never retried and never a reward.
pub fn malformed(message: impl Into<String>) -> EpisodeError {
    failed(LlmError::Malformed(message.into()))
}
