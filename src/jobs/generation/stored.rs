//! What a stored generation job's config says about its conversations.

use crate::fidelity::UserFlag;
use crate::store::JobRow;

use super::super::stored::stored_job;

/// The deterministic user checks a stored generation job's config lists in
/// `[user_simulator] drop_flagged`: exports leave out what they flag unless
/// told to keep it (none when its stored config cannot be read).
pub fn drop_flagged_user_checks(row: &JobRow) -> Vec<UserFlag> {
    stored_job(row)
        .map(|job| {
            job.user_simulator
                .drop_flagged
                .iter()
                .filter_map(|name| UserFlag::parse(name))
                .collect()
        })
        .unwrap_or_default()
}
