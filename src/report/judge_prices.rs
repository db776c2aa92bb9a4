//! Which endpoint, and so which prices, each judge of a job's judgments
//! used: the job's own `[[judges]]`, and the judges of the judging jobs that
//! judged it (their judges file, or the judges sent with them).

use std::collections::HashMap;
use std::path::Path;

use crate::config::{EndpointConfig, Job};
use crate::judge::{judges_of_job, load_judges_file, load_judges_text, JudgeSet};
use crate::store::{JobKind, JobStore, StoreError};

use super::usage::JudgePrices;

fn prices_of(endpoint: &str, config: &EndpointConfig) -> JudgePrices {
    JudgePrices {
        endpoint: endpoint.to_string(),
        prices: config.prices(),
        batch: config.batch().and_then(|b| b.prices),
    }
}

/// The judges a judging job's stored spec names, read again (`None` when
/// they cannot be: a judges file since moved, a spec of another version).
fn judges_of_judging_job(snapshot: &str) -> Option<JudgeSet> {
    let spec: serde_json::Value = serde_json::from_str(snapshot).ok()?;
    let judges = spec.get("judges")?;
    match judges.get("source")?.as_str()? {
        "file" => load_judges_file(Path::new(judges.get("path")?.as_str()?)).ok(),
        "inline" => load_judges_text(
            Path::new("judges"),
            judges.get("toml")?.as_str()?,
            Path::new(judges.get("base")?.as_str()?),
        )
        .ok(),
        _ => None,
    }
}

/// Judge name → endpoint and prices, for the judges of `config` (the job's
/// stored config) and of the judging jobs `judging_jobs`.
pub async fn judge_prices(
    store: &dyn JobStore,
    config: Option<&Job>,
    judging_jobs: &[i64],
) -> Result<HashMap<String, JudgePrices>, StoreError> {
    let mut out = HashMap::new();
    if let Some(config) = config {
        for judge in judges_of_job(config).unwrap_or_default() {
            if let Some(endpoint) = config.endpoints.get(&judge.endpoint) {
                out.insert(judge.name.clone(), prices_of(&judge.endpoint, endpoint));
            }
        }
    }
    for &id in judging_jobs {
        let Some(row) = store.get_job(id).await? else {
            continue;
        };
        if row.kind != JobKind::Judging {
            continue;
        }
        let Some(set) = judges_of_judging_job(&row.config_snapshot) else {
            continue;
        };
        for judge in set.judges {
            let endpoint = set
                .endpoints
                .get(&judge.endpoint)
                .or_else(|| config.and_then(|c| c.endpoints.get(&judge.endpoint)));
            if let Some(endpoint) = endpoint {
                out.entry(judge.name.clone())
                    .or_insert_with(|| prices_of(&judge.endpoint, endpoint));
            }
        }
    }
    Ok(out)
}
