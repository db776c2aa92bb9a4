//! How working a job went: the report of each kind, and [`JobReport`], any
//! of them (what `work_stored` returns).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::persona::Scenario;
use crate::store::{ItemCounts, JobRow, JobSummary};
use crate::synth::coverage::Coverage;
use crate::synth::summary::Summary;

use super::work::WorkEnd;

/// How a generation run went.
#[derive(Debug)]
pub struct RunReport {
    pub job: JobRow,
    /// Whether the job existed before this run.
    pub resumed: bool,
    pub end: WorkEnd,
    pub counts: ItemCounts,
    pub summary: JobSummary,
    pub elapsed: Duration,
    /// The job's own `[[judges]]`, run over its conversations once the
    /// generation finished; `None` when it has no judges or did not finish.
    pub judging: Option<JudgingReport>,
}

/// How a judging run went.
#[derive(Debug)]
pub struct JudgingReport {
    pub job: JobRow,
    pub resumed: bool,
    pub end: WorkEnd,
    pub counts: ItemCounts,
    /// Per judge: judgments (ok, unparseable, failed) over the target.
    pub outcomes: BTreeMap<String, [u64; 3]>,
    /// Model calls made by this run (cached calls are not counted).
    pub calls_made: u64,
    /// Requests this run sent through the Batch API (each attempt counted).
    pub batch_requests: u64,
    pub elapsed: Duration,
}

/// How a synthesis run went.
#[derive(Debug)]
pub struct SynthesisReport {
    pub job: JobRow,
    /// Whether the job existed before this run.
    pub resumed: bool,
    pub end: WorkEnd,
    pub counts: ItemCounts,
    pub summary: Summary,
    /// The commonest errors of failed items, with their counts.
    pub errors: Vec<(String, i64)>,
    pub target: usize,
    pub max_proposals: u64,
    /// The accepted scenarios, in proposal order (at most `target`).
    pub accepted: Vec<Scenario>,
    /// Their coverage of the `[diversity]` targets.
    pub coverage: Coverage,
    /// Where the config says to write them (the CLI does).
    pub output: PathBuf,
    pub elapsed: Duration,
}

/// How working a stored job went, by its kind.
#[derive(Debug)]
pub enum JobReport {
    Generation(Box<RunReport>),
    Judging(Box<JudgingReport>),
    Synthesis(Box<SynthesisReport>),
}

impl JobReport {
    pub fn end(&self) -> &WorkEnd {
        match self {
            JobReport::Generation(r) => &r.end,
            JobReport::Judging(r) => &r.end,
            JobReport::Synthesis(r) => &r.end,
        }
    }

    /// The job row after the work, and its item counts.
    pub fn job(&self) -> (&JobRow, &ItemCounts) {
        match self {
            JobReport::Generation(r) => (&r.job, &r.counts),
            JobReport::Judging(r) => (&r.job, &r.counts),
            JobReport::Synthesis(r) => (&r.job, &r.counts),
        }
    }
}
