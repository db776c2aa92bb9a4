//! The leaderboard of stored jobs: each job's conversations read page by
//! page, paired with the other jobs' by item key (`scenario/persona/sample`,
//! the same in jobs that ran one config with different policies), and every
//! figure taken over the items all of them scored. The only part of
//! `evaluation` that reads the store.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::config::job::Prices;
use crate::interval::Mean;
use crate::judge::aggregate::{pass_hat_k, Trials};
use crate::judge::verdict::{Preference, Verdict};
use crate::store::{JobKind, Store, StoreError, StoredConversation};
use crate::user_checks::UserChecks;

use super::bradley_terry::{fit_with_intervals, Battle};
use super::mcnemar::exact_p;
use super::paired::bootstrap;
use super::pareto::frontier;
use super::table::{Disagreement, Judged, Leaderboard, Paired, PolicyRow, DISAGREEMENTS_SHOWN};
use super::win_rates::win_rates;

/// Conversations read from the store at a time.
const PAGE: u32 = 512;

#[derive(Debug, Clone)]
pub struct LeaderboardRequest {
    /// The jobs compared, one per policy, at least two.
    pub jobs: Vec<i64>,
    /// One of `jobs`; the first when `None`.
    pub baseline: Option<i64>,
    pub pass_threshold: f64,
    /// Bootstrap resamples for every interval that is bootstrapped.
    pub resamples: u32,
    pub seed: u64,
    /// A pairwise judge whose stored verdicts between the jobs' conversations
    /// make a second set of ratings.
    pub judge: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LeaderboardError {
    #[error("compare at least two jobs (one per policy); {0} given")]
    TooFew(usize),
    #[error("job {0} is listed twice; list each job once")]
    Repeated(i64),
    #[error("job {0} is not in the database")]
    NoSuchJob(i64),
    #[error(
        "job {id} is a {kind} job, which holds no conversations of its own; list the \
         generation (or import) jobs whose policies are compared"
    )]
    NoConversations { id: i64, kind: &'static str },
    #[error("the baseline, job {0}, is not one of the jobs compared; name one of them")]
    BaselineNotCompared(i64),
    #[error(
        "the jobs share no scored item (an item key `scenario/persona/sample` with a reward in \
         every job): compare jobs that ran the same items, e.g. one config with different \
         policies"
    )]
    NothingShared,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One job's scored conversations by item key.
struct JobConversations {
    id: i64,
    name: String,
    by_key: HashMap<String, StoredConversation>,
    /// The policy endpoint's prices, from the job's stored config.
    prices: Option<Prices>,
}

pub async fn leaderboard(
    store: &dyn Store,
    request: &LeaderboardRequest,
) -> Result<Leaderboard, LeaderboardError> {
    if request.jobs.len() < 2 {
        return Err(LeaderboardError::TooFew(request.jobs.len()));
    }
    let mut seen = BTreeSet::new();
    if let Some(repeated) = request.jobs.iter().find(|j| !seen.insert(**j)) {
        return Err(LeaderboardError::Repeated(*repeated));
    }
    let baseline = request.baseline.unwrap_or(request.jobs[0]);
    let Some(baseline_at) = request.jobs.iter().position(|j| *j == baseline) else {
        return Err(LeaderboardError::BaselineNotCompared(baseline));
    };
    let mut jobs = Vec::new();
    for id in &request.jobs {
        jobs.push(read_job(store, *id).await?);
    }
    let mut shared: Vec<String> = jobs[0].by_key.keys().cloned().collect();
    shared.retain(|k| jobs.iter().all(|j| j.by_key.contains_key(k)));
    shared.sort();
    if shared.is_empty() {
        return Err(LeaderboardError::NothingShared);
    }
    let threshold = request.pass_threshold;
    let reward =
        |job: &JobConversations, key: &str| job.by_key[key].conversation.reward.unwrap_or(f64::NAN);
    let mut policies: Vec<PolicyRow> = jobs
        .iter()
        .map(|job| row(job, &shared, threshold))
        .collect();
    for (at, job) in jobs.iter().enumerate() {
        if at == baseline_at {
            continue;
        }
        let base = &jobs[baseline_at];
        let (mut only_this, mut only_base) = (0, 0);
        let mut differences = Vec::with_capacity(shared.len());
        let mut disagreements = Vec::new();
        for key in &shared {
            let (mine, theirs) = (reward(job, key), reward(base, key));
            let (passed, base_passed) = (mine >= threshold, theirs >= threshold);
            match (passed, base_passed) {
                (true, false) => only_this += 1,
                (false, true) => only_base += 1,
                _ => {}
            }
            if passed != base_passed && disagreements.len() < DISAGREEMENTS_SHOWN {
                disagreements.push(Disagreement {
                    item_key: key.clone(),
                    this_passed: passed,
                    conversation: job.by_key[key].conversation.id,
                    baseline_conversation: base.by_key[key].conversation.id,
                });
            }
            differences.push(mine - theirs);
        }
        policies[at].against_baseline = Some(Paired {
            items: shared.len(),
            only_this_passed: only_this,
            only_baseline_passed: only_base,
            mcnemar_p: exact_p(only_this, only_base),
            reward_difference: bootstrap(&differences, request.resamples, request.seed),
            disagreements,
        });
    }
    // Every pair of policies on every shared item: the higher reward wins.
    let mut battles = Vec::new();
    for a in 0..jobs.len() {
        for b in a + 1..jobs.len() {
            for key in &shared {
                let (ra, rb) = (reward(&jobs[a], key), reward(&jobs[b], key));
                battles.push(if ra > rb {
                    Battle::Won {
                        winner: a,
                        loser: b,
                    }
                } else if rb > ra {
                    Battle::Won {
                        winner: b,
                        loser: a,
                    }
                } else {
                    Battle::Tied(a, b)
                });
            }
        }
    }
    let reward_win_rates = win_rates(jobs.len(), &battles);
    let resamples = request.resamples.min(1000);
    let ratings_refused = match fit_with_intervals(jobs.len(), &battles, resamples, request.seed) {
        Ok(ratings) => {
            for (policy, rating) in policies.iter_mut().zip(ratings) {
                policy.rating = Some(rating);
            }
            None
        }
        Err(e) => Some(e.to_string()),
    };
    let judged = match &request.judge {
        None => None,
        Some(judge) => {
            let (battles, inconsistent) = judge_battles(store, &jobs, &shared, judge).await?;
            let mut judged = Judged {
                judge: judge.clone(),
                battles: battles.len(),
                inconsistent,
                ratings_refused: None,
                win_rates: win_rates(jobs.len(), &battles),
            };
            match fit_with_intervals(jobs.len(), &battles, resamples, request.seed) {
                Ok(ratings) => {
                    for (policy, rating) in policies.iter_mut().zip(ratings) {
                        policy.judge_rating = Some(rating);
                    }
                }
                Err(e) => judged.ratings_refused = Some(e.to_string()),
            }
            Some(judged)
        }
    };
    // Cost when every policy has prices, else tokens.
    let by_cost = policies.iter().all(|p| p.cost_per_conversation.is_some());
    let points: Vec<(f64, f64)> = policies
        .iter()
        .map(|p| {
            let spent = if by_cost {
                p.cost_per_conversation
            } else {
                p.tokens_per_conversation
            };
            (
                p.mean_reward.map_or(f64::NEG_INFINITY, |m| m.mean),
                spent.unwrap_or(f64::INFINITY),
            )
        })
        .collect();
    for (policy, on) in policies.iter_mut().zip(frontier(&points)) {
        policy.on_frontier = on;
    }
    Ok(Leaderboard {
        baseline,
        pass_threshold: threshold,
        shared_items: shared.len(),
        policies,
        ratings_refused,
        win_rates: reward_win_rates,
        judged,
        frontier_by: if by_cost { "cost" } else { "tokens" },
    })
}

/// One battle per `ok` verdict of `judge` between two compared jobs'
/// conversations of the same shared item, the verdict's A being the job whose
/// judgments hold it; and how many of those verdicts were inconsistent.
async fn judge_battles(
    store: &dyn Store,
    jobs: &[JobConversations],
    shared: &[String],
    judge: &str,
) -> Result<(Vec<Battle>, usize), LeaderboardError> {
    let shared: HashSet<&str> = shared.iter().map(String::as_str).collect();
    let mut whose: HashMap<i64, (usize, &str)> = HashMap::new();
    for (at, job) in jobs.iter().enumerate() {
        for (key, c) in &job.by_key {
            if shared.contains(key.as_str()) {
                whose.insert(c.conversation.id, (at, key.as_str()));
            }
        }
    }
    let mut battles = Vec::new();
    let mut inconsistent = 0;
    for job in jobs {
        for judgment in store.judgments_of_job(job.id).await? {
            if judgment.judge_name != judge || judgment.status != "ok" {
                continue;
            }
            let Some(b) = judgment.conversation_b else {
                continue;
            };
            let (Some(&(x, key_a)), Some(&(y, key_b))) =
                (whose.get(&judgment.conversation_a), whose.get(&b))
            else {
                continue;
            };
            if x == y || key_a != key_b {
                continue;
            }
            let Some(Ok(Verdict::Preference { preference })) =
                judgment.verdict.map(serde_json::from_value::<Verdict>)
            else {
                continue;
            };
            inconsistent += usize::from(judgment.consistent == Some(false));
            battles.push(match preference {
                Preference::A => Battle::Won {
                    winner: x,
                    loser: y,
                },
                Preference::B => Battle::Won {
                    winner: y,
                    loser: x,
                },
                Preference::Tie => Battle::Tied(x, y),
            });
        }
    }
    Ok((battles, inconsistent))
}

/// The policy endpoint's prices in a stored job config (`[roles] policy`,
/// then its `[endpoints.NAME]` input and output prices); `None` without both.
fn policy_prices(snapshot: &str) -> Option<Prices> {
    let config: toml::Table = toml::from_str(snapshot).ok()?;
    let role = config
        .get("roles")
        .and_then(|r| r.get("policy"))
        .and_then(toml::Value::as_str)?;
    let endpoint = config.get("endpoints")?.get(role)?;
    let price = |key: &str| {
        endpoint
            .get(key)
            .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
    };
    Some(Prices {
        input_per_million: price("input_price_per_million")?,
        output_per_million: price("output_price_per_million")?,
    })
}

async fn read_job(store: &dyn Store, id: i64) -> Result<JobConversations, LeaderboardError> {
    let job = store
        .get_job(id)
        .await?
        .ok_or(LeaderboardError::NoSuchJob(id))?;
    if !matches!(job.kind, JobKind::Generation | JobKind::Import) {
        return Err(LeaderboardError::NoConversations {
            id,
            kind: job.kind.as_str(),
        });
    }
    let mut by_key = HashMap::new();
    let mut after = 0;
    loop {
        let page = store.conversations_page(id, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.conversation.id;
        for c in page {
            if c.conversation.reward.is_some_and(f64::is_finite) {
                by_key.insert(c.conversation.item_key.clone(), c);
            }
        }
    }
    Ok(JobConversations {
        id,
        name: job.name,
        by_key,
        prices: policy_prices(&job.config_snapshot),
    })
}

/// A job's own figures over the shared items.
fn row(job: &JobConversations, shared: &[String], threshold: f64) -> PolicyRow {
    let conversations: Vec<&StoredConversation> = shared.iter().map(|k| &job.by_key[k]).collect();
    let rewards: Vec<f64> = conversations
        .iter()
        .filter_map(|c| c.conversation.reward)
        .collect();
    let passed = rewards.iter().filter(|r| **r >= threshold).count() as u64;
    let n = conversations.len();
    let mut trials: BTreeMap<&str, Trials> = BTreeMap::new();
    let mut terminations: BTreeMap<&str, usize> = BTreeMap::new();
    let mut policies = BTreeSet::new();
    let (mut flagged, mut checked) = (0u64, 0u64);
    let (mut tokens, mut calls, mut latency) = (0i64, 0i64, 0i64);
    let (mut prompt, mut completion) = (0i64, 0i64);
    let mut turns = 0i64;
    for c in &conversations {
        let row = &c.conversation;
        let t = trials
            .entry(&row.scenario_id)
            .or_insert(Trials { n: 0, successes: 0 });
        t.n += 1;
        t.successes += u64::from(row.reward.is_some_and(|r| r >= threshold));
        *terminations.entry(&row.termination).or_default() += 1;
        policies.insert(row.policy_model.as_str());
        if let Some(checks) = row
            .user_checks
            .clone()
            .and_then(|v| serde_json::from_value::<UserChecks>(v).ok())
        {
            checked += 1;
            flagged += u64::from(!checks.flagged().is_empty());
        }
        // The user turns the policy answered: those before its last message.
        let answered = c.messages.iter().rposition(|m| m.role == "assistant");
        turns += answered.map_or(0, |last| {
            c.messages[..last]
                .iter()
                .filter(|m| m.role == "user")
                .count() as i64
        });
        for usage in c.usage.iter().filter(|u| u.role == "policy") {
            tokens += usage.prompt_tokens + usage.completion_tokens;
            prompt += usage.prompt_tokens;
            completion += usage.completion_tokens;
            calls += usage.calls;
            latency += usage.latency_ms;
        }
    }
    let scenarios: Vec<Trials> = trials.into_values().collect();
    let fewest = scenarios.iter().map(|t| t.n).min().unwrap_or(0);
    let mut terminations: Vec<(String, f64)> = terminations
        .into_iter()
        .map(|(t, count)| (t.to_string(), count as f64 / n as f64))
        .collect();
    terminations.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    PolicyRow {
        job_id: job.id,
        name: job.name.clone(),
        policy: policies.into_iter().collect::<Vec<_>>().join(", "),
        conversations: n,
        mean_reward: Mean::of_unit(&rewards),
        pass_rate: Mean::of_share(passed, n as u64),
        pass_hat: (1..=fewest)
            .filter_map(|k| pass_hat_k(&scenarios, k).map(|v| (k, v)))
            .collect(),
        terminations,
        user_flag_rate: Mean::of_share(flagged, checked),
        tokens_per_conversation: (tokens > 0).then(|| tokens as f64 / n as f64),
        cost_per_conversation: job.prices.map(|p| {
            (prompt as f64 * p.input_per_million + completion as f64 * p.output_per_million)
                / 1_000_000.0
                / n as f64
        }),
        policy_latency_ms: (calls > 0).then(|| latency as f64 / calls as f64),
        latency_per_turn_ms: (calls > 0 && turns > 0).then(|| latency as f64 / turns as f64),
        against_baseline: None,
        rating: None,
        judge_rating: None,
        on_frontier: false,
    }
}
