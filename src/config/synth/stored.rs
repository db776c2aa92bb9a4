//! A synthesis job as stored: the config's TOML with its endpoints as stored,
//! and the folder its paths resolve against, read back into the same config.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{from_toml, SynthConfig};
use crate::config::endpoint::EndpointTable;
use crate::config::service::Trust;
use crate::diagnostics::problem::Problem;

/// `text` with its `[endpoints]` replaced by their stored form.
pub(super) fn stored_text(
    text: &str,
    endpoints: &BTreeMap<String, EndpointTable>,
) -> Result<String, String> {
    let mut table: toml::Table =
        toml::from_str(text).map_err(|e| format!("cannot store the config: {e}"))?;
    let stored = toml::Value::try_from(endpoints)
        .map_err(|e| format!("cannot store the config's endpoints: {e}"))?;
    table.insert("endpoints".to_string(), stored);
    toml::to_string(&table).map_err(|e| format!("cannot store the config: {e}"))
}

/// A synthesis job as its row stores it (`config_snapshot`, JSON): the
/// config's stored TOML and the folder its relative paths resolve against,
/// enough to rebuild the job in another process.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
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

/// The config of stored synthesis job `job_id`, from its row's `config_snapshot`.
pub fn from_stored(job_id: i64, config_snapshot: &str) -> Result<SynthConfig, Vec<Problem>> {
    let label = PathBuf::from(format!("job {job_id} (stored config)"));
    let spec: SynthSpec = serde_json::from_str(config_snapshot).map_err(|e| {
        vec![Problem::in_file(
            &label,
            format!("the stored synthesis job cannot be read: {e}"),
        )]
    })?;
    from_snapshot(&label, &spec.toml, &spec.base)
}

/// A synthesis job's stored config read back: `snapshot` as
/// [`SynthConfig::snapshot`] made it, paths resolved against `base` as when
/// it was submitted.
pub fn from_snapshot(
    label: &Path,
    snapshot: &str,
    base: &Path,
) -> Result<SynthConfig, Vec<Problem>> {
    from_toml(label, snapshot, base, Trust::Local)
}
