//! `--format scenarios`: the curated dataset. The synthesized scenarios a
//! generation job's policy solved (with `keep_unsolved`, the unsolved ones
//! too), written back as the scenarios JSONL `sparring run` reads, in the
//! order of the job's scenarios file. Undecided scenarios (attempts waiting,
//! failed or not scored) and hand-written ones are left out, and counted.

use std::fmt;

use serde::Serialize;

use super::sink::{Row, RowSink};
use super::unsolved::with_scenarios;
use super::write_counts;
use crate::store::{JobKind, JobRow, Store, StoreError};
use crate::verify::solved::{is_synthesized, ScenarioOutcome};

#[derive(Debug, thiserror::Error)]
pub enum ScenariosError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write the export")]
    Io(#[from] std::io::Error),
    #[error(
        "job {job} is a {kind} job; --format scenarios writes the synthesized scenarios of a \
         generation job (the job that ran them)"
    )]
    NotGeneration { job: i64, kind: JobKind },
    #[error("job {job}'s scenarios cannot be read, so none can be written: {reason}")]
    Unreadable { job: i64, reason: String },
    #[error("scenario '{id}' of job {job} does not serialize: {message}")]
    Serialize {
        job: i64,
        id: String,
        message: String,
    },
}

/// What a scenarios export wrote and left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ScenarioCounts {
    pub written: u64,
    /// Unsolved synthesized scenarios left out (without `keep_unsolved`).
    pub unsolved: u64,
    /// Synthesized scenarios whose attempts are waiting, failed or not scored.
    pub undecided: u64,
    /// Synthesized scenarios of the file the job has no items for.
    pub not_run: u64,
    /// Scenarios without the `synthesized` tag.
    pub hand_written: u64,
}

/// `wrote 190 scenarios …; left out: 3 unsolved (--keep-unsolved keeps
/// them), 2 undecided (…)`.
impl fmt::Display for ScenarioCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_counts(
            f,
            &[
                (self.unsolved, "unsolved (--keep-unsolved keeps them)"),
                (
                    self.undecided,
                    "undecided (attempts waiting, failed or not scored: finish the job, or resume \
                 it with --retry-failed)",
                ),
                (self.not_run, "synthesized but not run by this job"),
                (self.hand_written, "hand-written (not synthesized)"),
            ],
        )
    }
}

/// Write job `row`'s solved synthesized scenarios (and the unsolved ones
/// when `keep_unsolved`) to `sink`.
pub async fn write(
    store: &dyn Store,
    row: &JobRow,
    keep_unsolved: bool,
    sink: &mut (dyn RowSink + Send),
) -> Result<ScenarioCounts, ScenariosError> {
    if row.kind != JobKind::Generation {
        return Err(ScenariosError::NotGeneration {
            job: row.id,
            kind: row.kind,
        });
    }
    let (scenarios, outcomes) = with_scenarios(store, row).await?;
    if let Some(reason) = outcomes.unreadable {
        return Err(ScenariosError::Unreadable {
            job: row.id,
            reason,
        });
    }
    let mut counts = ScenarioCounts::default();
    for scenario in &scenarios {
        if !is_synthesized(&scenario.tags) {
            counts.hand_written += 1;
            continue;
        }
        match outcomes.outcome_of(&scenario.id) {
            None => counts.not_run += 1,
            Some(ScenarioOutcome::Undecided) => counts.undecided += 1,
            Some(ScenarioOutcome::Unsolved) if !keep_unsolved => counts.unsolved += 1,
            Some(ScenarioOutcome::Solved | ScenarioOutcome::Unsolved) => {
                let line =
                    serde_json::to_value(scenario).map_err(|e| ScenariosError::Serialize {
                        job: row.id,
                        id: scenario.id.clone(),
                        message: e.to_string(),
                    })?;
                sink.write_row(&Row {
                    line,
                    sidecar: None,
                    scenario: scenario.id.clone(),
                })?;
                counts.written += 1;
            }
        }
    }
    sink.flush()?;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_scenarios_export_left_out_reads_as_reasons() {
        assert_eq!(ScenarioCounts::default().to_string(), "none");
        let counts = ScenarioCounts {
            written: 5,
            unsolved: 2,
            undecided: 1,
            not_run: 0,
            hand_written: 3,
        };
        let said = counts.to_string();
        assert!(
            said.starts_with("2 unsolved (--keep-unsolved keeps them), 1 undecided"),
            "{said}"
        );
        assert!(
            said.ends_with(", 3 hand-written (not synthesized)"),
            "{said}"
        );
        assert!(!said.contains("not run"), "{said}");
    }
}
