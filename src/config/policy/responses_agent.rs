//! `[policy.responses_agent]`: a service implementing the OpenAI Responses
//! API contract as NeMo Gym's `remote_agent` defines it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::check_path;
use crate::diagnostics::document::child;
use crate::diagnostics::problem::Problem;

/// Where the agent answers by default, below the endpoint's base_url.
pub const DEFAULT_PATH: &str = "/v1/responses";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResponsesAgentKeys {
    /// Below the endpoint's base_url (default `/v1/responses`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Whether each call offers the environment's tools (default true): the
    /// agent may then ask sparring to run them with unpaired `function_call`s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offer_tools: Option<bool>,
    /// Whether the job's rendered policy prompt is sent as `instructions`
    /// (default true, as a NeMo Gym row's system message is; false for an
    /// agent that has its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_instructions: Option<bool>,
}

impl ResponsesAgentKeys {
    pub fn path(&self) -> &str {
        self.path.as_deref().unwrap_or(DEFAULT_PATH)
    }

    pub fn offer_tools(&self) -> bool {
        self.offer_tools.unwrap_or(true)
    }

    pub fn send_instructions(&self) -> bool {
        self.send_instructions.unwrap_or(true)
    }

    /// The keys, when their path is one below the base_url.
    pub fn check(&self, file: &Path, field: &str, problems: &mut Vec<Problem>) -> Option<Self> {
        let before = problems.len();
        check_path(file, &child(field, "path"), self.path(), problems);
        (problems.len() == before).then(|| self.clone())
    }
}
