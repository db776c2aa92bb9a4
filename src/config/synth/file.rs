//! SYNTH.toml as written: the keys of its head and of `[roles]`, with their
//! defaults, and the names of its tables.

use std::path::PathBuf;

use serde::Deserialize;

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

/// The keys of SYNTH.toml that are not tables, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SynthHead {
    pub(super) name: String,
    #[serde(default)]
    pub(super) seed: u64,
    /// `sqlite://PATH` (relative to the working directory) or `postgres://…`:
    /// where the synthesis job, its proposals and their verdicts are stored.
    #[serde(default = "crate::config::file::default_database")]
    pub(super) database: String,
    pub(super) target: u64,
    #[serde(default = "default_max_attempts")]
    pub(super) max_attempts: u64,
    #[serde(default = "default_records")]
    pub(super) records_per_prompt: u64,
    /// Default: ten proposals per scenario wanted.
    pub(super) max_proposals: Option<u64>,
    #[serde(default = "default_concurrency")]
    pub(super) concurrency: u64,
    /// How long a process's claim on a proposal lasts without a heartbeat; a
    /// process that dies has its proposals redone this long after.
    #[serde(default = "default_lease_secs")]
    pub(super) lease_secs: f64,
    /// Scenarios JSONL whose first `examples_shown` rows the prompt shows.
    pub(super) examples: Option<PathBuf>,
    #[serde(default = "default_examples_shown")]
    pub(super) examples_shown: u64,
    /// A file with the policy text; default: the environment's.
    pub(super) policy: Option<PathBuf>,
    /// Where `sparring synthesize` writes the accepted scenarios; default
    /// `NAME.jsonl` beside the config. (The service writes no file: its
    /// `GET /v1/jobs/{id}/scenarios` serves them.)
    pub(super) output: Option<PathBuf>,
}

fn default_max_attempts() -> u64 {
    3
}
fn default_records() -> u64 {
    3
}
fn default_concurrency() -> u64 {
    8
}
fn default_lease_secs() -> f64 {
    60.0
}
fn default_examples_shown() -> u64 {
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
