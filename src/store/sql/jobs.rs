//! The `jobs` table.

use super::dialect::Dialect;
use super::runs::Runs;
use super::statement::{sql, Param, Sql};
use super::SqlStore;
use crate::store::decode::{self, job_columns};
use crate::store::{JobRow, JobStatus, NewJob, StoreError};

const CREATE: Sql = sql!(
    "INSERT INTO jobs (name, kind, config_snapshot, config_hash, status, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, ",
    NOW,
    ", ",
    NOW,
    ") RETURNING ",
    job_columns!()
);
const BY_ID: Sql = sql!("SELECT ", job_columns!(), " FROM jobs WHERE id = $1");
const NEWEST_BY_CONFIG_HASH: Sql = sql!(
    "SELECT ",
    job_columns!(),
    " FROM jobs WHERE config_hash = $1 ORDER BY id DESC LIMIT 1"
);
const NEWEST_BY_NAME: Sql = sql!(
    "SELECT ",
    job_columns!(),
    " FROM jobs WHERE name = $1 ORDER BY id DESC LIMIT 1"
);
const OPEN: Sql = sql!(
    "SELECT ",
    job_columns!(),
    " FROM jobs WHERE status IN ('pending', 'running') ORDER BY id"
);
const ALL: Sql = sql!("SELECT ", job_columns!(), " FROM jobs ORDER BY id DESC");
const SET_STATUS: Sql = sql!(
    "UPDATE jobs SET status = $1, updated_at = ",
    NOW,
    " WHERE id = $2"
);

pub(super) async fn create(
    store: &SqlStore<impl Dialect>,
    job: &NewJob,
) -> Result<JobRow, StoreError> {
    let row = store
        .writer()
        .fetch_one(
            &CREATE,
            &[
                Param::Text(&job.name),
                Param::Text(job.kind.as_str()),
                Param::Text(&job.config_snapshot),
                Param::Text(&job.config_hash),
                Param::Text(JobStatus::Pending.as_str()),
            ],
        )
        .await?;
    decode::job(&row)
}

pub(super) async fn get(
    store: &SqlStore<impl Dialect>,
    id: i64,
) -> Result<Option<JobRow>, StoreError> {
    one(store, &BY_ID, Param::Int(id)).await
}

pub(super) async fn find_by_config_hash(
    store: &SqlStore<impl Dialect>,
    hash: &str,
) -> Result<Option<JobRow>, StoreError> {
    one(store, &NEWEST_BY_CONFIG_HASH, Param::Text(hash)).await
}

pub(super) async fn find_by_name(
    store: &SqlStore<impl Dialect>,
    name: &str,
) -> Result<Option<JobRow>, StoreError> {
    one(store, &NEWEST_BY_NAME, Param::Text(name)).await
}

pub(super) async fn open(store: &SqlStore<impl Dialect>) -> Result<Vec<JobRow>, StoreError> {
    many(store, &OPEN).await
}

pub(super) async fn all(store: &SqlStore<impl Dialect>) -> Result<Vec<JobRow>, StoreError> {
    many(store, &ALL).await
}

pub(super) async fn set_status(
    store: &SqlStore<impl Dialect>,
    id: i64,
    status: JobStatus,
) -> Result<(), StoreError> {
    let changed = store
        .writer()
        .execute(&SET_STATUS, &[Param::Text(status.as_str()), Param::Int(id)])
        .await?;
    if changed == 0 {
        tracing::warn!(
            job_id = id,
            status = status.as_str(),
            "set_job_status: no such job"
        );
    }
    Ok(())
}

/// The job `sql` finds by its one value, if any.
async fn one(
    store: &SqlStore<impl Dialect>,
    sql: &Sql,
    value: Param<'_>,
) -> Result<Option<JobRow>, StoreError> {
    store
        .reader()
        .fetch_optional(sql, &[value])
        .await?
        .as_ref()
        .map(decode::job)
        .transpose()
}

async fn many(store: &SqlStore<impl Dialect>, sql: &Sql) -> Result<Vec<JobRow>, StoreError> {
    store
        .reader()
        .fetch_all(sql, &[])
        .await?
        .iter()
        .map(decode::job)
        .collect()
}
