//! An environment table as stored in a job's snapshot: a type the tables as
//! written (`file`) name; `environment` reads and checks the table.

use std::path::PathBuf;

use serde::Serialize;

use super::mcp::McpSnapshot;
use super::missing_tool::MissingTool;
use super::state_calls::StateCall;

/// As stored in a job's snapshot (a built-in one as it always was: its name).
#[derive(Debug, Clone, Default, Serialize)]
pub struct EnvironmentSnapshot {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<PathBuf>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpSnapshot>,
    /// `nemo_gym` only (an MCP server's are in `mcp`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_probes: Option<Vec<StateCall>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records_row: Option<serde_json::Value>,
    /// `nemo_gym` only, and only when it is not the default (so the
    /// snapshots, and hashes, of jobs written before it stay as they were).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_missing_tool: Option<MissingTool>,
}
