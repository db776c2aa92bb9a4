//! `GET /v1/evaluations/{id}/leaderboard`: a stored evaluation's table, as
//! `sparring leaderboard --evaluation ID --json` prints it.

use axum::extract::{Path as UrlPath, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use crate::config::Problem;
use crate::evaluation::{leaderboard, LeaderboardError, LeaderboardRequest};
use crate::store::EvaluationStore;

use super::query_values::{refuse_unparsed, Number, QUERY_LABEL};
use super::{ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new().route(
        "/v1/evaluations/{id}/leaderboard",
        get(evaluation_leaderboard),
    )
}

#[derive(Debug, Deserialize, Default)]
struct LeaderboardQuery {
    /// A policy of the evaluation; its stored baseline (or its first policy)
    /// when left out.
    baseline: Option<String>,
    /// A pairwise judge; the evaluation's own when left out.
    judge: Option<String>,
    pass_threshold: Option<String>,
    resamples: Option<String>,
    seed: Option<String>,
}

#[tracing::instrument(skip(state))]
async fn evaluation_leaderboard(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
    Query(query): Query<LeaderboardQuery>,
) -> Result<Response, ApiError> {
    refuse_unparsed(&[
        (
            "pass_threshold",
            &query.pass_threshold,
            Number::Real,
            "a number from -1,000,000 to 1,000,000",
        ),
        (
            "resamples",
            &query.resamples,
            Number::Whole,
            "a whole number from 100 to 100,000",
        ),
        (
            "seed",
            &query.seed,
            Number::Whole,
            "a whole number from 0 to 9,223,372,036,854,775,807",
        ),
    ])?;
    let pass_threshold = number(&query.pass_threshold, 1.0);
    let resamples = number(&query.resamples, 2000.0);
    let seed = query
        .seed
        .as_deref()
        .and_then(|t| t.trim().parse::<i64>().ok())
        .unwrap_or(0);
    let mut problems = Vec::new();
    if !(-1e6..=1e6).contains(&pass_threshold) {
        problems.push(out_of_range(
            "pass_threshold",
            "from -1,000,000 to 1,000,000",
        ));
    }
    if !(100.0..=100_000.0).contains(&resamples) {
        problems.push(out_of_range(
            "resamples",
            "a whole number from 100 to 100,000",
        ));
    }
    if seed < 0 {
        problems.push(out_of_range("seed", "a whole number from 0"));
    }
    if !problems.is_empty() {
        return Err(ApiError::Invalid(problems));
    }
    let store: &dyn EvaluationStore = state.store.as_ref();
    let evaluation = store
        .get_evaluation(id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("evaluation {id} does not exist")))?;
    let baseline_name = query.baseline.as_ref().or(evaluation.baseline.as_ref());
    let baseline = match baseline_name {
        None => None,
        Some(name) => match evaluation.policies.iter().find(|p| &p.policy == name) {
            Some(p) => Some(p.job_id),
            None => {
                return Err(ApiError::Invalid(vec![Problem::at_field(
                    QUERY_LABEL,
                    "baseline",
                    format!(
                        "'{name}' is not a policy of evaluation {id} ({}); name one, or leave \
                         `baseline` out",
                        evaluation
                            .policies
                            .iter()
                            .map(|p| p.policy.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )]))
            }
        },
    };
    let request = LeaderboardRequest {
        jobs: evaluation.policies.iter().map(|p| p.job_id).collect(),
        baseline,
        judge: query.judge.clone().or(evaluation.judge.clone()),
        pass_threshold,
        resamples: resamples as u32,
        seed: seed.unsigned_abs(),
    };
    match leaderboard(state.store.as_ref(), &request).await {
        Ok(table) => Ok(Json(table).into_response()),
        Err(LeaderboardError::Store(e)) => Err(e.into()),
        Err(LeaderboardError::NoSuchJob(job)) => Err(ApiError::Internal(format!(
            "evaluation {id} names job {job}, which is not stored"
        ))),
        // Too few policies run so far, or none of their items shared.
        Err(e) => Err(ApiError::Conflict(format!("evaluation {id}: {e}"))),
    }
}

/// A query number already known to read (see `refuse_unparsed`).
fn number(text: &Option<String>, default: f64) -> f64 {
    text.as_deref()
        .and_then(|t| t.trim().parse::<f64>().ok())
        .unwrap_or(default)
}

fn out_of_range(field: &str, what: &str) -> Problem {
    Problem::at_field(QUERY_LABEL, field, format!("is out of range; give {what}"))
}
