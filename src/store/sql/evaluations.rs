//! `evaluations` and `evaluation_policies`: an evaluation by its name, and
//! each policy's job in order.

use super::dialect::Dialect;
use super::runs::{Commit, Runs};
use super::statement::{sql, Param, Sql};
use super::SqlStore;
use crate::store::decode::StoredRow;
use crate::store::{EvaluationPolicy, EvaluationRow, StoreError};

const CREATE: Sql = sql!(
    "INSERT INTO evaluations (name, baseline, judge, created_at) VALUES ($1, $2, $3, ",
    NOW,
    ") ON CONFLICT (name) DO UPDATE SET baseline = $2, judge = $3 RETURNING id"
);
const BY_ID: Sql =
    sql!("SELECT id, name, baseline, judge, created_at FROM evaluations WHERE id = $1");
const BY_NAME: Sql =
    sql!("SELECT id, name, baseline, judge, created_at FROM evaluations WHERE name = $1");
const ALL: Sql =
    sql!("SELECT id, name, baseline, judge, created_at FROM evaluations ORDER BY id DESC");
const POLICIES: Sql = sql!(
    "SELECT policy, position, job_id FROM evaluation_policies WHERE evaluation_id = $1 \
     ORDER BY position, policy"
);
const PUT_POLICY: Sql = sql!(
    "INSERT INTO evaluation_policies (evaluation_id, policy, position, job_id) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (evaluation_id, policy) \
     DO UPDATE SET position = $3, job_id = $4"
);
const CLEAR_POLICIES: Sql = sql!("DELETE FROM evaluation_policies WHERE evaluation_id = $1");

pub(super) async fn open(
    store: &SqlStore<impl Dialect>,
    name: &str,
    baseline: Option<&str>,
    judge: Option<&str>,
) -> Result<i64, StoreError> {
    let row = store
        .writer()
        .fetch_one(
            &CREATE,
            &[
                Param::Text(name),
                Param::OptText(baseline),
                Param::OptText(judge),
            ],
        )
        .await?;
    Ok(row.int("id")?)
}

pub(super) async fn put_policy(
    store: &SqlStore<impl Dialect>,
    evaluation_id: i64,
    policy: &str,
    position: i64,
    job_id: i64,
) -> Result<(), StoreError> {
    store
        .writer()
        .execute(
            &PUT_POLICY,
            &[
                Param::Int(evaluation_id),
                Param::Text(policy),
                Param::Int(position),
                Param::Int(job_id),
            ],
        )
        .await?;
    Ok(())
}

pub(super) async fn set_policies(
    store: &SqlStore<impl Dialect>,
    evaluation_id: i64,
    policies: &[(String, i64)],
) -> Result<(), StoreError> {
    let mut tx = store.begin_write().await?;
    tx.execute(&CLEAR_POLICIES, &[Param::Int(evaluation_id)])
        .await?;
    for (position, (policy, job_id)) in (0..).zip(policies) {
        tx.execute(
            &PUT_POLICY,
            &[
                Param::Int(evaluation_id),
                Param::Text(policy),
                Param::Int(position),
                Param::Int(*job_id),
            ],
        )
        .await?;
    }
    tx.commit().await
}

pub(super) async fn get(
    store: &SqlStore<impl Dialect>,
    id: i64,
) -> Result<Option<EvaluationRow>, StoreError> {
    let row = store
        .reader()
        .fetch_optional(&BY_ID, &[Param::Int(id)])
        .await?;
    with_policies(store, row).await
}

pub(super) async fn find_by_name(
    store: &SqlStore<impl Dialect>,
    name: &str,
) -> Result<Option<EvaluationRow>, StoreError> {
    let row = store
        .reader()
        .fetch_optional(&BY_NAME, &[Param::Text(name)])
        .await?;
    with_policies(store, row).await
}

pub(super) async fn all(store: &SqlStore<impl Dialect>) -> Result<Vec<EvaluationRow>, StoreError> {
    let rows = store.reader().fetch_all(&ALL, &[]).await?;
    let mut evaluations = Vec::with_capacity(rows.len());
    for row in rows {
        if let Some(evaluation) = with_policies(store, Some(row)).await? {
            evaluations.push(evaluation);
        }
    }
    Ok(evaluations)
}

async fn with_policies<D: Dialect>(
    store: &SqlStore<D>,
    row: Option<D::Row>,
) -> Result<Option<EvaluationRow>, StoreError> {
    let Some(row) = row else {
        return Ok(None);
    };
    let id = row.int("id")?;
    let policies = store
        .reader()
        .fetch_all(&POLICIES, &[Param::Int(id)])
        .await?
        .iter()
        .map(|p| {
            Ok(EvaluationPolicy {
                policy: p.text("policy")?,
                position: p.int("position")?,
                job_id: p.int("job_id")?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    Ok(Some(EvaluationRow {
        id,
        name: row.text("name")?,
        baseline: row.opt_text("baseline")?,
        judge: row.opt_text("judge")?,
        created_at: row.int("created_at")?,
        policies,
    }))
}
