//! The output folder of `sparring mine`: `scenarios.jsonl`, `personas.jsonl`,
//! a runnable `job.toml` over them (the environment mined for, the mock
//! models), `summary.json` (counts, every rejection with its reason) and a
//! `SHA256SUMS` manifest. The folder must not exist. Everything is written
//! into a hidden folder beside it (through [`FileSet`], synced), which the
//! caller may check (`job_config`) before [`Staged::commit`] renames it into
//! place in one step; dropped uncommitted, the hidden folder is removed, so a
//! failure leaves nothing half-written.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::export::file_set::FileSet;
use crate::export::target::TargetError;

use super::MineOutcome;

pub const SCENARIOS: &str = "scenarios.jsonl";
pub const PERSONAS: &str = "personas.jsonl";
pub const JOB: &str = "job.toml";
pub const SUMMARY: &str = "summary.json";
pub const MANIFEST: &str = "SHA256SUMS";

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error(
        "{} already exists; mining writes a new folder: give a path that does not exist yet",
        .0.display()
    )]
    Exists(PathBuf),
    #[error(
        "{} is not a folder one can write in (the output folder is made inside it)",
        .0.display()
    )]
    NoParent(PathBuf),
    #[error(transparent)]
    File(#[from] TargetError),
    #[error("cannot write JSON")]
    Json(#[from] serde_json::Error),
}

/// Refuse an output folder that exists or whose parent is not a folder,
/// before any model is called.
pub fn check_out(out: &Path) -> Result<(), OutputError> {
    if out.symlink_metadata().is_ok() {
        return Err(OutputError::Exists(out.to_path_buf()));
    }
    let parent = parent_of(out);
    if !parent.is_dir() {
        return Err(OutputError::NoParent(parent));
    }
    Ok(())
}

fn parent_of(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The output written in its hidden folder, not yet in place.
pub struct Staged {
    staging: PathBuf,
    out: PathBuf,
    committed: bool,
}

impl Staged {
    /// Write `outcome` for environment `environment` (`builtin:chat` ...).
    pub fn write(
        out: &Path,
        outcome: &MineOutcome,
        environment: &str,
    ) -> Result<Staged, OutputError> {
        check_out(out)?;
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "mined".into());
        let staging = parent_of(out).join(format!(".{name}.partial-{}", std::process::id()));
        if staging.symlink_metadata().is_ok() {
            std::fs::remove_dir_all(&staging).map_err(io("remove", &staging))?;
        }
        std::fs::create_dir(&staging).map_err(io("create", &staging))?;
        let staged = Staged {
            staging,
            out: out.to_path_buf(),
            committed: false,
        };
        staged.fill(outcome, environment)?;
        Ok(staged)
    }

    fn fill(&self, outcome: &MineOutcome, environment: &str) -> Result<(), OutputError> {
        let names = [SCENARIOS, PERSONAS, JOB, SUMMARY];
        let paths: Vec<PathBuf> = names.iter().map(|n| self.staging.join(n)).collect();
        let mut set = FileSet::with_manifest(&paths, &self.staging.join(MANIFEST))?;
        let texts = [
            jsonl(outcome.scenarios())?,
            jsonl(outcome.personas())?,
            job_config(outcome, environment),
            serde_json::to_string_pretty(&summary(outcome, environment))? + "\n",
        ];
        for ((writer, text), path) in set.writers().zip(&texts).zip(&paths) {
            writer
                .write_all(text.as_bytes())
                .map_err(io("write", path))?;
        }
        set.commit()?;
        Ok(())
    }

    /// The job config as staged, for a check before commit.
    pub fn job_config(&self) -> PathBuf {
        self.staging.join(JOB)
    }

    /// Rename the folder into place (refused if something appeared there).
    pub fn commit(mut self) -> Result<PathBuf, OutputError> {
        if self.out.symlink_metadata().is_ok() {
            return Err(OutputError::Exists(self.out.clone()));
        }
        std::fs::rename(&self.staging, &self.out).map_err(io("rename into place", &self.out))?;
        self.committed = true;
        Ok(self.out.clone())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> OutputError {
    let path = path.to_path_buf();
    move |source| {
        OutputError::File(TargetError::Io {
            action,
            path,
            source,
        })
    }
}

fn jsonl<'a, T: serde::Serialize + 'a>(
    items: impl Iterator<Item = &'a T>,
) -> Result<String, serde_json::Error> {
    let mut text = String::new();
    for item in items {
        text.push_str(&serde_json::to_string(item)?);
        text.push('\n');
    }
    Ok(text)
}

/// A generation job over the mined files with the mock models: `sparring run
/// DIR/job.toml` runs it; swap the endpoints for real ones to run for real.
fn job_config(outcome: &MineOutcome, environment: &str) -> String {
    let name = toml_string(&format!("mined from job {}", outcome.job.id));
    let environment = toml_string(environment);
    format!(
        "# Scenarios and personas mined from import job {id} by `sparring mine`.\n\
         # Paths are relative to this file; the database URL to the working directory.\n\
         name = {name}\n\
         # A multiple of the number of personas: the rotation that pairs\n\
         # scenarios with personas then gives each scenario the persona\n\
         # mined from the same conversation.\n\
         seed = {seed}\n\
         database = \"sqlite://sparring.db\"\n\
         concurrency = 8\n\
         max_turns = 12\n\n\
         [endpoints.policy]\nmock = true\nmodel = \"mock-policy\"\n\n\
         [endpoints.user]\nmock = true\nmodel = \"mock-user\"\n\n\
         [roles]\npolicy = \"policy\"\nuser = \"user\"\n\n\
         [environment]\nname = {environment}\n\n\
         [dataset]\nscenarios = \"{SCENARIOS}\"\npersonas = \"{PERSONAS}\"\n\
         samples_per_scenario = 1\npersonas_per_scenario = 1\n",
        id = outcome.job.id,
        seed = outcome.mined.len().max(1),
    )
}

fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

fn summary(outcome: &MineOutcome, environment: &str) -> serde_json::Value {
    let rejections: serde_json::Map<String, serde_json::Value> = outcome
        .rejections()
        .into_iter()
        .map(|(r, n)| (r.as_str().to_string(), json!(n)))
        .collect();
    json!({
        "job": outcome.job.id,
        "environment": environment,
        "conversations": outcome.conversations,
        "kept": outcome.mined.len(),
        "rejections": rejections,
        "rejected": outcome.rejected,
        "private_values_replaced": outcome.private_values_replaced,
    })
}
