//! A job's failed items whole (key, scenario, sample, last error), for the
//! service's `/v1/rollouts` stream, which tells a trainer each rollout that
//! failed (never as a reward of 0).

use super::dialect::Dialect;
use super::runs::Runs;
use super::statement::{sql, Param, Sql};
use super::SqlStore;
use crate::store::decode;
use crate::store::{ItemRow, StoreError};

const FAILED: Sql = sql!(
    "SELECT id, job_id, key, scenario_id, persona_id, sample, seed, status, attempts, \
     lease_owner, lease_expires_at, last_error FROM items \
     WHERE job_id = $1 AND status = 'failed' ORDER BY id"
);

pub(super) async fn of_job(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<Vec<ItemRow>, StoreError> {
    store
        .reader()
        .fetch_all(&FAILED, &[Param::Int(job_id)])
        .await?
        .iter()
        .map(decode::item)
        .collect()
}
