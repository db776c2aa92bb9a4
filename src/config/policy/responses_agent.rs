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

#[derive(Debug, Clone, PartialEq)]
pub struct ResponsesAgentConfig {
    pub path: String,
    pub offer_tools: bool,
    pub send_instructions: bool,
}

impl ResponsesAgentKeys {
    pub fn check(
        &self,
        file: &Path,
        field: &str,
        problems: &mut Vec<Problem>,
    ) -> Option<ResponsesAgentConfig> {
        let path = self.path.clone().unwrap_or_else(|| DEFAULT_PATH.into());
        let before = problems.len();
        check_path(file, &child(field, "path"), &path, problems);
        (problems.len() == before).then(|| ResponsesAgentConfig {
            path,
            offer_tools: self.offer_tools.unwrap_or(true),
            send_instructions: self.send_instructions.unwrap_or(true),
        })
    }
}
