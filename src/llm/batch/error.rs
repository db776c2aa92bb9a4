//! What can go wrong talking to the Batch API.

/// A Batch API call that failed. Nothing is retried here: the judging job
/// tries again at its next poll, and a batch's ids are stored as soon as they
/// exist, so a failed step never makes a request twice.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error("{what}: the server could not be reached: {message}")]
    Connection { what: &'static str, message: String },
    #[error("{what}: HTTP {status}: {message}")]
    Status {
        what: &'static str,
        status: u16,
        message: String,
    },
    #[error("{what}: the answer is not what the Batch API sends: {message}")]
    Malformed { what: &'static str, message: String },
}
