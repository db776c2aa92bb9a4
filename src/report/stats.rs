//! What `sparring stats` reports of a job: rewards (mean with a 95% interval,
//! by component, by termination reason), pass^k per scenario, and per judge
//! the counts of its judgments and what its `ok` verdicts add up to.

use serde::Serialize;

use crate::export::CorruptJudgment;
use crate::judge::aggregate::WinRate;
use crate::store::{JobKind, JobStatus, StoreError};

use super::interval::Mean;
pub use super::users::UserReport;

/// The k of pass^k when none are asked for.
pub const DEFAULT_KS: [u64; 3] = [1, 2, 4];
/// Bootstrap resamples of a win-rate interval.
pub const BOOTSTRAP_RESAMPLES: usize = 1000;
/// The bootstrap's seed: the same judgments always give the same interval.
pub const BOOTSTRAP_SEED: u64 = 20_250_101;
/// A trial succeeds with full reward (1.0, give or take rounding); the rule
/// lives beside the definition of an unsolved scenario, which uses it too.
pub use crate::verify::solved::SUCCESS_REWARD;

#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    #[error("job {0} is not in the database")]
    NoSuchJob(i64),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    CorruptJudgment(#[from] CorruptJudgment),
    #[error("the job's stored config cannot be read: {0}")]
    StoredConfig(String),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatsReport {
    pub job: JobInfo,
    pub conversations: ConversationStats,
    pub pass_hat_k: PassHatK,
    /// By judge name.
    pub judges: Vec<JudgeStats>,
    /// Per role (policy, user, then each judge): model calls, tokens,
    /// latency percentiles and cost.
    pub usage: Vec<super::usage::RoleReport>,
    /// The deterministic checks of the simulated user.
    pub simulated_user: UserReport,
    /// A synthesis job's proposals (its other sections are empty: it stores
    /// no conversations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synthesis: Option<super::synthesis::SynthesisStats>,
    /// The job's synthesized scenarios: solved, unsolved, undecided; `None`
    /// when it ran none.
    pub synthesized: Option<super::synthesized::SynthesizedReport>,
}

/// The policy and user models of a job's conversations.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Models {
    /// Model name → conversations, in name order.
    pub policy: Vec<(String, u64)>,
    pub user: Vec<(String, u64)>,
    /// Conversations that name no policy model, and no user model.
    pub policy_unrecorded: u64,
    pub user_unrecorded: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobInfo {
    pub id: i64,
    pub name: String,
    pub kind: JobKind,
    pub status: JobStatus,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ConversationStats {
    /// Stored conversations (failed items store none).
    pub total: u64,
    /// Those with a reward; the others were broken by the simulator or environment.
    pub scored: u64,
    /// Mean reward of the scored ones, with an interval inside [0, 1]
    /// (Wilson when every reward is 0 or 1); `None` when none is scored.
    pub reward: Option<Mean>,
    /// By component name, from each conversation's reward breakdown.
    pub components: Vec<ComponentStats>,
    /// Most frequent first.
    pub terminations: Vec<TerminationStats>,
    /// Rollout groups (a scenario's conversations with a reward) and the
    /// flat ones among them; `None` when none is scored.
    pub groups: Option<crate::export::groups::GroupCounts>,
    /// What the policy warned of conversations (an agent's answers that held
    /// tool use no trace read), with how many conversations each; most
    /// frequent first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<WarningCount>,
    /// The models the conversations name (an imported file's, when it
    /// recorded them), per role, with how many conversations each made.
    pub models: Models,
}

/// One warning and the conversations it was left on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WarningCount {
    pub warning: String,
    pub conversations: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentStats {
    pub component: String,
    /// Inside [0, 1] like the reward's.
    pub score: Mean,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TerminationStats {
    pub reason: String,
    pub count: u64,
    pub scored: u64,
    /// `None` when none of them is scored.
    pub mean_reward: Option<f64>,
}

/// pass^k: per scenario, the chance that k of its trials drawn without
/// replacement all succeed, C(c, k) / C(n, k); averaged over the scenarios
/// with at least k trials. A trial is a scored conversation; it succeeds with
/// reward ≥ [`SUCCESS_REWARD`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PassHatK {
    pub success_reward: f64,
    /// By scenario id.
    pub scenarios: Vec<ScenarioTrials>,
    pub values: Vec<PassHatKValue>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScenarioTrials {
    pub scenario: String,
    pub n: u64,
    pub successes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassHatKValue {
    pub k: u64,
    /// `None` when no scenario has k trials.
    pub value: Option<f64>,
    /// Scenarios with at least k trials: those the mean is over.
    pub scenarios: u64,
}

/// One judge's judgments of the job's conversations (the newest per
/// conversation when the judge's config changed). Each verdict kind the judge
/// gave has its section; the others are `None`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeStats {
    pub judge: String,
    pub ok: u64,
    pub unparseable: u64,
    pub failed: u64,
    pub pointwise: Option<PointwiseStats>,
    pub pairwise: Option<PairwiseStats>,
    pub assertions: Option<AssertionStats>,
    pub equivalence: Option<EquivalenceStats>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointwiseStats {
    /// A rubric's scores have no known bounds here: a normal interval.
    pub score: Mean,
    /// A pass/fail judge (every score 0 or 1): the share that passed.
    pub pass_rate: Option<PassRate>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassRate {
    pub passed: u64,
    pub judged: u64,
    pub rate: f64,
    /// The Wilson interval of the rate.
    pub ci95: Option<(f64, f64)>,
}

/// A = the job's conversation, B = the other (another job's, or a reference).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairwiseStats {
    /// Win/tie/loss of A, win rate (ties count half) and its bootstrap interval.
    pub win_rate: WinRate,
    pub tie_rate: f64,
    /// Judgments judged in both orders.
    pub swap_checked: u64,
    /// Of those, the ones whose orders agreed.
    pub consistent: u64,
    /// consistent / swap_checked; `None` without swap checks.
    pub position_consistency: Option<f64>,
    /// Individual `ok` calls behind the `ok` judgments that preferred one side.
    pub decided_calls: u64,
    /// Of those, the ones that preferred the answer shown first.
    pub first_position_wins: u64,
    /// first_position_wins / decided_calls (0.5 = no position bias).
    pub first_position_rate: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AssertionStats {
    pub judgments: u64,
    pub assertions: u64,
    pub met: u64,
    /// met / assertions.
    pub share_met: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EquivalenceStats {
    pub judgments: u64,
    pub equal: u64,
    pub share_equal: f64,
}
