//! `/conversations/{id}`: a conversation as a chat (tool calls with their
//! results), who the user was and what they wanted, its reward and, when it
//! failed, why; its judgments with the judges' reasoning; and previous /
//! next within the job page's filter and sort (carried in the query).

use serde::Serialize;

use crate::store::{JudgmentRow, JudgmentStore};

use super::super::views;
use super::super::{ApiError, AppState};
use super::browse::{self, BrowseQuery, Position};
use super::dataset::{self, PersonaView, ScenarioView};
use super::display::{self, Clipped};
use super::transcript::{self, Item};
use super::why::{self, Why};
use super::{plots, templates};

#[derive(Serialize)]
struct ConversationPage {
    title: String,
    refresh: bool,
    wide: bool,
    c: Head,
    nav: Nav,
    items: Vec<Item>,
    why: Why,
    /// Shown as "why it failed": a reward below 1.
    failed: bool,
    verified: bool,
    scenario: Option<ScenarioView>,
    persona: Option<PersonaView>,
    missing: Vec<String>,
    judgments: Vec<JudgmentView>,
}

#[derive(Serialize)]
struct Head {
    id: i64,
    job_id: i64,
    scenario: String,
    persona: String,
    sample: i64,
    termination: String,
    reward: String,
    tone: &'static str,
    policy_model: String,
    user_model: String,
    started: String,
    took: String,
    seed: i64,
}

#[derive(Serialize)]
struct Nav {
    /// The job page's filter and sort, kept by every link here.
    query: String,
    filtered: bool,
    position: Option<Position>,
}

#[derive(Serialize)]
struct JudgmentView {
    id: i64,
    judge: String,
    /// `A`/`B` and the other conversation, for a pairwise judgment.
    side: Option<Side>,
    status: String,
    score: String,
    verdict: String,
    consistent: &'static str,
    reason: Option<String>,
    /// Each call's output: the judge's reasoning, in its own words.
    reasoning: Vec<Reasoning>,
}

#[derive(Serialize)]
struct Side {
    letter: &'static str,
    other: i64,
}

#[derive(Serialize)]
struct Reasoning {
    order: String,
    status: String,
    text: Clipped,
}

pub async fn render(state: &AppState, id: i64, query: &BrowseQuery) -> Result<String, ApiError> {
    let browse = query.check()?;
    let detail = views::conversation_detail(state.store.as_ref(), id).await?;
    let c = &detail.conversation;
    let row = views::job_row(state.store.as_ref(), c.job_id).await?;
    let browsed = browse::browse(state.store.as_ref(), c.job_id, &browse).await?;
    let position = browse::position(&browsed.rows, id);
    let (job, scenario_id, persona_id) = (row.clone(), c.scenario_id.clone(), c.persona_id.clone());
    let knobs = c.metadata.get("persona_knobs").cloned().unwrap_or_default();
    let data = if row.kind == crate::store::JobKind::Import {
        dataset::imported(&scenario_id, &c.metadata)
    } else {
        tokio::task::spawn_blocking(move || dataset::read(&job, &scenario_id, &persona_id, &knobs))
            .await
            .map_err(|e| ApiError::Internal(format!("reading the scenario: {e}")))?
    };
    let why = why::explain(
        &c.reward_breakdown,
        &detail.messages,
        data.criteria.as_ref(),
    );
    let page = ConversationPage {
        title: format!("conversation {id}"),
        refresh: false,
        wide: false,
        c: Head {
            id,
            job_id: c.job_id,
            scenario: c.scenario_id.clone(),
            persona: c.persona_id.clone(),
            sample: c.sample,
            termination: c.termination.clone(),
            reward: display::reward(c.reward),
            tone: match c.reward {
                Some(r) if r >= plots::SUCCESS_REWARD => "good",
                Some(_) => "bad",
                None => "none",
            },
            policy_model: c.policy_model.clone(),
            user_model: c.user_model.clone(),
            started: display::date(c.started_at),
            took: display::duration(c.finished_at - c.started_at),
            seed: c.seed,
        },
        nav: Nav {
            query: browse.query_string(&[]),
            filtered: browse.is_filtered(),
            position,
        },
        items: transcript::items(&detail.messages),
        failed: c.reward.is_some_and(|r| r < plots::SUCCESS_REWARD),
        verified: !c.reward_breakdown.is_null(),
        why,
        scenario: data.scenario,
        persona: data.persona,
        missing: data.missing,
        judgments: judgments(state.store.as_ref(), id, &detail.judgments).await?,
    };
    templates::render("conversation.html", &page)
}

async fn judgments(
    store: &dyn JudgmentStore,
    id: i64,
    rows: &[JudgmentRow],
) -> Result<Vec<JudgmentView>, ApiError> {
    let mut out = Vec::new();
    for j in rows {
        let calls = store
            .judge_calls(&j.judge_hash, j.conversation_a, j.conversation_b)
            .await?;
        out.push(JudgmentView {
            id: j.id,
            judge: j.judge_name.clone(),
            side: j.conversation_b.map(|b| {
                if j.conversation_a == id {
                    Side {
                        letter: "A",
                        other: b,
                    }
                } else {
                    Side {
                        letter: "B",
                        other: j.conversation_a,
                    }
                }
            }),
            status: j.status.clone(),
            score: j.score.map_or_else(|| "–".into(), display::score),
            verdict: super::judgment_page::verdict_label(j.verdict.as_ref()),
            consistent: super::judgment_page::consistent_label(j.consistent),
            reason: j.reason.clone().filter(|r| !r.trim().is_empty()),
            reasoning: calls
                .into_iter()
                .map(|call| Reasoning {
                    order: call.call.order,
                    status: call.call.status,
                    text: display::clip_at(
                        call.call
                            .error
                            .filter(|_| call.call.raw_output.is_empty())
                            .as_deref()
                            .unwrap_or(&call.call.raw_output),
                        400,
                        600,
                    ),
                })
                .collect(),
        });
    }
    Ok(out)
}
