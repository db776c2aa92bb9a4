//! The leaderboard as gathered: one row per policy (a job), every figure
//! over the items all the compared jobs share. Types only: `gather` fills
//! them, the CLI renders them.

use serde::Serialize;

use super::bradley_terry::Rating;
use super::paired::PairedDifference;
use crate::interval::Mean;

#[derive(Debug, Clone, Serialize)]
pub struct Leaderboard {
    /// The job the paired tests compare each other job with.
    pub baseline: i64,
    /// A conversation passes when its reward is at least this.
    pub pass_threshold: f64,
    /// Item keys every compared job has a conversation for.
    pub shared_items: usize,
    pub policies: Vec<PolicyRow>,
    /// Why there are no ratings, when there are none.
    pub ratings_refused: Option<String>,
    /// Row i, column j: the share of the shared items on which policy i's
    /// reward beat policy j's, a tie counting half (the ratings' battles).
    pub win_rates: Vec<Vec<Option<f64>>>,
    /// Ratings from a pairwise judge's verdicts, when one was asked for.
    pub judged: Option<Judged>,
    /// What the frontier weighs reward against: `cost` (USD per
    /// conversation) when every policy's endpoint has prices, else `tokens`.
    pub frontier_by: &'static str,
}

/// Bradley–Terry ratings from a pairwise judge's stored verdicts between the
/// compared policies' conversations of the same item (each verdict already
/// swap-checked and settled as the judge's `on_inconsistent` says).
#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    pub judge: String,
    /// Verdicts read: one battle each.
    pub battles: usize,
    /// Of them, verdicts whose two orders disagreed.
    pub inconsistent: usize,
    /// Why there are no judge ratings, when there are none.
    pub ratings_refused: Option<String>,
    /// As [`Leaderboard::win_rates`], by the judge's verdicts; `None` where
    /// two policies were not judged against each other.
    pub win_rates: Vec<Vec<Option<f64>>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PolicyRow {
    pub job_id: i64,
    pub name: String,
    /// The policy model the conversations name (several, comma-separated).
    pub policy: String,
    /// Scored conversations over the shared items.
    pub conversations: usize,
    pub mean_reward: Option<Mean>,
    /// The share of conversations that pass, with its Wilson interval.
    pub pass_rate: Option<Mean>,
    /// pass^k (tau-bench) for k = 1 up to the fewest trials any scenario of
    /// the shared items has (a scenario's trials: its items' conversations).
    pub pass_hat: Vec<(u64, f64)>,
    /// (termination, share), most frequent first.
    pub terminations: Vec<(String, f64)>,
    /// The share of conversations with a simulated-user flag; a policy whose
    /// users are flagged more is compared on worse users.
    pub user_flag_rate: Option<Mean>,
    pub tokens_per_conversation: Option<f64>,
    /// The policy's tokens priced by its endpoint's prices (USD per
    /// conversation); `None` when the endpoint has none.
    pub cost_per_conversation: Option<f64>,
    /// The policy's mean latency per call, ms.
    pub policy_latency_ms: Option<f64>,
    /// The policy's latency per turn, ms: all its calls' latency over the
    /// user turns it answered (an agent with tools makes several calls a
    /// turn).
    pub latency_per_turn_ms: Option<f64>,
    /// Against the baseline (absent on the baseline's own row).
    pub against_baseline: Option<Paired>,
    pub rating: Option<Rating>,
    /// From the pairwise judge's verdicts ([`Leaderboard::judged`]).
    pub judge_rating: Option<Rating>,
    /// On the reward–cost (or reward–tokens) frontier: no other policy scores at least as
    /// well with at most as many tokens.
    pub on_frontier: bool,
}

/// This policy against the baseline on the items both ran.
#[derive(Debug, Clone, Serialize)]
pub struct Paired {
    pub items: usize,
    /// Items this policy passed and the baseline failed, and the reverse.
    pub only_this_passed: u64,
    pub only_baseline_passed: u64,
    /// McNemar's exact p-value on those two counts.
    pub mcnemar_p: f64,
    /// This policy's reward minus the baseline's, paired by item.
    pub reward_difference: Option<PairedDifference>,
    /// The first of the items one passed and the other failed, by item key
    /// (at most [`DISAGREEMENTS_SHOWN`]): where a reader learns the most.
    pub disagreements: Vec<Disagreement>,
}

/// Disagreements listed per policy, at most.
pub const DISAGREEMENTS_SHOWN: usize = 20;

/// An item this policy and the baseline disagree on.
#[derive(Debug, Clone, Serialize)]
pub struct Disagreement {
    pub item_key: String,
    /// Whether this policy passed it (else the baseline did).
    pub this_passed: bool,
    pub conversation: i64,
    pub baseline_conversation: i64,
}
