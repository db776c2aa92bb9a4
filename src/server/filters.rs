//! Query-string filters of the conversation browser, read into the library's
//! own filters (`store::browse::ConversationFilter` and `export::Filter`), so
//! the API, the web UI and `sparring export` keep and drop the same
//! conversations; and the readers of query values the export's query
//! (`super::export`, `super::export_refusal`) shares. A malformed filter is a 422 naming its field.

use serde::Deserialize;

use crate::config::Problem;
use crate::export::{self, JudgmentIndex, MinJudge};
use crate::store::browse::{filtered_page, ConversationFilter, Page};
use crate::store::Store;

use super::query_values::{refuse_unparsed, Number};
use super::ApiError;

pub use super::query_values::QUERY_LABEL;

/// A conversation browser's query string as sent: every value is text, so
/// that a malformed number is a 422 naming its field and saying what would
/// be right, not a bare "Failed to deserialize query string".
#[derive(Debug, Deserialize, Default, Clone)]
pub struct RawConversationsQuery {
    pub after: Option<String>,
    pub limit: Option<String>,
    pub min_reward: Option<String>,
    pub max_reward: Option<String>,
    pub termination: Option<String>,
    pub scenario: Option<String>,
    pub persona: Option<String>,
    pub min_judge: Option<String>,
    pub drop_flagged: Option<String>,
}

/// A conversation browser's filters and page, checked.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ConversationsQuery {
    /// The `next` of the previous page.
    pub after: Option<i64>,
    pub limit: Option<u32>,
    pub min_reward: Option<f64>,
    pub max_reward: Option<f64>,
    pub termination: Option<String>,
    pub scenario: Option<String>,
    pub persona: Option<String>,
    /// `NAME=SCORE`, comma-separated for several (all must hold).
    pub min_judge: Option<String>,
    /// Judge names, comma-separated.
    pub drop_flagged: Option<String>,
}

/// Rewards given in a filter lie in this range (rewards are products of
/// scores in [0, 1]; a verifier may report others, never this large).
pub const REWARD_RANGE: (f64, f64) = (-1e9, 1e9);

/// A text value left empty (a form's blank field) counts as not given.
pub(super) fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// A reward bound: a finite number in [`REWARD_RANGE`].
pub fn reward_bound(
    field: &str,
    value: &Option<String>,
    problems: &mut Vec<Problem>,
) -> Option<f64> {
    let text = given(value)?;
    let (low, high) = REWARD_RANGE;
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && (low..=high).contains(&v) => Some(v),
        _ => {
            problems.push(Problem::at_field(
                QUERY_LABEL,
                field,
                format!(
                    "'{text}' is not a reward; give a number such as 0.5 or 1 (between {low:e} and {high:e}), or leave {field} out"
                ),
            ));
            None
        }
    }
}

pub(super) fn whole_number<T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy>(
    field: &str,
    value: &Option<String>,
    range: (T, T),
    what: &str,
    problems: &mut Vec<Problem>,
) -> Option<T> {
    let text = given(value)?;
    let (low, high) = range;
    match text.parse::<T>() {
        Ok(v) if v >= low && v <= high => Some(v),
        _ => {
            problems.push(Problem::at_field(
                QUERY_LABEL,
                field,
                format!("'{text}' is not {what}; give a whole number from {low} to {high}"),
            ));
            None
        }
    }
}

/// What the API's 400 for a reward that is not a number says would do.
pub(super) const A_REWARD: &str = "a reward such as 0.5 or 1";

impl RawConversationsQuery {
    /// The API's first check (the web UI reads the same query with
    /// [`RawConversationsQuery::check`] only): a number that does not parse
    /// is a 400 naming its parameter.
    pub fn refuse_unparsed(&self) -> Result<(), ApiError> {
        refuse_unparsed(&[
            (
                "after",
                &self.after,
                Number::Whole,
                "a conversation id (the `next` of the previous page)",
            ),
            (
                "limit",
                &self.limit,
                Number::Whole,
                "a page size from 1 to 500",
            ),
            ("min_reward", &self.min_reward, Number::Real, A_REWARD),
            ("max_reward", &self.max_reward, Number::Real, A_REWARD),
        ])
    }

    /// The query checked; every malformed value is one problem naming its
    /// field.
    pub fn check(&self) -> Result<ConversationsQuery, ApiError> {
        let mut problems = Vec::new();
        // Paging values come from links, never from a form: blank is a mistake.
        for (field, value, what) in [
            ("after", &self.after, "a conversation id"),
            ("limit", &self.limit, "a page size"),
        ] {
            if value.as_deref().is_some_and(super::query_values::is_blank) {
                problems.push(Problem::at_field(
                    QUERY_LABEL,
                    field,
                    format!("{field} is empty; give {what}, or leave {field} out"),
                ));
            }
        }
        let text = |v: &Option<String>| given(v).map(str::to_string);
        let query = ConversationsQuery {
            after: whole_number(
                "after",
                &self.after,
                (0, i64::MAX),
                "a conversation id",
                &mut problems,
            ),
            limit: whole_number(
                "limit",
                &self.limit,
                (1, MAX_PAGE),
                "a page size",
                &mut problems,
            ),
            min_reward: reward_bound("min_reward", &self.min_reward, &mut problems),
            max_reward: reward_bound("max_reward", &self.max_reward, &mut problems),
            termination: text(&self.termination),
            scenario: text(&self.scenario),
            persona: text(&self.persona),
            min_judge: text(&self.min_judge),
            drop_flagged: text(&self.drop_flagged),
        };
        if let (Some(min), Some(max)) = (query.min_reward, query.max_reward) {
            if min > max {
                problems.push(Problem::at_field(
                    QUERY_LABEL,
                    "max_reward",
                    format!("max_reward {max} is below min_reward {min}, so nothing would be kept; give a max_reward ≥ min_reward"),
                ));
            }
        }
        if problems.is_empty() {
            // Checked here too, so a malformed one is reported with the rest.
            min_judges(query.min_judge.as_deref())?;
            Ok(query)
        } else {
            Err(ApiError::Invalid(problems))
        }
    }
}

pub const DEFAULT_PAGE: u32 = 50;
pub const MAX_PAGE: u32 = 500;

impl ConversationsQuery {
    pub fn filter(&self) -> ConversationFilter {
        ConversationFilter {
            min_reward: self.min_reward,
            max_reward: self.max_reward,
            termination: self.termination.clone(),
            scenario: self.scenario.clone(),
            persona: self.persona.clone(),
            probe_outcome: None,
        }
    }

    /// The reward bounds are finite numbers (a 422 naming the field).
    pub fn check_numbers(&self) -> Result<(), ApiError> {
        finite("min_reward", self.min_reward)?;
        finite("max_reward", self.max_reward)
    }

    pub fn limit(&self) -> u32 {
        self.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE)
    }

    /// The judge conditions, as `sparring export` reads `--min-judge` and
    /// `--drop-flagged`.
    pub fn judge_filter(&self) -> Result<export::Filter, ApiError> {
        Ok(export::Filter {
            min_reward: None,
            min_judge: min_judges(self.min_judge.as_deref())?,
            drop_flagged: names(self.drop_flagged.as_deref()),
            conversations: ConversationFilter::default(),
            drop_user_flags: Vec::new(),
            unsolved: Default::default(),
            curated: None,
        })
    }
}

/// `a=7,b=1` as [`MinJudge`]s; a malformed one is a 422 on `min_judge`.
pub fn min_judges(text: Option<&str>) -> Result<Vec<MinJudge>, ApiError> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for part in names(text) {
        match part.parse::<MinJudge>() {
            Ok(min) => out.push(min),
            Err(message) => problems.push(Problem::at_field(QUERY_LABEL, "min_judge", message)),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(ApiError::Invalid(problems))
    }
}

/// Comma-separated, trimmed, empty parts left out.
pub fn names(text: Option<&str>) -> Vec<String> {
    text.unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The judgments `filter` needs of job `job_id`'s conversations, read once;
/// a `min_judge` judge without any is a 422 (as in an export).
pub async fn judgments_for(
    store: &dyn Store,
    job_id: i64,
    filter: &export::Filter,
) -> Result<JudgmentIndex, ApiError> {
    export::prepare::judgments_for(store, job_id, filter, &mut Vec::new())
        .await
        .map_err(super::export_refusal::refusal)
}

/// A number read from the query string must be a number: `NaN` compares
/// false with everything, so each filter would treat it differently.
fn finite(field: &str, value: Option<f64>) -> Result<(), ApiError> {
    match value {
        Some(v) if !v.is_finite() => Err(ApiError::Invalid(vec![Problem::at_field(
            QUERY_LABEL,
            field,
            format!("{v} is not a finite number; give a reward such as 0.5"),
        )])),
        _ => Ok(()),
    }
}

/// A page of job `job_id`'s conversations that every filter of `query` keeps.
pub async fn conversations_page(
    store: &dyn Store,
    job_id: i64,
    query: &ConversationsQuery,
) -> Result<Page, ApiError> {
    query.check_numbers()?;
    let filter = query.filter();
    let judges = query.judge_filter()?;
    let judgments = judgments_for(store, job_id, &judges).await?;
    let keep = move |c: &crate::store::StoredConversation| {
        filter.keeps(&c.conversation) && judges.check_judges(c.conversation.id, &judgments).is_ok()
    };
    Ok(filtered_page(
        store,
        job_id,
        &keep,
        query.after.unwrap_or(0),
        query.limit(),
    )
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> RawConversationsQuery {
        let text: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        serde_json::from_value(serde_json::Value::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
                .collect(),
        ))
        .unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    fn problems_of(pairs: &[(&str, &str)]) -> Vec<Problem> {
        match raw(pairs).check() {
            Err(ApiError::Invalid(problems)) => problems,
            other => panic!("{pairs:?} is accepted: {other:?}"),
        }
    }

    #[test]
    fn a_reward_that_is_not_a_number_names_the_field_and_what_would_be_right() {
        let problems = problems_of(&[("min_reward", "abc"), ("limit", "0")]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].location.as_deref(), Some("limit"));
        assert!(
            problems[0].message.contains("from 1 to 500"),
            "{problems:?}"
        );
        assert_eq!(problems[1].location.as_deref(), Some("min_reward"));
        assert!(problems[1].message.contains("'abc' is not a reward"));
        assert!(problems[1].message.contains("such as 0.5"));
        for bad in ["NaN", "inf", "1e300"] {
            assert_eq!(problems_of(&[("max_reward", bad)]).len(), 1, "{bad}");
        }
        let crossed = problems_of(&[("min_reward", "1"), ("max_reward", "0")]);
        assert!(crossed[0].message.contains("below min_reward"));
    }

    #[test]
    fn blank_form_fields_are_not_filters() {
        let query = raw(&[("min_reward", ""), ("termination", " "), ("scenario", "s1")])
            .check()
            .unwrap();
        assert_eq!(query.min_reward, None);
        assert_eq!(query.termination, None);
        assert_eq!(query.scenario.as_deref(), Some("s1"));
    }

    #[test]
    fn min_judges_read_comma_separated_and_a_bad_one_names_the_field() {
        let mins = min_judges(Some("helpful=7, fidelity=1")).unwrap();
        assert_eq!(mins.len(), 2);
        assert_eq!((mins[1].judge.as_str(), mins[1].score), ("fidelity", 1.0));
        let Err(ApiError::Invalid(problems)) = min_judges(Some("helpful=7,high")) else {
            panic!("a malformed min_judge is accepted");
        };
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].location.as_deref(), Some("min_judge"));
        assert!(problems[0].message.contains("expected NAME=SCORE"));
    }
}
