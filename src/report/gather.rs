//! Gathering a job's statistics from the store: its conversations, one page
//! at a time, and every judgment of them with the calls behind them.
//! Unparseable and failed judgments are counted and otherwise left out: they
//! are never a loss or a 0.

use std::collections::{BTreeMap, HashMap};

use crate::export::groups::RolloutGroups;
use crate::export::unsolved::synthesized_outcomes;
use crate::export::{newest_judgments, ok_verdict, CorruptJudgment};
use crate::judge::aggregate::{
    first_position_rate, pass_hat_k, position_consistency, win_rate, Trials,
};
use crate::judge::{Order, Preference, Verdict};
use crate::store::{
    ConversationRow, ConversationStore, JobKind, JobStore, JudgeCallRow, JudgmentRow, Store,
    StoreError,
};

use super::interval::{wilson, Mean};
use super::judge_prices::judge_prices;
use super::stats::*;
use super::synthesized::SynthesizedReport;
use super::usage::{judge_reports, role_reports, RoleReport};
use super::users::{fidelity_judges_of, UserTally};

/// The report of job `job_id`, with pass^k for each of `ks`.
pub async fn job_stats(
    store: &dyn Store,
    job_id: i64,
    ks: &[u64],
) -> Result<StatsReport, StatsError> {
    let job = store
        .get_job(job_id)
        .await?
        .ok_or(StatsError::NoSuchJob(job_id))?;
    let mut tally = ConversationTally::default();
    let mut users = UserTally::default();
    each_conversation(store, job_id, |c| {
        tally.add(c);
        users.add(c)
    })
    .await?;
    let (conversations, pass_hat_k) = tally.finish(ks);
    let judgments = store.judgments_of_job(job_id).await?;
    let calls = store.judge_calls_of_job(job_id).await?;
    let judging_jobs = judging_jobs(&job, &judgments);
    let fidelity_judges = fidelity_judges(store, &job, &judgments).await?;
    let simulated_user = users.finish(&judgments, &fidelity_judges)?;
    let judges = judge_stats(judgments, &calls)?;
    let usage = usage(store, &job, &calls, &judging_jobs).await?;
    let synthesis = match job.kind {
        JobKind::Synthesis => Some(super::synthesis::synthesis_stats(store, &job).await?),
        JobKind::Generation | JobKind::Judging | JobKind::Import => None,
    };
    let synthesized = SynthesizedReport::of(&synthesized_outcomes(store, &job).await?);
    Ok(StatsReport {
        job: JobInfo {
            id: job.id,
            name: job.name,
            kind: job.kind,
            status: job.status,
        },
        conversations,
        pass_hat_k,
        judges,
        usage,
        simulated_user,
        synthesis,
        synthesized,
    })
}

/// `f` of each of job `job_id`'s stored conversations, in id order, read a
/// page at a time; the first error stops it.
pub async fn each_conversation(
    store: &dyn ConversationStore,
    job_id: i64,
    mut f: impl FnMut(&ConversationRow) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    crate::store::pages::each_stored_conversation(store, job_id, |c| f(&c.conversation)).await
}

/// Per role, judges included: calls, tokens, latency percentiles and cost,
/// priced by the endpoints of the job's stored config, or of the judging
/// job that made the judgments (a judge neither declares costs "unknown").
async fn usage(
    store: &dyn Store,
    job: &crate::store::JobRow,
    calls: &[JudgeCallRow],
    judging_jobs: &[i64],
) -> Result<Vec<RoleReport>, StatsError> {
    let config = crate::config::load::from_snapshot(
        &format!("job {} (stored config)", job.id),
        &job.config_snapshot,
    )
    .ok();
    let summary = store.job_summary(job.id).await?;
    let mut roles = role_reports(&summary, config.as_ref());
    let prices = judge_prices(store, config.as_ref(), judging_jobs).await?;
    let endpoint_of = |name: &str| prices.get(name).cloned();
    roles.extend(judge_reports(calls, &endpoint_of));
    Ok(roles)
}

/// The other jobs whose work made `judgments` of `job` (judging jobs).
fn judging_jobs(job: &crate::store::JobRow, judgments: &[JudgmentRow]) -> Vec<i64> {
    let mut jobs: Vec<i64> = judgments
        .iter()
        .map(|j| j.job_id)
        .filter(|id| *id != job.id)
        .collect();
    jobs.sort_unstable();
    jobs.dedup();
    jobs
}

/// The `user_fidelity` judges among those that judged the job: named so in
/// the stored config of the job that made the judgments (this job, or a
/// judging job).
async fn fidelity_judges(
    store: &dyn JobStore,
    job: &crate::store::JobRow,
    judgments: &[JudgmentRow],
) -> Result<Vec<String>, crate::store::StoreError> {
    let mut names = fidelity_judges_of(job);
    let mut jobs: Vec<i64> = judgments.iter().map(|j| j.job_id).collect();
    jobs.sort_unstable();
    jobs.dedup();
    for id in jobs.into_iter().filter(|id| *id != job.id) {
        if let Some(row) = store.get_job(id).await? {
            names.extend(fidelity_judges_of(&row));
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// What the report needs of the conversations, gathered one at a time.
#[derive(Debug, Default)]
pub struct ConversationTally {
    total: u64,
    rewards: Vec<f64>,
    components: BTreeMap<String, Vec<f64>>,
    /// reason → (count, rewards of the scored ones)
    terminations: BTreeMap<String, (u64, Vec<f64>)>,
    /// scenario → (trials, successes)
    scenarios: BTreeMap<String, (u64, u64)>,
    /// scenario → its rewards, in id order: its rollout group.
    group_rewards: BTreeMap<String, Vec<f64>>,
    /// The policy's warning → the conversations it was left on.
    warnings: BTreeMap<String, u64>,
    /// model → conversations, for the policy and the user.
    policy_models: BTreeMap<String, u64>,
    user_models: BTreeMap<String, u64>,
}

impl ConversationTally {
    pub fn add(&mut self, c: &ConversationRow) {
        self.total += 1;
        if let Some(warning) = c
            .metadata
            .get(crate::sim::policy::WARNING_KEY)
            .and_then(serde_json::Value::as_str)
        {
            *self.warnings.entry(warning.to_string()).or_default() += 1;
        }
        *self
            .policy_models
            .entry(c.policy_model.trim().to_string())
            .or_default() += 1;
        *self
            .user_models
            .entry(c.user_model.trim().to_string())
            .or_default() += 1;
        let termination = self.terminations.entry(c.termination.clone()).or_default();
        termination.0 += 1;
        if let Some(parts) = c.reward_breakdown.as_object() {
            for (component, part) in parts {
                if let Some(score) = part.get("score").and_then(serde_json::Value::as_f64) {
                    self.components
                        .entry(component.clone())
                        .or_default()
                        .push(score);
                }
            }
        }
        let Some(reward) = c.reward else { return };
        self.rewards.push(reward);
        termination.1.push(reward);
        let trials = self.scenarios.entry(c.scenario_id.clone()).or_default();
        trials.0 += 1;
        trials.1 += u64::from(reward >= SUCCESS_REWARD);
        self.group_rewards
            .entry(c.scenario_id.clone())
            .or_default()
            .push(reward);
    }

    pub fn finish(self, ks: &[u64]) -> (ConversationStats, PassHatK) {
        let mut terminations: Vec<TerminationStats> = self
            .terminations
            .into_iter()
            .map(|(reason, (count, rewards))| TerminationStats {
                reason,
                count,
                scored: rewards.len() as u64,
                mean_reward: Mean::of_unbounded(&rewards).map(|m| m.mean),
            })
            .collect();
        // Stable: equal counts stay in name order.
        terminations.sort_by_key(|t| std::cmp::Reverse(t.count));
        let components = self
            .components
            .into_iter()
            .filter_map(|(component, scores)| {
                Mean::of_unit(&scores).map(|score| ComponentStats { component, score })
            })
            .collect();
        let scenarios: Vec<ScenarioTrials> = self
            .scenarios
            .into_iter()
            .map(|(scenario, (n, successes))| ScenarioTrials {
                scenario,
                n,
                successes,
            })
            .collect();
        let pass_hat_k = pass_hat_k_report(scenarios, ks);
        let groups = RolloutGroups::of(self.group_rewards.into_iter().flat_map(
            |(scenario, rewards)| rewards.into_iter().map(move |r| (scenario.clone(), r)),
        ))
        .counts();
        let mut warnings: Vec<WarningCount> = self
            .warnings
            .into_iter()
            .map(|(warning, conversations)| WarningCount {
                warning,
                conversations,
            })
            .collect();
        warnings.sort_by_key(|w| std::cmp::Reverse(w.conversations));
        let split = |mut models: BTreeMap<String, u64>| {
            let unrecorded = models.remove("").unwrap_or(0);
            (models.into_iter().collect::<Vec<_>>(), unrecorded)
        };
        let (policy, policy_unrecorded) = split(self.policy_models);
        let (user, user_unrecorded) = split(self.user_models);
        let stats = ConversationStats {
            total: self.total,
            scored: self.rewards.len() as u64,
            reward: Mean::of_unit(&self.rewards),
            components,
            terminations,
            groups,
            warnings,
            models: super::stats::Models {
                policy,
                user,
                policy_unrecorded,
                user_unrecorded,
            },
        };
        (stats, pass_hat_k)
    }
}

/// pass^k for each k over these scenarios' trials.
pub fn pass_hat_k_report(scenarios: Vec<ScenarioTrials>, ks: &[u64]) -> PassHatK {
    let trials: Vec<Trials> = scenarios
        .iter()
        .map(|s| Trials {
            n: s.n,
            successes: s.successes,
        })
        .collect();
    let values = ks
        .iter()
        .map(|&k| PassHatKValue {
            k,
            value: pass_hat_k(&trials, k),
            scenarios: trials.iter().filter(|t| k > 0 && t.n >= k).count() as u64,
        })
        .collect();
    PassHatK {
        success_reward: SUCCESS_REWARD,
        scenarios,
        values,
    }
}

/// Per judge name, from the judgments of a job's conversations and the calls
/// behind them.
pub fn judge_stats(
    judgments: Vec<JudgmentRow>,
    calls: &[JudgeCallRow],
) -> Result<Vec<JudgeStats>, CorruptJudgment> {
    #[derive(Default)]
    struct Gathered {
        ok: u64,
        unparseable: u64,
        failed: u64,
        scores: Vec<f64>,
        preferences: Vec<Preference>,
        swap_flags: Vec<Option<bool>>,
        first_shown: Vec<Preference>,
        assertions: (u64, u64, u64),
        equivalence: (u64, u64),
    }
    let mut judges: BTreeMap<String, Gathered> = BTreeMap::new();
    // The calls that count: those of `ok` pairwise judgments.
    let mut pairwise_keys: HashMap<(&str, i64, Option<i64>), String> = HashMap::new();
    let judgments = newest_judgments(judgments);
    for row in &judgments {
        let g = judges.entry(row.judge_name.clone()).or_default();
        let Some(verdict) = ok_verdict(row)? else {
            if row.status == "unparseable" {
                g.unparseable += 1;
            } else {
                g.failed += 1;
            }
            continue;
        };
        g.ok += 1;
        match verdict {
            Verdict::Score { score } => g.scores.push(score),
            Verdict::Preference { preference } => {
                g.preferences.push(preference);
                g.swap_flags.push(row.consistent);
                pairwise_keys.insert(
                    (&row.judge_hash, row.conversation_a, row.conversation_b),
                    row.judge_name.clone(),
                );
            }
            Verdict::Assertions { met } => {
                g.assertions.0 += 1;
                g.assertions.1 += met.len() as u64;
                g.assertions.2 += met.iter().filter(|m| **m).count() as u64;
            }
            Verdict::Equivalence { equal } => {
                g.equivalence.0 += 1;
                g.equivalence.1 += u64::from(equal);
            }
        }
    }
    for call in calls {
        let key = (
            call.judge_hash.as_str(),
            call.conversation_a,
            call.conversation_b,
        );
        let Some(judge) = pairwise_keys.get(&key) else {
            continue;
        };
        let order = Order::parse(&call.call.order);
        if call.call.status != "ok" || !matches!(order, Some(Order::Ab | Order::Ba)) {
            continue;
        }
        let Some(parsed) = call.call.parsed.clone() else {
            continue;
        };
        let verdict: Verdict = serde_json::from_value(parsed).map_err(|e| CorruptJudgment {
            judgment: call.id,
            judge: call.judge_name.clone(),
            message: format!(
                "call {} has a parsed verdict that does not read: {e}",
                call.id
            ),
        })?;
        if let (Some(preference), Some(g)) = (verdict.preference(), judges.get_mut(judge)) {
            // In the call's own order: A is whichever answer it showed first.
            g.first_shown.push(preference);
        }
    }

    Ok(judges
        .into_iter()
        .map(|(judge, g)| {
            let pointwise = Mean::of_unbounded(&g.scores).map(|score| PointwiseStats {
                pass_rate: pass_rate(&g.scores),
                score,
            });
            let pairwise =
                win_rate(&g.preferences, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED).map(|win_rate| {
                    let swap_checked = g.swap_flags.iter().flatten().count() as u64;
                    let consistent = g.swap_flags.iter().flatten().filter(|f| **f).count() as u64;
                    let decided = g
                        .first_shown
                        .iter()
                        .filter(|p| **p != Preference::Tie)
                        .count() as u64;
                    let first = g
                        .first_shown
                        .iter()
                        .filter(|p| **p == Preference::A)
                        .count() as u64;
                    PairwiseStats {
                        tie_rate: win_rate.counts.tie_rate().unwrap_or(0.0),
                        win_rate,
                        swap_checked,
                        consistent,
                        position_consistency: position_consistency(g.swap_flags.iter().copied()),
                        decided_calls: decided,
                        first_position_wins: first,
                        first_position_rate: first_position_rate(&g.first_shown),
                    }
                });
            let (judgments, assertions, met) = g.assertions;
            let assertions = (judgments > 0).then(|| AssertionStats {
                judgments,
                assertions,
                met,
                share_met: (assertions > 0).then(|| met as f64 / assertions as f64),
            });
            let (judgments, equal) = g.equivalence;
            let equivalence = (judgments > 0).then(|| EquivalenceStats {
                judgments,
                equal,
                share_equal: equal as f64 / judgments as f64,
            });
            JudgeStats {
                judge,
                ok: g.ok,
                unparseable: g.unparseable,
                failed: g.failed,
                pointwise,
                pairwise,
                assertions,
                equivalence,
            }
        })
        .collect())
}

/// The pass rate of a pass/fail judge; `None` for a rubric judge. The store
/// keeps verdicts, not judge configs, so a judge whose scores are all 0 or 1
/// reads as pass/fail (the mean score is reported as well).
fn pass_rate(scores: &[f64]) -> Option<PassRate> {
    if !scores.iter().all(|s| *s == 0.0 || *s == 1.0) {
        return None;
    }
    let passed = scores.iter().filter(|s| **s == 1.0).count() as u64;
    let judged = scores.len() as u64;
    Some(PassRate {
        passed,
        judged,
        rate: passed as f64 / judged as f64,
        ci95: wilson(passed, judged),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::store::{JobKind, JobStatus, NewJudgeCall};
    use Preference::{Tie, A, B};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    fn conversation(
        id: i64,
        scenario: &str,
        termination: &str,
        reward: Option<f64>,
    ) -> ConversationRow {
        ConversationRow {
            id,
            job_id: 1,
            item_id: id,
            item_key: format!("{scenario}/p/{id}"),
            scenario_id: scenario.into(),
            persona_id: "p".into(),
            sample: id,
            seed: 0,
            policy_model: "m".into(),
            user_model: "u".into(),
            termination: termination.into(),
            reward,
            reward_breakdown: reward.map_or(Value::Null, |r| {
                json!({"db": {"score": r, "detail": ""}, "communicate": {"score": 1.0, "detail": "all said"}})
            }),
            metadata: json!({}),
            tools: json!([]),
            started_at: 0,
            finished_at: 0,
            user_checks: None,
        }
    }

    fn judgment(
        id: i64,
        judge: &str,
        a: i64,
        b: Option<i64>,
        status: &str,
        verdict: Option<Value>,
    ) -> JudgmentRow {
        JudgmentRow {
            id,
            job_id: 1,
            judge_name: judge.into(),
            judge_hash: format!("{judge}-hash"),
            conversation_a: a,
            conversation_b: b,
            status: status.into(),
            score: verdict
                .as_ref()
                .and_then(|v| v.get("score"))
                .and_then(Value::as_f64),
            verdict,
            consistent: None,
            reason: None,
            updated_at: id,
        }
    }

    fn preference(p: Preference) -> Option<Value> {
        Some(json!({"kind": "preference", "preference": p.as_str()}))
    }

    fn call(
        id: i64,
        judge: &str,
        a: i64,
        b: Option<i64>,
        order: &str,
        parsed: Option<Preference>,
    ) -> JudgeCallRow {
        JudgeCallRow {
            id,
            judge_name: judge.into(),
            judge_hash: format!("{judge}-hash"),
            conversation_a: a,
            conversation_b: b,
            call: NewJudgeCall {
                order: order.into(),
                sample: 0,
                prompt_hash: String::new(),
                model: "j".into(),
                raw_output: String::new(),
                parsed: parsed.and_then(preference),
                status: if parsed.is_some() {
                    "ok"
                } else {
                    "unparseable"
                }
                .into(),
                error: None,
                prompt_tokens: 0,
                completion_tokens: 0,
                latency_ms: 0,
                batch: false,
            },
            created_at: 0,
        }
    }

    #[test]
    fn pass_hat_k_counts_full_rewards_per_scenario_and_leaves_out_unscored_conversations() {
        let mut tally = ConversationTally::default();
        // s1: rewards 1, 1, 0.5 → n 3, c 2; s2: 1, 1 → n 2, c 2; s3: 0.9999999999 → n 1, c 1
        // (within 1e-9 of 1); an unscored conversation of s3 is no trial.
        for (id, scenario, reward) in [
            (1, "s1", Some(1.0)),
            (2, "s1", Some(1.0)),
            (3, "s1", Some(0.5)),
            (4, "s2", Some(1.0)),
            (5, "s2", Some(1.0)),
            (6, "s3", Some(1.0 - 1e-10)),
            (7, "s3", None),
        ] {
            tally.add(&conversation(id, scenario, "user_stop", reward));
        }
        let (stats, pass) = tally.finish(&[1, 2, 3]);
        assert_eq!((stats.total, stats.scored), (7, 6));
        assert_eq!(
            pass.scenarios,
            vec![
                ScenarioTrials {
                    scenario: "s1".into(),
                    n: 3,
                    successes: 2
                },
                ScenarioTrials {
                    scenario: "s2".into(),
                    n: 2,
                    successes: 2
                },
                ScenarioTrials {
                    scenario: "s3".into(),
                    n: 1,
                    successes: 1
                },
            ]
        );
        // k = 1: (2/3 + 1 + 1) / 3 = 8/9.
        // k = 2: s3 has one trial, left out: (C(2,2)/C(3,2) + 1) / 2 = (1/3 + 1) / 2 = 2/3.
        // k = 3: only s1: C(2,3)/C(3,3) = 0.
        let values: Vec<(u64, Option<f64>, u64)> = pass
            .values
            .iter()
            .map(|v| (v.k, v.value, v.scenarios))
            .collect();
        assert_eq!(values[0].2, 3);
        assert!(close(values[0].1.unwrap(), 8.0 / 9.0));
        assert_eq!(values[1].2, 2);
        assert!(close(values[1].1.unwrap(), 2.0 / 3.0));
        assert_eq!((values[2].1, values[2].2), (Some(0.0), 1));
    }

    #[test]
    fn a_k_no_scenario_reaches_is_undefined_not_zero() {
        let pass = pass_hat_k_report(
            vec![ScenarioTrials {
                scenario: "s".into(),
                n: 2,
                successes: 2,
            }],
            &[4],
        );
        assert_eq!(pass.values[0].value, None);
        assert_eq!(pass.values[0].scenarios, 0);
        let report = StatsReport {
            job: JobInfo {
                id: 1,
                name: "j".into(),
                kind: JobKind::Generation,
                status: JobStatus::Done,
            },
            conversations: ConversationStats::default(),
            pass_hat_k: pass,
            judges: vec![],
            usage: vec![],
            simulated_user: Default::default(),
            synthesis: None,
            synthesized: None,
        }
        .to_string();
        let row: Vec<&str> = report
            .lines()
            .find(|l| l.trim_start().starts_with("4 "))
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(row, vec!["4", "n/a", "0"], "{report}");
    }

    #[test]
    fn rewards_are_broken_down_by_component_and_termination() {
        let mut tally = ConversationTally::default();
        tally.add(&conversation(1, "s", "user_stop", Some(1.0)));
        tally.add(&conversation(2, "s", "user_stop", Some(0.0)));
        tally.add(&conversation(3, "s", "max_turns", Some(0.5)));
        tally.add(&conversation(4, "s", "policy_error", None));
        let (stats, _) = tally.finish(&[1]);
        let reward = stats.reward.unwrap();
        assert_eq!(reward.n, 3);
        assert!(close(reward.mean, 0.5));
        let parts: Vec<(&str, usize, f64)> = stats
            .components
            .iter()
            .map(|c| (c.component.as_str(), c.score.n, c.score.mean))
            .collect();
        assert_eq!(parts, vec![("communicate", 3, 1.0), ("db", 3, 0.5)]);
        let reasons: Vec<(&str, u64, u64, Option<f64>)> = stats
            .terminations
            .iter()
            .map(|t| (t.reason.as_str(), t.count, t.scored, t.mean_reward))
            .collect();
        assert_eq!(
            reasons,
            vec![
                ("user_stop", 2, 2, Some(0.5)),
                ("max_turns", 1, 1, Some(0.5)),
                ("policy_error", 1, 0, None),
            ]
        );
    }

    #[test]
    fn only_ok_judgments_count_and_the_others_are_counted_apart() {
        let score = |s: f64| Some(json!({"kind": "score", "score": s}));
        let judgments = vec![
            judgment(1, "helpful", 10, None, "ok", score(8.0)),
            judgment(2, "helpful", 11, None, "ok", score(6.0)),
            judgment(3, "helpful", 12, None, "unparseable", None),
            judgment(4, "helpful", 13, None, "failed", None),
            judgment(5, "fidelity", 10, None, "ok", score(1.0)),
            judgment(6, "fidelity", 11, None, "ok", score(0.0)),
            judgment(7, "fidelity", 12, None, "ok", score(1.0)),
            judgment(8, "fidelity", 13, None, "ok", score(1.0)),
        ];
        let stats = judge_stats(judgments, &[]).unwrap();
        let fidelity = &stats[0];
        assert_eq!(fidelity.judge, "fidelity");
        let pass = fidelity
            .pointwise
            .as_ref()
            .unwrap()
            .pass_rate
            .as_ref()
            .unwrap();
        assert_eq!((pass.passed, pass.judged, pass.rate), (3, 4, 0.75));
        let helpful = &stats[1];
        assert_eq!((helpful.ok, helpful.unparseable, helpful.failed), (2, 1, 1));
        let p = helpful.pointwise.as_ref().unwrap();
        assert_eq!((p.score.n, p.score.mean), (2, 7.0));
        assert_eq!(p.pass_rate, None);
        assert!(helpful.pairwise.is_none() && helpful.assertions.is_none());
    }

    #[test]
    fn a_judge_scoring_only_zeros_and_ones_reads_as_pass_fail_even_when_all_pass() {
        let score = |s: f64| Some(json!({"kind": "score", "score": s}));
        let judgments = vec![
            judgment(1, "fidelity", 10, None, "ok", score(1.0)),
            judgment(2, "fidelity", 11, None, "ok", score(1.0)),
        ];
        let stats = judge_stats(judgments, &[]).unwrap();
        let pass = stats[0].pointwise.as_ref().unwrap().pass_rate.clone();
        assert_eq!(
            pass,
            Some(PassRate {
                passed: 2,
                judged: 2,
                rate: 1.0,
                ci95: wilson(2, 2),
            })
        );
    }

    #[test]
    fn pairwise_judgments_give_win_rate_consistency_and_position_bias() {
        // Four ok judgments of A vs B: A, A, tie (inconsistent), B; one failed.
        let mut judgments = vec![
            judgment(1, "pref", 10, Some(20), "ok", preference(A)),
            judgment(2, "pref", 11, Some(21), "ok", preference(A)),
            judgment(3, "pref", 12, Some(22), "ok", preference(Tie)),
            judgment(4, "pref", 13, Some(23), "ok", preference(B)),
            judgment(5, "pref", 14, Some(24), "failed", None),
        ];
        judgments[0].consistent = Some(true);
        judgments[1].consistent = Some(true);
        judgments[2].consistent = Some(false);
        // judgment 4 was not swap-checked.
        let calls = vec![
            // 1: A first won (ab: A), then A shown second won (ba: B) → consistent.
            call(1, "pref", 10, Some(20), "ab", Some(A)),
            call(2, "pref", 10, Some(20), "ba", Some(B)),
            call(3, "pref", 11, Some(21), "ab", Some(A)),
            call(4, "pref", 11, Some(21), "ba", Some(B)),
            // 3: first shown won both times → inconsistent, position-biased.
            call(5, "pref", 12, Some(22), "ab", Some(A)),
            call(6, "pref", 12, Some(22), "ba", Some(A)),
            call(7, "pref", 13, Some(23), "ab", Some(Tie)),
            // The failed judgment's calls do not count, nor do unparseable calls.
            call(8, "pref", 14, Some(24), "ab", Some(A)),
            call(9, "pref", 13, Some(23), "ba", None),
        ];
        let stats = judge_stats(judgments, &calls).unwrap();
        let j = &stats[0];
        assert_eq!((j.ok, j.failed), (4, 1));
        let p = j.pairwise.as_ref().unwrap();
        let counts = p.win_rate.counts;
        assert_eq!((counts.wins, counts.ties, counts.losses), (2, 1, 1));
        // (2 + 0.5) / 4
        assert!(close(p.win_rate.rate, 0.625));
        assert!(close(p.tie_rate, 0.25));
        // 2 of the 3 swap-checked agreed.
        assert_eq!((p.consistent, p.swap_checked), (2, 3));
        assert!(close(p.position_consistency.unwrap(), 2.0 / 3.0));
        // Decided calls 1–6 (the tie is left out): first shown won in 1, 3, 5, 6 → 4 of 6.
        assert_eq!((p.first_position_wins, p.decided_calls), (4, 6));
        assert!(close(p.first_position_rate.unwrap(), 4.0 / 6.0));
    }

    #[test]
    fn assertions_and_equivalence_give_shares() {
        let judgments = vec![
            judgment(
                1,
                "asserts",
                10,
                None,
                "ok",
                Some(json!({"kind": "assertions", "met": [true, false, true]})),
            ),
            judgment(
                2,
                "asserts",
                11,
                None,
                "ok",
                Some(json!({"kind": "assertions", "met": [true]})),
            ),
            judgment(
                3,
                "equiv",
                10,
                None,
                "ok",
                Some(json!({"kind": "equivalence", "equal": true})),
            ),
            judgment(
                4,
                "equiv",
                11,
                None,
                "ok",
                Some(json!({"kind": "equivalence", "equal": false})),
            ),
            judgment(5, "equiv", 12, None, "unparseable", None),
        ];
        let stats = judge_stats(judgments, &[]).unwrap();
        let a = stats[0].assertions.as_ref().unwrap();
        assert_eq!(
            (a.judgments, a.assertions, a.met, a.share_met),
            (2, 4, 3, Some(0.75))
        );
        let e = stats[1].equivalence.as_ref().unwrap();
        assert_eq!((e.judgments, e.equal, e.share_equal), (2, 1, 0.5));
        assert_eq!(stats[1].unparseable, 1);
    }

    #[test]
    fn a_judge_with_no_ok_judgments_reports_n_a_not_zero() {
        let judgments = vec![judgment(1, "pref", 10, Some(20), "unparseable", None)];
        let stats = judge_stats(judgments, &[]).unwrap();
        assert!(stats[0].pairwise.is_none() && stats[0].pointwise.is_none());
        let report = StatsReport {
            job: JobInfo {
                id: 1,
                name: "j".into(),
                kind: JobKind::Generation,
                status: JobStatus::Done,
            },
            conversations: ConversationStats::default(),
            pass_hat_k: pass_hat_k_report(vec![], &[1]),
            judges: stats,
            usage: vec![],
            simulated_user: Default::default(),
            synthesis: None,
            synthesized: None,
        };
        let text = report.to_string();
        assert!(text.contains("pref: no ok judgments"), "{text}");
        assert!(text.contains("n/a (nothing scored)"), "{text}");
    }
}
