//! How a job is worked here, whatever its kind: the options the edge passes
//! ([`RunOptions`]) and who works it ([`Mode`]).

use std::sync::Arc;

use super::progress::{Notice, ProgressSink};

#[derive(Clone, Default)]
pub struct RunOptions {
    /// Overrides the config's concurrency.
    pub concurrency: Option<usize>,
    /// Put failed items back to pending first.
    pub retry_failed: bool,
    /// Start a new job even if one with this name (or this config) exists.
    pub new_job: bool,
    /// Where progress and notices go; none for no progress.
    pub progress: Option<Arc<dyn ProgressSink>>,
    /// Stop the run (as Ctrl-C does) once this turns true.
    pub stop: Option<tokio::sync::watch::Receiver<bool>>,
}

/// Who works the job: `sparring run` (or the service), or `sparring worker`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Mode {
    /// Wait for items others hold until the job is done, then run the
    /// job's own judges.
    #[default]
    Run,
    /// One of many workers: leave the job's judges to `sparring run` or
    /// `sparring judge`, and wait for items others hold only when told to.
    Worker { wait_for_others: bool },
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("concurrency", &self.concurrency)
            .field("retry_failed", &self.retry_failed)
            .field("new_job", &self.new_job)
            .field("progress", &self.progress.is_some())
            .field("stop", &self.stop.is_some())
            .finish()
    }
}

impl RunOptions {
    /// Tell the sink, or the log when there is none (the service).
    pub(super) fn notice(&self, notice: Notice) {
        match &self.progress {
            Some(sink) => sink.notice(&notice),
            None => tracing::info!(%notice),
        }
    }
}
