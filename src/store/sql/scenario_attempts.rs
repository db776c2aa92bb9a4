//! [`ScenarioAttempts`] of a job: its items joined with their conversations,
//! counted per scenario in one statement (one snapshot of both tables).

use super::dialect::Dialect;
use super::runs::Runs;
use super::statement::{sql, Param, Sql};
use super::SqlStore;
use crate::store::decode::StoredRow;
use crate::store::{ScenarioAttempts, StoreError};

// `conversations.item_id` is unique and indexed: one lookup per item.
const PER_SCENARIO: Sql = sql!(
    "SELECT items.scenario_id AS scenario_id, COUNT(*) AS planned, \
     SUM(CASE WHEN items.status IN ('pending', 'leased') THEN 1 ELSE 0 END) AS waiting, \
     SUM(CASE WHEN items.status = 'failed' THEN 1 ELSE 0 END) AS failed, \
     SUM(CASE WHEN items.status = 'done' AND conversations.reward IS NULL THEN 1 ELSE 0 END) \
     AS unscored, \
     SUM(CASE WHEN items.status = 'done' AND conversations.reward IS NOT NULL THEN 1 ELSE 0 END) \
     AS scored, \
     SUM(CASE WHEN items.status = 'done' AND conversations.reward >= $2 THEN 1 ELSE 0 END) \
     AS passed \
     FROM items LEFT JOIN conversations ON conversations.item_id = items.id \
     WHERE items.job_id = $1 GROUP BY items.scenario_id"
);

/// Per scenario of job `job_id`, sorted by scenario id; a pass is a reward
/// of at least `success_reward`.
pub(super) async fn of_job(
    store: &SqlStore<impl Dialect>,
    job_id: i64,
    success_reward: f64,
) -> Result<Vec<ScenarioAttempts>, StoreError> {
    let rows = store
        .reader()
        .fetch_all(
            &PER_SCENARIO,
            &[Param::Int(job_id), Param::OptReal(Some(success_reward))],
        )
        .await?;
    let mut out = rows
        .iter()
        .map(|row| {
            let scenario_id = row.text("scenario_id")?;
            let count = |column: &str| -> Result<u64, StoreError> {
                let n = row.int(column)?;
                u64::try_from(n).map_err(|_| {
                    StoreError::Corrupt(format!(
                        "items of job {job_id}, scenario '{scenario_id}': {column} counts {n}"
                    ))
                })
            };
            Ok(ScenarioAttempts {
                planned: count("planned")?,
                waiting: count("waiting")?,
                failed: count("failed")?,
                unscored: count("unscored")?,
                scored: count("scored")?,
                passed: count("passed")?,
                scenario_id: scenario_id.clone(),
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    // Sorted here: Postgres would order text by its locale.
    out.sort_by(|a, b| a.scenario_id.cmp(&b.scenario_id));
    Ok(out)
}
