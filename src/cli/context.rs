//! What every command that runs a job shares: the context it runs in, and
//! the exit code of a run that could not be done.

use std::sync::Arc;

use crate::jobs::{self, RunError};
use crate::mock_llm::InProcessMock;
use crate::store;

use super::{report_problems, EXIT_INVALID};

/// The store at `database`, opened once for the whole command, and the
/// in-process mock for `mock = true` endpoints. The command closes the store
/// when its work is done: SQLite folds its write-ahead log back into the file,
/// and removes it, only then.
pub async fn context(database: &str) -> anyhow::Result<jobs::Context> {
    let store = store::open(database).await?;
    Ok(jobs::Context::new(store, Some(Arc::new(InProcessMock))))
}

/// The exit code of a run that could not be done: invalid inputs, a changed
/// config and an unknown job are the user's to fix (said, not raised).
pub(super) fn exit_for(e: RunError) -> anyhow::Result<i32> {
    match e {
        RunError::Invalid(problems) => {
            report_problems(&problems);
            Ok(EXIT_INVALID)
        }
        e @ RunError::ConfigChanged { .. } => {
            eprintln!("error: {e}");
            Ok(EXIT_INVALID)
        }
        e @ RunError::NoSuchJob(_) => {
            eprintln!("error: {e}");
            Ok(super::EXIT_NOT_FOUND)
        }
        e => Err(e.into()),
    }
}
