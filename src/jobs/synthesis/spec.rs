//! A synthesis job as its row stores it: the config's stored TOML and the
//! folder its relative paths resolve against, enough to rebuild the job in
//! another process (`usersim synthesize --resume`, a worker, the service).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::synth::{from_snapshot, SynthConfig};
use crate::config::Problem;
use crate::judge::hash::sha256_hex;
use crate::store::JobRow;

use super::super::runner::RunError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SynthSpec {
    /// What problems in the stored config name as its file.
    pub label: String,
    pub base: PathBuf,
    pub toml: String,
}

impl SynthSpec {
    pub fn of(config: &SynthConfig) -> SynthSpec {
        SynthSpec {
            label: config.source.display().to_string(),
            base: config.base.clone(),
            toml: config.snapshot.clone(),
        }
    }

    /// The text of the job row's `config_snapshot`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// The config of stored synthesis job `row`.
pub fn stored_config(row: &JobRow) -> Result<SynthConfig, RunError> {
    let label = format!("job {} (stored config)", row.id);
    let spec: SynthSpec = serde_json::from_str(&row.config_snapshot).map_err(|e| {
        RunError::Invalid(vec![Problem::in_file(
            Path::new(&label),
            format!("the stored synthesis job cannot be read: {e}"),
        )])
    })?;
    from_snapshot(Path::new(&label), &spec.toml, &spec.base).map_err(RunError::Invalid)
}

/// The job's hash: its stored config and the text of the files it reads
/// (examples, policy), so that changing either makes another job.
pub fn config_hash(spec: &SynthSpec, examples: &str, policy: &str) -> String {
    let mut text = String::from("synthesis v1\n");
    text.push_str(&spec.to_json());
    for part in [examples, policy] {
        text.push_str(&format!("\n{}\n", part.len()));
        text.push_str(part);
    }
    sha256_hex(text.as_bytes())
}
