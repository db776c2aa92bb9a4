//! What one model call's HTTP attempts cost, beyond the model's own time:
//! time waited for admission (so the call's latency can leave it out) and how
//! many retries were made.

use std::time::Duration;

/// One call's measure, once it is over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallMeasure {
    /// Time its attempts waited for the endpoint's limits and pauses.
    pub admission_wait: Duration,
    /// Attempts after the first.
    pub retries: u64,
}
