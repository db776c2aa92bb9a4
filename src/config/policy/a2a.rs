//! `[policy.a2a]`: an Agent2Agent server (JSON-RPC `message/send`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::super::document::child;
use super::super::problem::Problem;
use super::check_path;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct A2aKeys {
    /// Where JSON-RPC requests are posted, below the endpoint's base_url
    /// (default: the base_url itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Whether the agent card (`/.well-known/agent-card.json`) is read and
    /// checked once per job before the first conversation (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_card: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct A2aConfig {
    pub path: String,
    pub read_card: bool,
}

impl A2aKeys {
    pub fn check(
        &self,
        file: &Path,
        field: &str,
        problems: &mut Vec<Problem>,
    ) -> Option<A2aConfig> {
        let path = self.path.clone().unwrap_or_default();
        let before = problems.len();
        check_path(file, &child(field, "path"), &path, problems);
        (problems.len() == before).then(|| A2aConfig {
            path,
            read_card: self.read_card.unwrap_or(true),
        })
    }
}
