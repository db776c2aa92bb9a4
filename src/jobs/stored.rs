//! Jobs as stored: finding or creating the job a submission names (by its
//! config hash, or its name), for every kind; and the job a stored
//! generation job's row describes.

use crate::config::{self, Job};
use crate::store::{JobRow, JobStore, NewJob};

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
    store: &dyn JobStore,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::JobKind;

    fn new_job(name: &str, hash: &str) -> NewJob {
        NewJob {
            name: name.into(),
            kind: JobKind::Generation,
            config_snapshot: String::new(),
            config_hash: hash.into(),
        }
    }

    #[tokio::test]
    async fn a_job_is_found_by_its_hash_and_its_name_is_checked_as_each_kind_says() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("jobs.db").display());
        let store = crate::store::open(&url).await.unwrap();
        let store = store.as_ref();
        let create = |name: &'static str, hash: &'static str| move || Ok(new_job(name, hash));

        let (first, existed) =
            find_or_create(store, "h1", ByName::Refused("a"), false, create("a", "h1"))
                .await
                .unwrap();
        assert!(!existed);
        let (again, existed) = find_or_create(store, "h1", ByName::Refused("a"), false, || {
            panic!("a job found is not made again")
        })
        .await
        .unwrap();
        assert!(existed);
        assert_eq!(again.id, first.id);

        let refused =
            find_or_create(store, "h2", ByName::Refused("a"), false, create("a", "h2")).await;
        assert!(
            matches!(&refused, Err(RunError::ConfigChanged { id, .. }) if *id == first.id),
            "{refused:?}"
        );
        let refused = find_or_create(
            store,
            "h2",
            ByName::RefusedUnlessSameHash("a"),
            false,
            create("a", "h2"),
        )
        .await;
        assert!(matches!(refused, Err(RunError::ConfigChanged { .. })));

        let (other, existed) =
            find_or_create(store, "h2", ByName::Ignored, false, create("a-h2", "h2"))
                .await
                .unwrap();
        assert!(!existed);
        assert_ne!(other.id, first.id);

        let (fresh, existed) =
            find_or_create(store, "h1", ByName::Refused("a"), true, create("a", "h1"))
                .await
                .unwrap();
        assert!(!existed, "new_job makes a new job even with a stored hash");
        assert_ne!(fresh.id, first.id);
    }
}
