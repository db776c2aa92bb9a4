//! The web UI, rendered on the server as plain HTML (no script, no build
//! step): jobs with progress, a job's conversations with filters, and a
//! conversation as a chat. Auth: see `auth.rs` (open `/?token=TOKEN` once).

use std::fmt::Write;

use axum::extract::{Path as UrlPath, Query, State};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::Value;

use crate::judge::{Order, Verdict};
use crate::store::{JudgeCallRow, JudgmentRow, MessageRow, StoredConversation};

use super::filters::{self, ConversationsQuery};
use super::views::{self, ConversationEntry, JobView, JudgmentSides};
use super::{ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(jobs_page))
        .route("/jobs/{id}", get(job_page))
        .route("/conversations/{id}", get(conversation_page))
        .route("/judgments/{id}", get(judgment_page))
}

const STYLE: &str = include_str!("ui.css");

/// Text made safe for HTML content and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn page(title: &str, refresh: bool, body: &str) -> Html<String> {
    let refresh = if refresh {
        r#"<meta http-equiv="refresh" content="2">"#
    } else {
        ""
    };
    Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">{refresh}\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · usersim</title><style>{STYLE}</style></head><body>\
         <header><a href=\"/\">usersim</a></header><main>{body}</main></body></html>",
        esc(title)
    ))
}

/// Errors as HTML pages; detail of internal ones only in the log.
fn error_page(e: ApiError) -> Response {
    let status = e.status_code();
    let message = match &e {
        ApiError::Internal(detail) => {
            tracing::error!("page failed: {detail}");
            "internal error; the server log has the detail".to_string()
        }
        ApiError::Invalid(problems) => problems
            .iter()
            .map(|p| match &p.location {
                Some(field) => format!("{field}: {}", p.message),
                None => p.message.clone(),
            })
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    };
    (
        status,
        page(
            "error",
            false,
            &format!("<h1>{}</h1><p>{}</p>", status, esc(&message)),
        ),
    )
        .into_response()
}

fn reward(r: Option<f64>) -> String {
    r.map_or("–".into(), |r| format!("{r:.3}"))
}

fn progress_cell(job: &JobView) -> String {
    let finished = job.counts.done + job.counts.failed;
    format!(
        "<progress max=\"{}\" value=\"{finished}\"></progress> {} done, {} failed, {} left",
        job.total.max(1),
        job.counts.done,
        job.counts.failed,
        job.counts.pending + job.counts.leased
    )
}

async fn jobs_page(State(state): State<AppState>) -> Response {
    match render_jobs(&state).await {
        Ok(html) => html.into_response(),
        Err(e) => error_page(e),
    }
}

async fn render_jobs(state: &AppState) -> Result<Html<String>, ApiError> {
    let mut rows = String::new();
    let mut any_open = false;
    for row in state.store.all_jobs().await? {
        let job = views::job_view(state, row).await?;
        any_open |= !job.finished();
        let _ = write!(
            rows,
            "<tr><td>{id}</td><td><a href=\"/jobs/{id}\">{name}</a></td><td class=\"status {status}\">{status}</td><td>{progress}</td></tr>",
            id = job.id,
            name = esc(&job.name),
            status = job.status.as_str(),
            progress = progress_cell(&job),
        );
    }
    let table = if rows.is_empty() {
        "<p>No jobs yet. Submit one with <code>POST /v1/jobs</code> (see the README).</p>"
            .to_string()
    } else {
        format!("<table><thead><tr><th>id</th><th>job</th><th>status</th><th>progress</th></tr></thead><tbody>{rows}</tbody></table>")
    };
    Ok(page(
        "jobs",
        any_open,
        &format!("<h1>Jobs</h1>{table}<p class=\"muted\"><a href=\"/v1/openapi.json\">API (OpenAPI)</a> · <a href=\"/metrics\">metrics</a></p>"),
    ))
}

async fn job_page(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
    Query(query): Query<ConversationsQuery>,
) -> Response {
    match render_job(&state, id, query).await {
        Ok(html) => html.into_response(),
        Err(e) => error_page(e),
    }
}

fn query_string(pairs: &[(&str, String)]) -> String {
    pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", url_encode(v)))
        .collect::<Vec<_>>()
        .join("&amp;")
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            b => format!("%{b:02X}"),
        })
        .collect()
}

async fn render_job(
    state: &AppState,
    id: i64,
    query: ConversationsQuery,
) -> Result<Html<String>, ApiError> {
    let detail = views::job_detail(state, id).await?;
    let job = &detail.job;
    let limit = query.limit();
    let filter = query.filter();
    let page_of = filters::conversations_page(state.store.as_ref(), id, &query).await?;
    let f = &filter;
    let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let filters = [
        ("min_reward", num(f.min_reward)),
        ("max_reward", num(f.max_reward)),
        ("termination", text(&f.termination)),
        ("scenario", text(&f.scenario)),
        ("persona", text(&f.persona)),
        ("min_judge", text(&query.min_judge)),
        ("drop_flagged", text(&query.drop_flagged)),
    ];
    let mut body = format!(
        "<h1>Job {id}: {name}</h1><p><span class=\"status {status}\">{status}</span> {progress}</p>",
        name = esc(&job.name),
        status = job.status.as_str(),
        progress = progress_cell(job),
    );
    if job.kind == crate::store::JobKind::Judging {
        body.push_str(&made_judgments_html(state, id).await?);
        return Ok(page(&format!("job {id}"), !job.finished(), &body));
    }
    let terminations: Vec<String> = detail
        .summary
        .terminations
        .iter()
        .map(|t| format!("{} {}", esc(&t.termination), t.count))
        .collect();
    let _ = write!(
        body,
        "<p>{} conversations · mean reward {} · {}</p>\
         <p><a href=\"/v1/jobs/{id}/export?format=openai\">Download the export (OpenAI JSONL)</a> · \
         <a href=\"/v1/jobs/{id}/export?format=openai&amp;min_reward=1\">only reward ≥ 1</a></p>",
        detail.summary.conversations,
        reward(detail.summary.mean_reward),
        terminations.join(", "),
    );
    body.push_str("<form method=\"get\" class=\"filters\">");
    for (name, value) in &filters {
        let _ = write!(
            body,
            "<label>{label} <input name=\"{name}\" value=\"{value}\" size=\"10\"></label> ",
            label = name.replace('_', " "),
            value = esc(value)
        );
    }
    body.push_str("<button>Filter</button></form>");
    let mut rows = String::new();
    for c in page_of.conversations.iter().map(ConversationEntry::from) {
        let _ = write!(
            rows,
            "<tr><td><a href=\"/conversations/{cid}\">{cid}</a></td><td>{scenario}</td><td>{persona}</td><td>{sample}</td><td>{termination}</td><td>{reward}</td><td>{messages}</td></tr>",
            cid = c.id,
            scenario = esc(&c.scenario_id),
            persona = esc(&c.persona_id),
            sample = c.sample,
            termination = esc(&c.termination),
            reward = reward(c.reward),
            messages = c.messages,
        );
    }
    if rows.is_empty() {
        body.push_str("<p>No conversations on this page.</p>");
    } else {
        let _ = write!(
            body,
            "<table><thead><tr><th>id</th><th>scenario</th><th>persona</th><th>sample</th><th>termination</th><th>reward</th><th>messages</th></tr></thead><tbody>{rows}</tbody></table>"
        );
    }
    if let Some(next) = page_of.next {
        let mut pairs: Vec<(&str, String)> = filters.to_vec();
        pairs.push(("limit", limit.to_string()));
        pairs.push(("after", next.to_string()));
        let _ = write!(
            body,
            "<p><a href=\"/jobs/{id}?{}\">Next page →</a></p>",
            query_string(&pairs)
        );
    }
    Ok(page(&format!("job {id}"), !job.finished(), &body))
}

async fn conversation_page(State(state): State<AppState>, UrlPath(id): UrlPath<i64>) -> Response {
    match views::conversation_detail(state.store.as_ref(), id).await {
        Ok(c) => {
            let mut body = format!(
                "<h1>Conversation {id}</h1><p><a href=\"/jobs/{job}\">← job {job}</a> · scenario <b>{scenario}</b> · persona <b>{persona}</b> · sample {sample} · ended by <b>{termination}</b> · reward <b>{reward}</b></p>",
                job = c.conversation.job_id,
                scenario = esc(&c.conversation.scenario_id),
                persona = esc(&c.conversation.persona_id),
                sample = c.conversation.sample,
                termination = esc(&c.conversation.termination),
                reward = reward(c.conversation.reward),
            );
            body.push_str("<section class=\"chat\">");
            for m in &c.messages {
                body.push_str(&message_html(m));
            }
            body.push_str("</section>");
            body.push_str(&breakdown_html(&c.conversation.reward_breakdown));
            body.push_str(&judgments_html(id, &c.judgments));
            page(&format!("conversation {id}"), false, &body).into_response()
        }
        Err(e) => error_page(e),
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Tool-call arguments are JSON text; shown indented when they parse.
fn pretty_arguments(arguments: &str) -> String {
    serde_json::from_str::<Value>(arguments).map_or(arguments.to_string(), |v| pretty(&v))
}

fn message_html(m: &MessageRow) -> String {
    match m.role.as_str() {
        "system" => format!(
            "<details class=\"system\"><summary>system prompt</summary><pre>{}</pre></details>",
            esc(&m.content)
        ),
        "tool" => format!(
            "<details class=\"tool\"><summary>tool result{}</summary><pre>{}</pre></details>",
            m.tool_call_id
                .as_deref()
                .map_or(String::new(), |id| format!(" ({})", esc(id))),
            esc(&m.content)
        ),
        role => {
            let mut html = format!("<div class=\"bubble {}\">", esc(role));
            let _ = write!(html, "<div class=\"who\">{}</div>", esc(role));
            if !m.content.is_empty() {
                let _ = write!(html, "<div class=\"text\">{}</div>", esc(&m.content));
            }
            for call in m
                .tool_calls
                .as_ref()
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = call.get("name").and_then(Value::as_str).unwrap_or("?");
                let arguments = call.get("arguments").and_then(Value::as_str).unwrap_or("");
                let _ = write!(
                    html,
                    "<details class=\"call\"><summary>tool call: {}</summary><pre>{}</pre></details>",
                    esc(name),
                    esc(&pretty_arguments(arguments))
                );
            }
            html.push_str("</div>");
            html
        }
    }
}

fn breakdown_html(breakdown: &Value) -> String {
    if breakdown.is_null() {
        return "<h2>Reward</h2><p>Not verified.</p>".into();
    }
    let rows: String = match breakdown.as_object() {
        Some(components) => components
            .iter()
            .map(|(name, value)| {
                format!(
                    "<tr><td>{}</td><td><pre>{}</pre></td></tr>",
                    esc(name),
                    esc(&pretty(value))
                )
            })
            .collect(),
        None => format!(
            "<tr><td colspan=\"2\"><pre>{}</pre></td></tr>",
            esc(&pretty(breakdown))
        ),
    };
    format!("<h2>Reward breakdown</h2><table class=\"breakdown\"><tbody>{rows}</tbody></table>")
}

/// A verdict's short label (`7`, `A`, `tie`, `equal`, `2/3 met`).
fn verdict_label(verdict: Option<&Value>) -> String {
    verdict
        .and_then(|v| serde_json::from_value::<Verdict>(v.clone()).ok())
        .map_or("–".into(), |v| v.label())
}

fn consistent_label(consistent: Option<bool>) -> &'static str {
    match consistent {
        Some(true) => "yes",
        Some(false) => "no",
        None => "–",
    }
}

/// The judgments of conversation `id`, each linked to its page, with the
/// other conversation of a pairwise judgment.
fn judgments_html(id: i64, judgments: &[JudgmentRow]) -> String {
    if judgments.is_empty() {
        return "<h2>Judgments</h2><p>None.</p>".into();
    }
    let rows: String = judgments
        .iter()
        .map(|j| {
            let side = match j.conversation_b {
                None => "–".to_string(),
                Some(b) if j.conversation_a == id => {
                    format!("A, against <a href=\"/conversations/{b}\">{b}</a>")
                }
                Some(_) => format!(
                    "B, against <a href=\"/conversations/{a}\">{a}</a>",
                    a = j.conversation_a
                ),
            };
            format!(
                "<tr><td><a href=\"/judgments/{jid}\">{name}</a></td><td>{side}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&j.status),
                j.score.map_or("–".into(), |s| s.to_string()),
                esc(&verdict_label(j.verdict.as_ref())),
                consistent_label(j.consistent),
                esc(j.reason.as_deref().unwrap_or("")),
                jid = j.id,
                name = esc(&j.judge_name),
            )
        })
        .collect();
    format!(
        "<h2>Judgments</h2><table class=\"judgments\"><thead><tr><th>judge</th><th>side</th><th>status</th><th>score</th><th>verdict</th><th>consistent</th><th>reason</th></tr></thead><tbody>{rows}</tbody></table>"
    )
}

/// Judgments shown on a judging job's page at most.
const JUDGMENTS_SHOWN: u32 = 500;

/// The judgments a judging job made, linked.
async fn made_judgments_html(state: &AppState, job: i64) -> Result<String, ApiError> {
    let made = state
        .store
        .judgments_made_by(job, 0, JUDGMENTS_SHOWN + 1)
        .await?;
    if made.is_empty() {
        return Ok("<h2>Judgments</h2><p>None yet.</p>".into());
    }
    let mut rows = String::new();
    for j in made.iter().take(JUDGMENTS_SHOWN as usize) {
        let conversations = match j.conversation_b {
            Some(b) => format!(
                "<a href=\"/conversations/{a}\">{a}</a> vs <a href=\"/conversations/{b}\">{b}</a>",
                a = j.conversation_a
            ),
            None => format!(
                "<a href=\"/conversations/{a}\">{a}</a>",
                a = j.conversation_a
            ),
        };
        let _ = write!(
            rows,
            "<tr><td><a href=\"/judgments/{id}\">{id}</a></td><td>{judge}</td><td>{conversations}</td><td>{status}</td><td>{verdict}</td><td>{consistent}</td></tr>",
            id = j.id,
            judge = esc(&j.judge_name),
            status = esc(&j.status),
            verdict = esc(&verdict_label(j.verdict.as_ref())),
            consistent = consistent_label(j.consistent),
        );
    }
    let more = if made.len() > JUDGMENTS_SHOWN as usize {
        format!("<p class=\"muted\">The first {JUDGMENTS_SHOWN} are shown.</p>")
    } else {
        String::new()
    };
    Ok(format!(
        "<h2>Judgments</h2><table class=\"judgments\"><thead><tr><th>id</th><th>judge</th><th>conversations</th><th>status</th><th>verdict</th><th>consistent</th></tr></thead><tbody>{rows}</tbody></table>{more}"
    ))
}

async fn judgment_page(State(state): State<AppState>, UrlPath(id): UrlPath<i64>) -> Response {
    match views::judgment_sides(state.store.as_ref(), id).await {
        Ok(sides) => page(&format!("judgment {id}"), false, &judgment_html(&sides)).into_response(),
        Err(e) => error_page(e),
    }
}

/// One side of a judgment: its conversation as a chat.
fn side_html(side: &str, c: &StoredConversation) -> String {
    let r = &c.conversation;
    let mut html = format!(
        "<section class=\"side side-{lower}\"><h2>{side}: <a href=\"/conversations/{id}\">conversation {id}</a></h2>\
         <p class=\"muted\">job {job} · ended by {termination} · reward {reward}</p><div class=\"chat\">",
        lower = side.to_lowercase(),
        id = r.id,
        job = r.job_id,
        termination = esc(&r.termination),
        reward = reward(r.reward),
    );
    for m in &c.messages {
        html.push_str(&message_html(m));
    }
    html.push_str("</div></section>");
    html
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
        return format!("no verdict ({})", esc(&call.call.status));
    };
    let (Some(preference), Some(b)) = (verdict.preference(), b) else {
        return esc(&verdict.label());
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
    format!("{} → prefers {which}", esc(&verdict.label()))
}

fn judgment_html(sides: &JudgmentSides) -> String {
    let j = &sides.judgment;
    let verdict = verdict_label(j.verdict.as_ref());
    let preferred = match (verdict.as_str(), j.conversation_b) {
        ("A", _) => format!("A (conversation {})", j.conversation_a),
        ("B", Some(b)) => format!("B (conversation {b})"),
        ("tie", _) => "neither: a tie".to_string(),
        (other, _) => other.to_string(),
    };
    let consistency = match j.consistent {
        Some(true) => "both orders agreed",
        Some(false) => "the two orders disagreed",
        None => "not swap-checked",
    };
    let mut html = format!(
        "<h1>Judgment {id}: {judge}</h1><p class=\"verdict\">status <b>{status}</b> · verdict <b>{preferred}</b> · swap check: <b>{consistency}</b>{reason}</p>",
        id = j.id,
        judge = esc(&j.judge_name),
        status = esc(&j.status),
        preferred = esc(&preferred),
        reason = j
            .reason
            .as_deref()
            .map_or(String::new(), |r| format!(" · {}", esc(r))),
    );
    html.push_str("<h2>Calls</h2><table class=\"calls\"><thead><tr><th>order</th><th>sample</th><th>status</th><th>says</th><th>output</th></tr></thead><tbody>");
    for call in &sides.calls {
        let _ = write!(
            html,
            "<tr><td>{order}</td><td>{sample}</td><td>{status}</td><td>{says}</td><td><details class=\"raw\"><summary>raw output ({model})</summary><pre>{raw}</pre></details></td></tr>",
            order = esc(&call.call.order),
            sample = call.call.sample,
            status = esc(&call.call.status),
            says = call_says(call, j.conversation_a, j.conversation_b),
            model = esc(&call.call.model),
            raw = esc(&call.call.raw_output),
        );
    }
    html.push_str("</tbody></table><div class=\"sides\">");
    html.push_str(&side_html("A", &sides.a));
    if let Some(b) = &sides.b {
        html.push_str(&side_html("B", b));
    }
    html.push_str("</div>");
    html
}
