//! SYNTH.toml as written: the keys of its head and of `[roles]`, with their
//! defaults, and the names of its tables.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::config::ranges::MAX_ITEMS;

pub(super) const TABLES: &[&str] = &[
    "endpoints",
    "roles",
    "environment",
    "dedup",
    "mock",
    "reviewers",
    "committee",
    "diversity",
];

/// The keys of SYNTH.toml that are not tables, as written and, once checked
/// (paths absolute, `output` given), as the run reads them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SynthHead {
    pub name: String,
    #[serde(default)]
    pub seed: u64,
    /// `sqlite://PATH` (relative to the working directory) or `postgres://…`:
    /// where the synthesis job, its proposals and their verdicts are stored.
    #[serde(default = "crate::config::file::default_database")]
    pub database: String,
    pub target: usize,
    #[serde(default = "default_max_attempts")]
    pub max_attempts: u64,
    #[serde(default = "default_records")]
    pub records_per_prompt: usize,
    /// Default: ten proposals per scenario wanted.
    pub max_proposals: Option<u64>,
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// How long a process's claim on a proposal lasts without a heartbeat; a
    /// process that dies has its proposals redone this long after.
    #[serde(default = "default_lease_secs")]
    pub lease_secs: f64,
    /// Scenarios JSONL whose first `examples_shown` rows the prompt shows.
    pub examples: Option<PathBuf>,
    #[serde(default = "default_examples_shown")]
    pub examples_shown: usize,
    /// A file with the policy text; default: the environment's.
    pub policy: Option<PathBuf>,
    /// Where `sparring synthesize` writes the accepted scenarios; default
    /// `NAME.jsonl` beside the config. (The service writes no file: its
    /// `GET /v1/jobs/{id}/scenarios` serves them.)
    pub output: Option<PathBuf>,
}

impl SynthHead {
    pub fn lease(&self) -> Duration {
        Duration::from_secs_f64(self.lease_secs)
    }

    /// Proposals the run may make: ten per scenario wanted by default, at
    /// most the items a job may have.
    pub fn max_proposals(&self) -> u64 {
        let ten_each = (self.target as u64).saturating_mul(10);
        self.max_proposals.unwrap_or(ten_each).min(MAX_ITEMS)
    }

    /// Where the accepted scenarios are written (given, once checked).
    pub fn output(&self) -> &Path {
        self.output.as_deref().unwrap_or(Path::new(""))
    }
}

fn default_max_attempts() -> u64 {
    3
}
fn default_records() -> usize {
    3
}
fn default_concurrency() -> usize {
    8
}
fn default_lease_secs() -> f64 {
    60.0
}
fn default_examples_shown() -> usize {
    3
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SynthRoles {
    pub(super) generator: String,
    /// The default endpoint of a `[[reviewers]]` table that names none.
    pub(super) reviewer: Option<String>,
    /// The endpoint whose model plays a `simulated` environment's tools when
    /// gold actions are validated by execution (required for that kind only).
    pub(super) tools: Option<String>,
}
