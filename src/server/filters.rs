//! Query-string filters of the conversation browser and the export, read into
//! the library's own filters (`store::browse::ConversationFilter` and
//! `export::Filter`), so the API, the web UI and `usersim export` keep and
//! drop the same conversations. A malformed filter is a 422 naming its field.

use serde::Deserialize;

use crate::config::Problem;
use crate::export::{self, ExportError, JudgmentIndex, MinJudge};
use crate::store::browse::{filtered_page, ConversationFilter, Page};
use crate::store::Store;

use super::ApiError;

/// What problems with a query string name as their file.
pub const QUERY_LABEL: &str = "query string";

#[derive(Debug, Deserialize, Default)]
pub struct ConversationsQuery {
    /// The `next` of the previous page.
    pub after: Option<i64>,
    pub limit: Option<u32>,
    // Not a flattened ConversationFilter: serde's flatten reads numbers in a
    // query string as strings and refuses them.
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

    /// The judge conditions, as `usersim export` reads `--min-judge` and
    /// `--drop-flagged`.
    pub fn judge_filter(&self) -> Result<export::Filter, ApiError> {
        Ok(export::Filter {
            min_reward: None,
            min_judge: min_judges(self.min_judge.as_deref())?,
            drop_flagged: names(self.drop_flagged.as_deref()),
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

/// The judgments `filter` needs of job `job_id`'s conversations, read once.
pub async fn judgments_for(
    store: &dyn Store,
    job_id: i64,
    filter: &export::Filter,
) -> Result<JudgmentIndex, ApiError> {
    if !filter.needs_judgments() {
        return Ok(JudgmentIndex::default());
    }
    let rows = store.judgments_of_job(job_id).await?;
    refuse_unjudged(job_id, filter, &rows)?;
    Ok(JudgmentIndex::build(rows).map_err(ExportError::from)?)
}

/// A `min_judge` judge without any judgments of the job would keep nothing:
/// a 422 that lists the judges that have some (as `usersim export` refuses it).
fn refuse_unjudged(
    job_id: i64,
    filter: &export::Filter,
    rows: &[crate::store::JudgmentRow],
) -> Result<(), ApiError> {
    let unjudged = filter.judges_without_judgments(&export::judge_names(rows));
    if unjudged.min_judge.is_empty() {
        return Ok(());
    }
    let listed = unjudged.listed(job_id);
    Err(ApiError::Invalid(
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
    ))
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

#[derive(Debug, Deserialize)]
pub struct ExportQuery {
    pub format: Option<String>,
    pub min_reward: Option<f64>,
    pub min_judge: Option<String>,
    pub drop_flagged: Option<String>,
    /// Keep conversations the job's own `drop_flagged` judges failed.
    #[serde(default)]
    pub keep_flagged: bool,
    /// The pairwise judge whose verdicts make `format=dpo`'s pairs.
    pub judge: Option<String>,
}

/// What an export writes: lines of a format, or DPO pairs of a judge.
pub enum ExportKind {
    Lines(export::Format),
    Dpo { judge: String },
}

impl ExportQuery {
    pub fn format_name(&self) -> &str {
        self.format.as_deref().unwrap_or("openai")
    }

    /// The kind asked for; an unknown format is a 400 (as before), a judge
    /// with a format other than dpo, or dpo without one, a 422.
    pub fn kind(&self) -> Result<ExportKind, ApiError> {
        finite("min_reward", self.min_reward)?;
        let name = self.format_name();
        match (name, &self.judge) {
            ("dpo", Some(judge)) => Ok(ExportKind::Dpo {
                judge: judge.clone(),
            }),
            ("dpo", None) => Err(ApiError::Invalid(vec![Problem::at_field(
                QUERY_LABEL,
                "judge",
                "format=dpo needs judge=NAME: the pairwise judge whose verdicts make the pairs",
            )])),
            (other, judge) => match export::Format::parse(other) {
                None => Err(ApiError::BadRequest(format!(
                    "format '{other}' is not supported; supported formats: openai, dpo"
                ))),
                Some(_) if judge.is_some() => Err(ApiError::Invalid(vec![Problem::at_field(
                    QUERY_LABEL,
                    "judge",
                    "judge applies to format=dpo only; to filter by a judge's score use min_judge=NAME=SCORE",
                )])),
                Some(format) => Ok(ExportKind::Lines(format)),
            },
        }
    }

    /// The export filter, with the job's own `drop_flagged` judges added
    /// unless `keep_flagged` (the rule of `usersim export`).
    pub async fn filter(
        &self,
        store: &dyn Store,
        row: &crate::store::JobRow,
    ) -> Result<export::Filter, ApiError> {
        let mut drop_flagged = names(self.drop_flagged.as_deref());
        if !self.keep_flagged {
            for name in crate::jobs::judging::drop_flagged_judges(row) {
                if !drop_flagged.contains(&name) {
                    drop_flagged.push(name);
                }
            }
        }
        let filter = export::Filter {
            min_reward: self.min_reward,
            min_judge: min_judges(self.min_judge.as_deref())?,
            drop_flagged,
        };
        if !filter.min_judge.is_empty() {
            refuse_unjudged(row.id, &filter, &store.judgments_of_job(row.id).await?)?;
        }
        Ok(filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
