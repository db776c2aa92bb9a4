//! `/evaluations/{id}`: a stored evaluation's leaderboard (`sparring
//! evaluate`, docs/leaderboard.md) as a page: the table, sortable by any
//! figure (`?sort=`), each policy's reward with its interval, the reward–cost
//! frontier, the win-rate heat maps, and the items where a policy and the
//! baseline disagree, each linked to both conversations.

use serde::{Deserialize, Serialize};

use crate::evaluation::cells::{mean, pass_hat, rating};
use crate::evaluation::table::{Leaderboard, PolicyRow};
use crate::evaluation::{leaderboard, LeaderboardError, LeaderboardRequest};
use crate::interval::Mean;
use crate::store::EvaluationStore;

use super::super::{ApiError, AppState};
use super::evaluation_plots::{
    frontier_plot, heat_map, reward_plot, FrontierPlot, HeatMap, IntervalPlot,
};
use super::templates;

/// Bootstrap resamples of the page's intervals (the CLI's default).
const RESAMPLES: u32 = 2000;

#[derive(Debug, Deserialize, Default)]
pub struct EvaluationQuery {
    pub sort: Option<String>,
}

/// The columns a reader can sort by: (query value, header).
pub const SORTS: [(&str, &str); 8] = [
    ("reward", "mean reward"),
    ("pass", "pass rate"),
    ("rating", "rating (BT)"),
    ("judge", "rating (judge)"),
    ("flags", "user flags"),
    ("cost", "cost/conv"),
    ("tokens", "tokens/conv"),
    ("name", "policy"),
];

#[derive(Serialize)]
struct EvaluationPage {
    title: String,
    refresh: bool,
    wide: bool,
    id: i64,
    name: String,
    baseline: String,
    shared_items: usize,
    pass_threshold: f64,
    frontier_by: &'static str,
    judge: Option<String>,
    columns: Vec<SortLink>,
    rows: Vec<Row>,
    reward_plot: IntervalPlot,
    frontier: FrontierPlot,
    heat_maps: Vec<HeatMap>,
    disagreements: Vec<Disagreements>,
    ratings_refused: Option<String>,
}

#[derive(Serialize)]
struct SortLink {
    key: &'static str,
    header: &'static str,
    selected: bool,
}

#[derive(Serialize)]
struct Row {
    job_id: i64,
    name: String,
    model: String,
    reward: String,
    pass: String,
    pass_hat: String,
    rating: String,
    judge_rating: String,
    flags: String,
    tokens: String,
    cost: String,
    latency: String,
    turn_latency: String,
    frontier: bool,
    against: String,
    is_baseline: bool,
}

#[derive(Serialize)]
struct Disagreements {
    policy: String,
    job_id: i64,
    /// Items it passed and the baseline failed, and the reverse.
    only_this: u64,
    only_baseline: u64,
    items: Vec<Item>,
}

#[derive(Serialize)]
struct Item {
    key: String,
    this_passed: bool,
    conversation: i64,
    baseline_conversation: i64,
}

pub async fn render(
    state: &AppState,
    id: i64,
    query: &EvaluationQuery,
) -> Result<String, ApiError> {
    // A blank value (a form's "any") is the default.
    let sort = query
        .sort
        .as_deref()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or("reward");
    if !SORTS.iter().any(|(key, _)| *key == sort) {
        return Err(ApiError::BadRequest(format!(
            "sort '{sort}' is not a column; sort by one of {}",
            SORTS.map(|(key, _)| key).join(", ")
        )));
    }
    let store: &dyn EvaluationStore = state.store.as_ref();
    let evaluation = store
        .get_evaluation(id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("evaluation {id} does not exist")))?;
    let baseline = evaluation.baseline.as_ref().and_then(|b| {
        evaluation
            .policies
            .iter()
            .find(|p| &p.policy == b)
            .map(|p| p.job_id)
    });
    let request = LeaderboardRequest {
        jobs: evaluation.policies.iter().map(|p| p.job_id).collect(),
        baseline,
        pass_threshold: 1.0,
        resamples: RESAMPLES,
        seed: 0,
        judge: evaluation.judge.clone(),
    };
    let mut table = match leaderboard(state.store.as_ref(), &request).await {
        Ok(table) => table,
        Err(LeaderboardError::Store(e)) => return Err(e.into()),
        Err(e) => return Err(ApiError::Conflict(format!("evaluation {id}: {e}"))),
    };
    // Each policy's job is `EVALUATION: POLICY`; the page is the
    // evaluation's, so its policies go by their own names.
    let prefix = format!("{}: ", evaluation.name);
    for policy in &mut table.policies {
        if let Some(own) = policy.name.strip_prefix(&prefix) {
            policy.name = own.to_string();
        }
    }
    let mut sorted: Vec<&PolicyRow> = table.policies.iter().collect();
    sort_rows(&mut sorted, sort);
    let mut heat_maps = vec![heat_map(
        "Win rates by reward (row beat column on the shared items; a tie counts half)",
        &table.policies,
        &table.win_rates,
    )];
    if let Some(judged) = &table.judged {
        heat_maps.push(heat_map(
            &format!(
                "Win rates by judge '{}' ({} verdicts, {} inconsistent across the swap)",
                judged.judge, judged.battles, judged.inconsistent
            ),
            &table.policies,
            &judged.win_rates,
        ));
    }
    let page = EvaluationPage {
        title: format!("Evaluation {}", evaluation.name),
        refresh: false,
        wide: true,
        id,
        name: evaluation.name.clone(),
        baseline: table
            .policies
            .iter()
            .find(|p| p.job_id == table.baseline)
            .map_or_else(|| format!("job {}", table.baseline), |p| p.name.clone()),
        shared_items: table.shared_items,
        pass_threshold: table.pass_threshold,
        frontier_by: table.frontier_by,
        judge: table.judged.as_ref().map(|j| j.judge.clone()),
        columns: SORTS
            .iter()
            .map(|(key, header)| SortLink {
                key,
                header,
                selected: *key == sort,
            })
            .collect(),
        rows: sorted.iter().map(|p| row(p, &table)).collect(),
        reward_plot: reward_plot(&sorted),
        frontier: frontier_plot(&table, &sorted),
        heat_maps,
        disagreements: disagreements(&table),
        ratings_refused: table.ratings_refused.clone(),
    };
    templates::render("evaluation.html", &page)
}

fn sort_rows(rows: &mut [&PolicyRow], sort: &str) {
    let value = |m: &Option<Mean>| m.map_or(f64::NEG_INFINITY, |m| m.mean);
    let key = |p: &PolicyRow| -> f64 {
        match sort {
            "pass" => value(&p.pass_rate),
            "rating" => p.rating.map_or(f64::NEG_INFINITY, |r| r.rating),
            "judge" => p.judge_rating.map_or(f64::NEG_INFINITY, |r| r.rating),
            // Fewer flags, tokens and dollars first.
            "flags" => -value(&p.user_flag_rate),
            "tokens" => -p.tokens_per_conversation.unwrap_or(f64::INFINITY),
            "cost" => -p.cost_per_conversation.unwrap_or(f64::INFINITY),
            _ => value(&p.mean_reward),
        }
    };
    if sort == "name" {
        rows.sort_by(|a, b| a.name.cmp(&b.name));
    } else {
        rows.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.name.cmp(&b.name)));
    }
}

fn row(p: &PolicyRow, table: &Leaderboard) -> Row {
    Row {
        job_id: p.job_id,
        name: p.name.clone(),
        model: p.policy.clone(),
        reward: mean(&p.mean_reward),
        pass: mean(&p.pass_rate),
        pass_hat: pass_hat(&p.pass_hat),
        rating: rating(&p.rating),
        judge_rating: rating(&p.judge_rating),
        flags: mean(&p.user_flag_rate),
        tokens: p
            .tokens_per_conversation
            .map_or("–".into(), |t| format!("{t:.0}")),
        cost: p
            .cost_per_conversation
            .map_or("–".into(), |c| format!("${c:.4}")),
        latency: p
            .policy_latency_ms
            .map_or("–".into(), |t| format!("{t:.0} ms")),
        turn_latency: p
            .latency_per_turn_ms
            .map_or("–".into(), |t| format!("{t:.0} ms")),
        frontier: p.on_frontier,
        against: match &p.against_baseline {
            None => String::new(),
            Some(a) => format!(
                "+{}/−{}, McNemar p={:.3}{}",
                a.only_this_passed,
                a.only_baseline_passed,
                a.mcnemar_p,
                a.reward_difference.map_or(String::new(), |d| format!(
                    "; reward {:+.3} [{:+.3}, {:+.3}]",
                    d.mean, d.low, d.high
                ))
            ),
        },
        is_baseline: p.job_id == table.baseline,
    }
}

fn disagreements(table: &Leaderboard) -> Vec<Disagreements> {
    table
        .policies
        .iter()
        .filter_map(|p| {
            let a = p.against_baseline.as_ref()?;
            Some(Disagreements {
                policy: p.name.clone(),
                job_id: p.job_id,
                only_this: a.only_this_passed,
                only_baseline: a.only_baseline_passed,
                items: a
                    .disagreements
                    .iter()
                    .map(|d| Item {
                        key: d.item_key.clone(),
                        this_passed: d.this_passed,
                        conversation: d.conversation,
                        baseline_conversation: d.baseline_conversation,
                    })
                    .collect(),
            })
        })
        .collect()
}
