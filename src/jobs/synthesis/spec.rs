//! A stored synthesis job read back, and its hash.

use crate::config::synth::{from_stored, SynthConfig, SynthSpec};
use crate::judge::hash::sha256_hex;
use crate::store::JobRow;

use super::super::error::RunError;

/// The config of stored synthesis job `row`.
pub fn stored_config(row: &JobRow) -> Result<SynthConfig, RunError> {
    from_stored(row.id, &row.config_snapshot).map_err(RunError::Invalid)
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
