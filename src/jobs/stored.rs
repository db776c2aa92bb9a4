//! Jobs as stored: finding or creating the job a submission names (by its
//! config hash, or its name), for every kind; and the job a stored
//! generation job's row describes.

use crate::config::{self, Job};
use crate::store::{JobRow, NewJob, Store};

use super::error::RunError;

/// The job a stored generation job's row describes.
pub fn stored_job(row: &JobRow) -> Result<Job, RunError> {
    config::load::from_snapshot(
        &format!("job {} (stored config)", row.id),
        &row.config_snapshot,
    )
    .map_err(RunError::Invalid)
}

/// How a submitted job's name is checked when no stored job has its config
/// hash: where the three kinds differ.
#[derive(Debug, Clone, Copy)]
pub(super) enum ByName<'a> {
    /// The name is not looked up (a judging job's name carries its hash).
    Ignored,
    /// A stored job of this name has another config: refused
    /// ([`RunError::ConfigChanged`]).
    Refused(&'a str),
    /// As `Refused`, except that a job of this name with this very hash,
    /// stored by another process since the lookup by hash, is the job.
    RefusedUnlessSameHash(&'a str),
}

impl<'a> ByName<'a> {
    /// The name to look up, and whether a job of that name with the same
    /// hash is the job.
    fn looked_up(self) -> Option<(&'a str, bool)> {
        match self {
            ByName::Ignored => None,
            ByName::Refused(name) => Some((name, false)),
            ByName::RefusedUnlessSameHash(name) => Some((name, true)),
        }
    }
}

/// The stored job with config hash `hash` (to resume), or a new one from
/// `create`, and whether it existed; `new_job` always makes a new one. A
/// job that is not found by its hash is looked up `by_name`. `create` is
/// called only when a job is made.
pub(super) async fn find_or_create(
    store: &dyn Store,
    hash: &str,
    by_name: ByName<'_>,
    new_job: bool,
    create: impl FnOnce() -> Result<NewJob, RunError>,
) -> Result<(JobRow, bool), RunError> {
    if !new_job {
        if let Some(row) = store.find_job_by_config_hash(hash).await? {
            return Ok((row, true));
        }
        if let Some((name, same_hash_is_the_job)) = by_name.looked_up() {
            if let Some(other) = store.find_job_by_name(name).await? {
                if same_hash_is_the_job && other.config_hash == hash {
                    // Stored by another process since the lookup above.
                    return Ok((other, true));
                }
                return Err(RunError::ConfigChanged {
                    name: name.to_string(),
                    id: other.id,
                    stored: other.config_hash.chars().take(12).collect(),
                    now: hash.chars().take(12).collect(),
                });
            }
        }
    }
    let row = store.create_job(&create()?).await?;
    Ok((row, false))
}
