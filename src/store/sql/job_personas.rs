//! `job_personas`: a job's personas, written once per job (again changes
//! nothing) and read back in persona id order.

use std::collections::BTreeMap;

use super::dialect::Dialect;
use super::runs::{Commit, Runs};
use super::statement::{sql, Param, Sql};
use super::SqlStore;
use crate::store::decode::StoredRow;
use crate::store::{JobPersona, StoreError};

const PUT: Sql = sql!(
    "INSERT INTO job_personas (job_id, persona_id, attributes) VALUES ($1, $2, $3) \
     ON CONFLICT (job_id, persona_id) DO NOTHING"
);
const OF_JOB: Sql = sql!("SELECT persona_id, attributes FROM job_personas WHERE job_id = $1");

/// In one transaction, those of `personas` job `job_id` does not hold yet;
/// how many were new.
pub(super) async fn put(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
    personas: &[JobPersona],
) -> Result<u64, StoreError> {
    if personas.is_empty() {
        return Ok(0);
    }
    let mut tx = store.begin_write().await?;
    let mut new = 0;
    for persona in personas {
        let attributes = serde_json::to_string(&persona.attributes)
            .map_err(|e| StoreError::Corrupt(format!("persona {}: {e}", persona.persona_id)))?;
        new += tx
            .execute(
                &PUT,
                &[
                    Param::Int(job_id),
                    Param::Text(&persona.persona_id),
                    Param::Text(&attributes),
                ],
            )
            .await?;
    }
    tx.commit().await?;
    Ok(new)
}

/// Job `job_id`'s personas, by id.
pub(super) async fn of_job(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
) -> Result<Vec<JobPersona>, StoreError> {
    let rows = store
        .reader()
        .fetch_all(&OF_JOB, &[Param::Int(job_id)])
        .await?;
    let mut personas = rows
        .iter()
        .map(|row| {
            let persona_id = row.text("persona_id")?;
            let text = row.text("attributes")?;
            let attributes: BTreeMap<String, serde_json::Value> = serde_json::from_str(&text)
                .map_err(|e| {
                    StoreError::Corrupt(format!(
                        "job_personas row ({job_id}, {persona_id}), column attributes: not a \
                         JSON object ({e})"
                    ))
                })?;
            Ok(JobPersona {
                persona_id,
                attributes,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    // Sorted here: Postgres would order text by its locale.
    personas.sort_by(|a, b| a.persona_id.cmp(&b.persona_id));
    Ok(personas)
}
