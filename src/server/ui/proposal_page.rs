//! `/jobs/{id}/proposals/{index}`: one proposal of a synthesis job: its
//! brief, every attempt with the generator's reply, why it was rejected and
//! what the review committee said, and the scenario it became with what the
//! job decided of it (accepted, a near-duplicate of which, surplus).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::JobKind;

use super::super::views;
use super::super::{ApiError, AppState};
use super::browse::Position;
use super::proposals::{self, Fate, Line, ProposalsQuery, RawProposalsQuery};
use super::synthesis_page::{fate_view, FateView};
use super::{display, names, templates};

#[derive(Serialize)]
struct ProposalPage {
    title: String,
    refresh: bool,
    wide: bool,
    job_id: i64,
    job_label: String,
    index: i64,
    nav: Nav,
    fate: FateView,
    decision: Decision,
    scenario_id: Option<String>,
    tokens: Tokens,
    took: String,
    stored: String,
    brief: Vec<Field>,
    attempts: Vec<AttemptView>,
    /// The stored attempts as JSON, when they do not read as attempts.
    unread_attempts: Option<String>,
    scenario: Option<String>,
}

#[derive(Serialize)]
struct Nav {
    /// The job page's filter, kept in every link.
    query: String,
    filtered: bool,
    position: Option<Position>,
}

/// What the job decided of the proposal, in the page's words.
#[derive(Serialize)]
struct Decision {
    kind: &'static str,
    /// The stage and reason of a rejection; the reason of a near-duplicate.
    stage: Option<String>,
    reason: Option<String>,
    /// A near-duplicate: the scenario it repeats, how alike their goals
    /// are, and that scenario's proposal.
    of: Option<String>,
    similarity: Option<String>,
    of_index: Option<i64>,
}

#[derive(Serialize)]
struct Tokens {
    generator_in: i64,
    generator_out: i64,
    review_in: i64,
    review_out: i64,
}

#[derive(Serialize)]
struct Field {
    name: String,
    value: String,
}

/// An attempt as stored. Read field by field, so that an attempt stored by
/// an older or newer sparring still shows what it has.
#[derive(Deserialize)]
struct StoredAttempt {
    #[serde(default)]
    attempt: u32,
    #[serde(default)]
    reply: String,
    #[serde(default)]
    rejection: Option<StoredRejection>,
    #[serde(default)]
    review: Option<StoredReview>,
}

#[derive(Deserialize)]
struct StoredRejection {
    #[serde(default)]
    stage: String,
    #[serde(default)]
    reason: String,
}

#[derive(Deserialize)]
struct StoredReview {
    #[serde(default)]
    accepted: Option<bool>,
    #[serde(default)]
    rule: Option<String>,
    /// `majority`: the share of readable verdicts that pass; `mean`: the mean score.
    #[serde(default)]
    figure: Option<f64>,
    #[serde(default)]
    reviewers: Vec<StoredReviewer>,
}

#[derive(Deserialize)]
struct StoredReviewer {
    #[serde(default)]
    name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    score: Option<f64>,
    #[serde(default)]
    passed: Option<bool>,
    #[serde(default)]
    reasons: String,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Serialize)]
struct AttemptView {
    attempt: u32,
    reply: String,
    rejection: Option<RejectionView>,
    review: Option<ReviewView>,
}

#[derive(Serialize)]
struct RejectionView {
    stage: String,
    reason: String,
}

#[derive(Serialize)]
struct ReviewView {
    /// `accepted`, `rejected`, or empty when not stored.
    verdict: &'static str,
    rule: String,
    figure: String,
    reviewers: Vec<ReviewerView>,
}

#[derive(Serialize)]
struct ReviewerView {
    name: String,
    status: String,
    score: String,
    passed: &'static str,
    reasons: String,
    error: Option<String>,
}

pub async fn render(
    state: &AppState,
    id: i64,
    index: i64,
    raw: &RawProposalsQuery,
) -> Result<String, ApiError> {
    let query = raw.check()?;
    let row = views::job_row(state.store.as_ref(), id).await?;
    if row.kind != JobKind::Synthesis {
        return Err(ApiError::NotFound(format!(
            "job {id} is a {} job; only synthesis jobs have proposals",
            row.kind
        )));
    }
    let config = proposals::stored_config(&row)?;
    let listed = proposals::list(state.store.as_ref(), id, &config, Some(index)).await?;
    let Some((proposal, line)) = listed.picked else {
        return Err(ApiError::NotFound(format!(
            "job {id} has no stored proposal {index} (proposals are numbered from 0 and \
             stored as their items finish)"
        )));
    };
    let p = &proposal.proposal;
    let (attempts, unread_attempts) = attempts(&p.attempts);
    let page = ProposalPage {
        title: format!("proposal {index} of job {id}"),
        refresh: false,
        wide: false,
        job_id: id,
        job_label: names::label(&row),
        index,
        nav: nav(&query, &listed.lines, &line),
        fate: fate_view(&line.fate),
        decision: decision(&line.fate),
        scenario_id: line.scenario.clone(),
        tokens: Tokens {
            generator_in: p.prompt_tokens,
            generator_out: p.completion_tokens,
            review_in: p.review_prompt_tokens,
            review_out: p.review_completion_tokens,
        },
        took: display::duration(p.latency_ms),
        stored: display::date(proposal.created_at),
        brief: fields(&p.brief),
        attempts,
        unread_attempts,
        scenario: p.scenario.as_ref().map(pretty),
    };
    templates::render("proposal.html", &page)
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Where the proposal stands among those the job page's filter keeps.
fn nav(query: &ProposalsQuery, lines: &[Line], line: &Line) -> Nav {
    let position = query.keeps(line).then(|| {
        let kept: Vec<i64> = lines
            .iter()
            .filter(|l| query.keeps(l))
            .map(|l| l.index)
            .collect();
        let at = kept.iter().position(|i| *i == line.index).unwrap_or(0);
        Position {
            index: at + 1,
            of: kept.len(),
            previous: at.checked_sub(1).and_then(|i| kept.get(i).copied()),
            next: kept.get(at + 1).copied(),
        }
    });
    Nav {
        query: query.query_string(&[]),
        filtered: query.is_filtered(),
        position,
    }
}

fn decision(fate: &Fate) -> Decision {
    let mut d = Decision {
        kind: fate.kind().as_str(),
        stage: None,
        reason: None,
        of: None,
        similarity: None,
        of_index: None,
    };
    match fate {
        Fate::Accepted | Fate::Surplus => {}
        Fate::Duplicate {
            of,
            of_index,
            similarity,
            reason,
        } => {
            d.of = Some(of.clone());
            d.of_index = *of_index;
            d.similarity = Some(display::score(*similarity));
            d.reason = Some(reason.clone());
        }
        Fate::Rejected { stage, reason } => {
            d.stage = stage.clone();
            d.reason = reason.clone();
        }
    }
    d
}

/// A brief's fields as `name: value` lines; lists joined with commas.
fn fields(brief: &Value) -> Vec<Field> {
    let Some(object) = brief.as_object() else {
        return vec![Field {
            name: "brief".into(),
            value: brief.to_string(),
        }];
    };
    object
        .iter()
        .map(|(name, value)| Field {
            name: name.replace('_', " "),
            value: match value {
                Value::String(s) => s.clone(),
                Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join(", "),
                other => other.to_string(),
            },
        })
        .collect()
}

/// The stored attempts shown, or (when they do not read) as JSON.
fn attempts(stored: &Value) -> (Vec<AttemptView>, Option<String>) {
    match serde_json::from_value::<Vec<StoredAttempt>>(stored.clone()) {
        Ok(read) => (read.into_iter().map(attempt_view).collect(), None),
        Err(_) => (Vec::new(), Some(pretty(stored))),
    }
}

fn attempt_view(a: StoredAttempt) -> AttemptView {
    AttemptView {
        attempt: a.attempt,
        reply: a.reply,
        rejection: a.rejection.map(|r| RejectionView {
            stage: r.stage,
            reason: r.reason,
        }),
        review: a.review.map(|r| ReviewView {
            verdict: match r.accepted {
                Some(true) => "accepted",
                Some(false) => "rejected",
                None => "",
            },
            rule: r.rule.unwrap_or_default(),
            figure: r.figure.map(display::score).unwrap_or_default(),
            reviewers: r
                .reviewers
                .into_iter()
                .map(|v| ReviewerView {
                    name: v.name,
                    status: v.status,
                    score: v.score.map_or_else(|| "–".into(), display::score),
                    passed: match v.passed {
                        Some(true) => "passes",
                        Some(false) => "fails",
                        None => "–",
                    },
                    reasons: v.reasons,
                    error: v.error,
                })
                .collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_attempt_with_a_committee_review_shows_every_reviewer() {
        let stored = json!([
            {"attempt": 1, "reply": "<b>draft</b>", "rejection": {"stage": "format", "reason": "not JSON"}},
            {"attempt": 2, "reply": "{}", "rejection": {"stage": "committee", "reason": "1 of 3 pass"},
             "review": {"accepted": false, "rule": "majority", "figure": 0.3333333,
                        "reviewers": [
                            {"name": "r1", "status": "ok", "score": 2.0, "passed": false, "reasons": "cannot identify", "usage": {}},
                            {"name": "r2", "status": "failed", "reasons": "", "error": "timeout"}]}}
        ]);
        let (shown, unread) = attempts(&stored);
        assert!(unread.is_none());
        assert_eq!(shown.len(), 2);
        assert_eq!(shown[0].reply, "<b>draft</b>");
        assert!(shown[0].review.is_none());
        let review = shown[1].review.as_ref().unwrap();
        assert_eq!(
            (review.verdict, review.figure.as_str()),
            ("rejected", "0.333")
        );
        assert_eq!(review.reviewers[0].score, "2");
        assert_eq!(review.reviewers[0].passed, "fails");
        assert_eq!(review.reviewers[1].error.as_deref(), Some("timeout"));
    }

    #[test]
    fn attempts_that_do_not_read_are_shown_as_stored() {
        let (shown, unread) = attempts(&json!({"not": "a list"}));
        assert!(shown.is_empty());
        assert!(unread.unwrap().contains("\"not\""));
    }

    #[test]
    fn a_brief_reads_as_fields_with_lists_joined() {
        let shown = fields(
            &json!({"difficulty": "hard", "tags": ["returns", "gift"], "multi_intent": true}),
        );
        let pairs: Vec<(&str, &str)> = shown
            .iter()
            .map(|f| (f.name.as_str(), f.value.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("difficulty", "hard"),
                ("multi intent", "true"),
                ("tags", "returns, gift")
            ]
        );
    }

    #[test]
    fn navigation_counts_only_the_proposals_the_filter_keeps() {
        let line = |index, fate| Line {
            index,
            fate,
            stages: Vec::new(),
            attempts: 1,
            tokens: 0,
            scenario: None,
        };
        let lines = vec![
            line(0, Fate::Accepted),
            line(1, Fate::Surplus),
            line(2, Fate::Accepted),
            line(3, Fate::Accepted),
        ];
        let accepted = ProposalsQuery {
            fate: Some(proposals::FateKind::Accepted),
            ..ProposalsQuery::default()
        };
        let at = nav(&accepted, &lines, &lines[2]).position.unwrap();
        assert_eq!(
            (at.index, at.of, at.previous, at.next),
            (2, 3, Some(0), Some(3))
        );
        assert!(nav(&accepted, &lines, &lines[1]).position.is_none());
    }
}
