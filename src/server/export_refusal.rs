//! An export request's refusals as the API answers them (400, 404, 422), for
//! `/export` and the conversation filters that share its parser.

use crate::config::Problem;
use crate::export::request::{Field, RequestError};
use crate::export::{self, ExportError};

use super::query_values::QUERY_LABEL;
use super::ApiError;

/// A 422 at `field` saying `message`.
pub(super) fn invalid(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::Invalid(vec![Problem::at_field(QUERY_LABEL, field, message)])
}

/// An export request's refusal as the API answers it.
pub fn refusal(e: RequestError) -> ApiError {
    match e {
        RequestError::UnknownFormat(other) => ApiError::BadRequest(format!(
            "format '{other}' is not supported; supported formats: {}",
            export::SUPPORTED_FORMATS
        )),
        RequestError::DpoNeedsJudge => invalid(
            "judge",
            "format=dpo needs judge=NAME (the pairwise judge whose verdicts make the pairs) or probe_pairs=true (a probe conversation that held the line against one that broke it)",
        ),
        RequestError::ProbePairsNotDpo => invalid(
            "probe_pairs",
            "probe_pairs applies to format=dpo only; to export the probes that held the line use probe_outcome=held",
        ),
        RequestError::JudgeAndProbePairs => invalid(
            "probe_pairs",
            "format=dpo takes its pairs from judge=NAME or from probe_pairs=true, not both: leave one out",
        ),
        RequestError::AdvantageNotDpo => invalid(
            "advantage",
            "advantage applies to rows of one conversation (openai, hf, sharegpt, nemo_gym), \
             each in its scenario's rollout group; format=dpo writes pairs: leave it out",
        ),
        RequestError::JudgeNotDpo => invalid(
            "judge",
            "judge applies to format=dpo only; to filter by a judge's score use min_judge=NAME=SCORE",
        ),
        RequestError::NotForScenarios(given) => ApiError::Invalid(
            given
                .into_iter()
                .map(|field| {
                    Problem::at_field(
                        QUERY_LABEL,
                        parameter(field),
                        "format=scenarios writes the job's synthesized scenarios, not its \
                         conversations, so this filter does not apply; leave it out",
                    )
                })
                .collect(),
        ),
        RequestError::NoJob(id) => ApiError::no_job(id),
        RequestError::NotNemoGym(e) => invalid_query("format", e),
        RequestError::Malformed(malformed) => ApiError::Invalid(
            malformed
                .into_iter()
                .map(|m| Problem::at_field(QUERY_LABEL, parameter(m.field), m.message))
                .collect(),
        ),
        RequestError::Unjudged { job, unjudged } => {
            let listed = unjudged.listed(job);
            ApiError::Invalid(
                unjudged
                    .min_judge
                    .iter()
                    .map(|judge| {
                        Problem::at_field(
                            QUERY_LABEL,
                            "min_judge",
                            format!(
                                "no judgments by '{judge}', so no conversation would be kept; {listed}"
                            ),
                        )
                    })
                    .collect(),
            )
        }
        RequestError::Store(e) => e.into(),
        RequestError::Corrupt(e) => ExportError::from(e).into(),
        RequestError::StratifyBy(message) => invalid("stratify_by", message),
        RequestError::CurateScenarios => invalid(
            "profile",
            "format=scenarios writes synthesized scenarios, which no gate applies to; leave profile out",
        ),
        RequestError::Curate(e) => e.into(),
        // Built-in profiles always read.
        RequestError::Profile(problems) => ApiError::Internal(
            problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; "),
        ),
        // A query names no output file and keeps no user tool calls.
        e @ (RequestError::UserToolsNotHf { .. }
        | RequestError::Out(_)
        | RequestError::SplitToStdout
        | RequestError::Writes { .. }
        | RequestError::NotOurs(_)) => ApiError::Internal(super::error::error_chain(&e)),
    }
}

/// A 422 at the query field `field`, or the store's error as it is.
pub(super) fn invalid_query(field: &str, e: ExportError) -> ApiError {
    match e {
        ExportError::Store(e) => e.into(),
        e => invalid(field, e.to_string()),
    }
}

/// The query parameter of `field`.
fn parameter(field: Field) -> &'static str {
    match field {
        Field::MinReward => "min_reward",
        Field::MaxReward => "max_reward",
        Field::Termination => "termination",
        Field::Scenario => "scenario",
        Field::Persona => "persona",
        Field::ProbeOutcome => "probe_outcome",
        Field::MinJudge => "min_judge",
        Field::DropFlagged => "drop_flagged",
        Field::KeepFlagged => "keep_flagged",
        Field::UserTools => "user_tools",
        Field::DropUserFlag => "drop_user_flag",
        Field::KeepUserFlagged => "keep_user_flagged",
        Field::Judge => "judge",
        Field::ProbePairs => "probe_pairs",
        Field::DpoShape => "dpo_shape",
        Field::Advantage => "advantage",
    }
}
