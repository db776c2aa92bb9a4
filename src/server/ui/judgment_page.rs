//! `/judgments/{id}`: a judgment with its calls (the judge's reasoning
//! shown) and the conversations it judged side by side; and the judgments
//! listed on a judging job's page.

use serde::Serialize;
use serde_json::Value;

use crate::judge::{Order, Verdict};
use crate::store::{JudgeCallRow, StoredConversation};

use super::super::views;
use super::super::{ApiError, AppState};
use super::display::{self, Clipped};
use super::job_page::{JobHead, Running};
use super::templates;
use super::transcript::{self, Item};

/// A verdict's short label (`7`, `A`, `tie`, `equal`, `2/3 met`).
pub fn verdict_label(verdict: Option<&Value>) -> String {
    verdict
        .and_then(|v| serde_json::from_value::<Verdict>(v.clone()).ok())
        .map_or_else(|| "–".into(), |v| v.label())
}

pub fn consistent_label(consistent: Option<bool>) -> &'static str {
    match consistent {
        Some(true) => "yes",
        Some(false) => "no",
        None => "–",
    }
}

/// Judgments shown on a judging job's page at most.
const JUDGMENTS_SHOWN: u32 = 500;

#[derive(Serialize)]
struct JudgingJobPage {
    title: String,
    refresh: bool,
    wide: bool,
    job: JobHead,
    running: Option<Running>,
    judgments: Vec<MadeJudgment>,
    more: Option<u32>,
}

#[derive(Serialize)]
struct MadeJudgment {
    id: i64,
    judge: String,
    a: i64,
    b: Option<i64>,
    status: String,
    verdict: String,
    consistent: &'static str,
    reason: String,
}

pub async fn render_judging_job(
    state: &AppState,
    job: JobHead,
    running: Option<Running>,
    refresh: bool,
) -> Result<String, ApiError> {
    let made = state
        .store
        .judgments_made_by(job.id, 0, JUDGMENTS_SHOWN + 1)
        .await?;
    let more = (made.len() > JUDGMENTS_SHOWN as usize).then_some(JUDGMENTS_SHOWN);
    let judgments = made
        .iter()
        .take(JUDGMENTS_SHOWN as usize)
        .map(|j| MadeJudgment {
            id: j.id,
            judge: j.judge_name.clone(),
            a: j.conversation_a,
            b: j.conversation_b,
            status: j.status.clone(),
            verdict: verdict_label(j.verdict.as_ref()),
            consistent: consistent_label(j.consistent),
            reason: j.reason.clone().unwrap_or_default(),
        })
        .collect();
    templates::render(
        "judging_job.html",
        &JudgingJobPage {
            title: format!("job {}", job.id),
            refresh,
            wide: false,
            job,
            running,
            judgments,
            more,
        },
    )
}

#[derive(Serialize)]
struct JudgmentPage {
    title: String,
    refresh: bool,
    wide: bool,
    id: i64,
    judge: String,
    status: String,
    preferred: String,
    consistency: &'static str,
    reason: Option<String>,
    calls: Vec<CallView>,
    sides: Vec<SideView>,
}

#[derive(Serialize)]
struct CallView {
    order: String,
    sample: i64,
    status: String,
    says: String,
    model: String,
    raw: Clipped,
    error: Option<String>,
}

#[derive(Serialize)]
struct SideView {
    letter: &'static str,
    lower: &'static str,
    id: i64,
    job_id: i64,
    termination: String,
    reward: String,
    items: Vec<Item>,
}

/// What a call's verdict says about the two conversations: in order `ba` the
/// call saw B first, so its "A" is conversation B.
fn call_says(call: &JudgeCallRow, a: i64, b: Option<i64>) -> String {
    let Some(verdict) = call
        .call
        .parsed
        .as_ref()
        .and_then(|v| serde_json::from_value::<Verdict>(v.clone()).ok())
    else {
        return format!("no verdict ({})", call.call.status);
    };
    let (Some(preference), Some(b)) = (verdict.preference(), b) else {
        return verdict.label();
    };
    let seen_as_original = match Order::parse(&call.call.order) {
        Some(Order::Ba) => preference.swapped(),
        _ => preference,
    };
    let which = match seen_as_original.as_str() {
        "A" => format!("conversation {a} (A)"),
        "B" => format!("conversation {b} (B)"),
        _ => "neither (tie)".to_string(),
    };
    format!("{} → prefers {which}", verdict.label())
}

fn side(letter: &'static str, lower: &'static str, c: &StoredConversation) -> SideView {
    let r = &c.conversation;
    SideView {
        letter,
        lower,
        id: r.id,
        job_id: r.job_id,
        termination: r.termination.clone(),
        reward: display::reward(r.reward),
        items: transcript::items(&c.messages),
    }
}

pub async fn render(state: &AppState, id: i64) -> Result<String, ApiError> {
    let sides = views::judgment_sides(state.store.as_ref(), id).await?;
    let j = &sides.judgment;
    let verdict = verdict_label(j.verdict.as_ref());
    let preferred = match (verdict.as_str(), j.conversation_b) {
        ("A", _) => format!("A (conversation {})", j.conversation_a),
        ("B", Some(b)) => format!("B (conversation {b})"),
        ("tie", _) => "neither: a tie".to_string(),
        (other, _) => other.to_string(),
    };
    let mut shown = vec![side("A", "a", &sides.a)];
    if let Some(b) = &sides.b {
        shown.push(side("B", "b", b));
    }
    templates::render(
        "judgment.html",
        &JudgmentPage {
            title: format!("judgment {id}"),
            refresh: false,
            wide: true,
            id: j.id,
            judge: j.judge_name.clone(),
            status: j.status.clone(),
            preferred,
            consistency: match j.consistent {
                Some(true) => "both orders agreed",
                Some(false) => "the two orders disagreed",
                None => "not swap-checked",
            },
            reason: j.reason.clone().filter(|r| !r.trim().is_empty()),
            calls: sides
                .calls
                .iter()
                .map(|call| CallView {
                    order: call.call.order.clone(),
                    sample: call.call.sample,
                    status: call.call.status.clone(),
                    says: call_says(call, j.conversation_a, j.conversation_b),
                    model: call.call.model.clone(),
                    raw: display::clip_at(&call.call.raw_output, 600, 900),
                    error: call.call.error.clone(),
                })
                .collect(),
            sides: shown,
        },
    )
}
