//! `job_personas`: a job's personas, written once per job (again changes
//! nothing) and read back in persona id order.

use std::collections::BTreeMap;
use std::sync::LazyLock;

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

/// Personas per multi-row INSERT: 10,000 personas are 100 statements (on
/// Postgres, 100 round trips instead of 10,000), each of 201 values.
const CHUNK: usize = 100;

/// [`PUT`] for [`CHUNK`] personas at once (`$1` the job, then each
/// persona's id and attributes), made once.
static PUT_CHUNK: LazyLock<Sql> = LazyLock::new(|| {
    let rows: Vec<String> = (0..CHUNK)
        .map(|i| format!("($1, ${}, ${})", 2 + 2 * i, 3 + 2 * i))
        .collect();
    let text: &'static str = Box::leak(
        format!(
            "INSERT INTO job_personas (job_id, persona_id, attributes) VALUES {} \
             ON CONFLICT (job_id, persona_id) DO NOTHING",
            rows.join(", ")
        )
        .into_boxed_str(),
    );
    Sql {
        sqlite: text,
        postgres: text,
    }
});

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
    let attributes = personas
        .iter()
        .map(|p| {
            serde_json::to_string(&p.attributes)
                .map_err(|e| StoreError::Corrupt(format!("persona {}: {e}", p.persona_id)))
        })
        .collect::<Result<Vec<String>, StoreError>>()?;
    let rows: Vec<(&str, &str)> = personas
        .iter()
        .zip(&attributes)
        .map(|(p, a)| (p.persona_id.as_str(), a.as_str()))
        .collect();
    let mut tx = store.begin_write().await?;
    let mut new = 0;
    let whole = rows.len() - rows.len() % CHUNK;
    for chunk in rows[..whole].chunks(CHUNK) {
        let mut params = vec![Param::Int(job_id)];
        for (id, attributes) in chunk {
            params.push(Param::Text(id));
            params.push(Param::Text(attributes));
        }
        new += tx.execute(&PUT_CHUNK, &params).await?;
    }
    for (id, attributes) in &rows[whole..] {
        new += tx
            .execute(
                &PUT,
                &[Param::Int(job_id), Param::Text(id), Param::Text(attributes)],
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
