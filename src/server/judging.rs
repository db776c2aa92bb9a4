//! Judging jobs over HTTP. `POST /v1/judging-jobs` reads a JSON request into
//! the `JudgingSpec` that `sparring judge` builds from its flags, submits it
//! with the same library call and works it here like any job (events,
//! cancel, resume). `GET /v1/judgments/{id}` is one judgment with its calls.

use std::path::{Path, PathBuf};

use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::Value;

use crate::config::{Problem, Trust};
use crate::jobs::judging::{
    job_name, submit_judging, JudgesSource, JudgingSpec, JudgingTarget, MatchBy, INLINE_JUDGES,
};
use crate::judge::load_judges_with;

use super::views::{self, JudgmentView};
use super::{api, ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/judging-jobs", post(create_judging_job))
        .route("/v1/judgments/{id}", get(get_judgment))
}

const BODY_LABEL: &str = "request body";

/// The request as sent; `judges` and `target` are read by hand so that a
/// wrong shape is named with what would be right.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JudgingRequest {
    /// Judges TOML text (a judges.toml file's content), or `{"from_job": ID}`.
    judges: Value,
    /// `{"job": ID}`, or `{"a": ID, "b": ID}` for pairwise.
    target: Value,
    #[serde(default)]
    min_reward: Option<f64>,
    /// A new job even if one with the same judges and target exists.
    #[serde(default)]
    new_job: bool,
}

fn field_problem(field: &str, message: impl Into<String>) -> Problem {
    Problem::at_field(BODY_LABEL, field, message)
}

/// The integer `object[key]`, if the object has exactly the keys `keys`.
fn ids(value: &Value, keys: &[&str]) -> Option<Vec<i64>> {
    let object = value.as_object()?;
    if object.len() != keys.len() {
        return None;
    }
    keys.iter()
        .map(|key| object.get(*key).and_then(Value::as_i64))
        .collect()
}

fn judges_source(value: &Value, base: &Path) -> Result<JudgesSource, Problem> {
    if let Some(toml) = value.as_str() {
        return Ok(JudgesSource::Inline {
            toml: toml.to_string(),
            base: base.to_path_buf(),
        });
    }
    match ids(value, &["from_job"]).as_deref() {
        Some([job_id]) => Ok(JudgesSource::Job { job_id: *job_id }),
        _ => Err(field_problem(
            "judges",
            format!(
                "{value} is not judges; send judges TOML as a string (what a judges.toml file \
                 holds: [[judges]] tables and optional [endpoints]), or {{\"from_job\": JOB_ID}} \
                 for the [[judges]] of a generation job"
            ),
        )),
    }
}

fn target(value: &Value) -> Result<JudgingTarget, Problem> {
    if let Some([job_id]) = ids(value, &["job"]).as_deref() {
        return Ok(JudgingTarget::Job { job_id: *job_id });
    }
    if let Some([a, b]) = ids(value, &["a", "b"]).as_deref() {
        return Ok(JudgingTarget::Pairwise {
            a: *a,
            b: *b,
            match_by: MatchBy::Scenario,
        });
    }
    if let Some(match_by) = value.get("match_by").and_then(Value::as_str) {
        let mut rest = value.clone();
        if let Some(object) = rest.as_object_mut() {
            object.remove("match_by");
        }
        if let Some([a, b]) = ids(&rest, &["a", "b"]).as_deref() {
            let match_by = MatchBy::from_user(match_by)
                .map_err(|why| field_problem("target.match_by", why))?;
            return Ok(JudgingTarget::Pairwise {
                a: *a,
                b: *b,
                match_by,
            });
        }
    }
    Err(field_problem(
        "target",
        format!(
            "{value} is not a target; send {{\"job\": JOB_ID}} to judge a job's conversations, \
             or {{\"a\": JOB_A, \"b\": JOB_B}} to judge job A's conversations against job B's \
             (pairwise; with \"match_by\": \"prompt\" or \"metadata.KEY\" to pair them by \
             prompt or a metadata key instead of scenario, persona and sample)"
        ),
    ))
}

/// The spec the request asks for, every problem at once.
fn spec_of(request: &JudgingRequest, base: &Path) -> Result<JudgingSpec, ApiError> {
    let judges = judges_source(&request.judges, base);
    let target = target(&request.target);
    match (judges, target) {
        (Ok(judges), Ok(target)) => Ok(JudgingSpec {
            judges,
            target,
            min_reward: request.min_reward,
        }),
        (judges, target) => Err(ApiError::Invalid(
            [judges.err(), target.err()].into_iter().flatten().collect(),
        )),
    }
}

/// The jobs the spec names, each with the request field that names it.
fn named_jobs(spec: &JudgingSpec) -> Vec<(&'static str, i64)> {
    let mut jobs = match spec.target {
        JudgingTarget::Job { job_id } => vec![("target.job", job_id)],
        JudgingTarget::Pairwise { a, b, .. } => vec![("target.a", a), ("target.b", b)],
    };
    if let JudgesSource::Job { job_id } = spec.judges {
        jobs.push(("judges.from_job", job_id));
    }
    jobs
}

#[tracing::instrument(skip_all)]
async fn create_judging_job(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: JudgingRequest = serde_json::from_slice(&body)
        .map_err(|e| ApiError::Invalid(vec![Problem::from_json_error(BODY_LABEL, &e)]))?;
    let mut spec = spec_of(&request, state.boundary.data_root())?;
    if let JudgesSource::Inline { toml, base } = &mut spec.judges {
        // Checked as the submitter's (paths inside the data root, no keys but
        // the operator's), and kept resolved, so that the job, when it runs,
        // reads exactly what was checked; the templates it names are read
        // off the async workers.
        let (text, from, boundary) = (toml.clone(), base.clone(), state.boundary.clone());
        let set = super::blocking::off_the_workers(async move {
            load_judges_with(
                Path::new(INLINE_JUDGES),
                &text,
                &from,
                Trust::Submitted(&boundary),
            )
            .map_err(ApiError::Invalid)
        })
        .await?;
        *toml = set.resolved;
        *base = PathBuf::from("/");
    }
    let mut missing = Vec::new();
    for (field, id) in named_jobs(&spec) {
        if state.store.get_job(id).await?.is_none() {
            missing.push(field_problem(field, format!("job {id} does not exist")));
        }
    }
    if !missing.is_empty() {
        return Err(ApiError::Invalid(missing));
    }
    let name = job_name(&spec.target);
    let (row, existed) =
        submit_judging(state.store.as_ref(), &spec, &name, request.new_job).await?;
    api::start_submitted(&state, row.id, existed).await
}

async fn get_judgment(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
) -> Result<Response, ApiError> {
    let sides = views::judgment_sides(state.store.as_ref(), id).await?;
    Ok(Json(JudgmentView::from(&sides)).into_response())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn judges_are_toml_text_or_a_job_and_anything_else_says_what_would_do() {
        let base = Path::new("/srv");
        assert_eq!(
            judges_source(&json!({"from_job": 3}), base).unwrap(),
            JudgesSource::Job { job_id: 3 }
        );
        assert!(matches!(
            judges_source(&json!("[[judges]]"), base).unwrap(),
            JudgesSource::Inline { .. }
        ));
        let problem = judges_source(&json!({"from_job": "3", "x": 1}), base).unwrap_err();
        assert_eq!(problem.location.as_deref(), Some("judges"));
        assert!(problem.message.contains("from_job"), "{}", problem.message);
    }

    #[test]
    fn a_target_is_a_job_or_two_and_both_bad_fields_are_reported() {
        assert_eq!(
            target(&json!({"a": 1, "b": 2})).unwrap(),
            JudgingTarget::Pairwise {
                a: 1,
                b: 2,
                match_by: MatchBy::Scenario
            }
        );
        assert_eq!(
            target(&json!({"job": 5})).unwrap(),
            JudgingTarget::Job { job_id: 5 }
        );
        let request = JudgingRequest {
            judges: json!(7),
            target: json!({"a": 1}),
            min_reward: None,
            new_job: false,
        };
        let Err(ApiError::Invalid(problems)) = spec_of(&request, Path::new("/")) else {
            panic!("a bad request is accepted");
        };
        let fields: Vec<_> = problems.iter().map(|p| p.location.as_deref()).collect();
        assert_eq!(fields, [Some("judges"), Some("target")]);
    }
}
