//! `sparring compare-users JOB_A JOB_B`: a simulator A/B. Two jobs that ran
//! the same scenarios, personas and samples with two user prompts or user
//! models are matched conversation by conversation (scenario / persona /
//! sample); per flag of the deterministic checks, the rate in each and the
//! paired difference B − A with a 95% interval; then the reward and pass^k
//! that came with them.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::store::{ConversationRow, ConversationStore, JobStore, Store, StoreError};
use crate::user_checks::{Outcome, UserChecks, UserFlag};

use super::gather::pass_hat_k_report;
use super::interval::Mean;
use super::stats::{ScenarioTrials, StatsError, SUCCESS_REWARD};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserComparison {
    pub a: ComparedJob,
    pub b: ComparedJob,
    /// Conversations matched by scenario, persona and sample.
    pub matched: u64,
    pub only_a: u64,
    pub only_b: u64,
    /// Matched pairs whose seeds differ (jobs with different seeds): their
    /// users and policies saw different randomness.
    pub seed_mismatches: u64,
    /// Per flag (and `any`): over pairs where both ran the check.
    pub flags: Vec<FlagDifference>,
    /// Over pairs where both are scored.
    pub reward: Option<Difference>,
    pub pass_hat_k: Vec<PassHatKDifference>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedJob {
    pub id: i64,
    pub name: String,
    /// The user models its conversations were made with.
    pub user_models: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlagDifference {
    pub flag: String,
    /// Pairs where both conversations were checked for it.
    pub pairs: u64,
    pub a_flagged: u64,
    pub b_flagged: u64,
    pub a_rate: Option<Mean>,
    pub b_rate: Option<Mean>,
    /// B − A over the pairs: the mean of the paired differences (−1, 0 or
    /// 1) with its normal interval, clamped to [−1, 1].
    pub difference: Option<Mean>,
}

/// A paired mean difference B − A.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub pairs: u64,
    pub a_mean: f64,
    pub b_mean: f64,
    pub difference: Mean,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassHatKDifference {
    pub k: u64,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// B − A; `None` unless both are defined.
    pub difference: Option<f64>,
    /// Scenarios with at least k scored pairs.
    pub scenarios: u64,
}

const PAGE: u32 = 500;

async fn rows_of(
    store: &dyn ConversationStore,
    job_id: i64,
) -> Result<Vec<ConversationRow>, StoreError> {
    let mut rows = Vec::new();
    let mut after = 0;
    loop {
        let page = store.conversations_page(job_id, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.conversation.id;
        rows.extend(page.into_iter().map(|c| c.conversation));
    }
    Ok(rows)
}

async fn compared_job(
    store: &dyn JobStore,
    id: i64,
    rows: &[ConversationRow],
) -> Result<ComparedJob, StatsError> {
    let job = store.get_job(id).await?.ok_or(StatsError::NoSuchJob(id))?;
    let mut user_models: Vec<String> = rows.iter().map(|r| r.user_model.clone()).collect();
    user_models.sort();
    user_models.dedup();
    Ok(ComparedJob {
        id,
        name: job.name,
        user_models,
    })
}

/// Compare job `a`'s simulated users with job `b`'s, pass^k for each of `ks`.
pub async fn compare_users(
    store: &dyn Store,
    a: i64,
    b: i64,
    ks: &[u64],
) -> Result<UserComparison, StatsError> {
    let a_rows = rows_of(store, a).await?;
    let b_rows = rows_of(store, b).await?;
    let a_job = compared_job(store, a, &a_rows).await?;
    let b_job = compared_job(store, b, &b_rows).await?;
    compare(a_job, b_job, &a_rows, &b_rows, ks)
}

type Key<'a> = (&'a str, &'a str, i64);

fn key(r: &ConversationRow) -> Key<'_> {
    (&r.scenario_id, &r.persona_id, r.sample)
}

/// The comparison of two jobs' conversations (pure, for tests).
pub fn compare(
    a_job: ComparedJob,
    b_job: ComparedJob,
    a_rows: &[ConversationRow],
    b_rows: &[ConversationRow],
    ks: &[u64],
) -> Result<UserComparison, StatsError> {
    let b_by_key: HashMap<Key, &ConversationRow> = b_rows.iter().map(|r| (key(r), r)).collect();
    let pairs: Vec<(&ConversationRow, &ConversationRow)> = a_rows
        .iter()
        .filter_map(|a| b_by_key.get(&key(a)).map(|b| (a, *b)))
        .collect();
    let matched = pairs.len() as u64;
    let checks = |r: &ConversationRow| {
        UserChecks::from_stored(r.user_checks.as_ref())
            .map_err(|e| StoreError::Corrupt(format!("conversation {}: {e}", r.id)))
    };
    let mut checked = Vec::with_capacity(pairs.len());
    for (a, b) in &pairs {
        checked.push((checks(a)?, checks(b)?));
    }
    let mut flags: Vec<FlagDifference> = UserFlag::ALL
        .into_iter()
        .map(|flag| {
            let outcomes = checked.iter().filter_map(|(a, b)| {
                let (a, b) = (a.as_ref()?.outcome(flag), b.as_ref()?.outcome(flag));
                (a != Outcome::Unknown && b != Outcome::Unknown)
                    .then_some((a == Outcome::Flagged, b == Outcome::Flagged))
            });
            flag_difference(flag.as_str(), outcomes)
        })
        .collect();
    let any = checked.iter().filter_map(|(a, b)| {
        Some((
            !a.as_ref()?.flagged().is_empty(),
            !b.as_ref()?.flagged().is_empty(),
        ))
    });
    flags.push(flag_difference("any", any));

    let scored: Vec<(&str, f64, f64)> = pairs
        .iter()
        .filter_map(|(a, b)| Some((a.scenario_id.as_str(), a.reward?, b.reward?)))
        .collect();
    let reward = paired(scored.iter().map(|(_, a, b)| (*a, *b)));
    let trials = |pick: fn(&(&str, f64, f64)) -> f64| {
        let mut by_scenario: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for pair in &scored {
            let t = by_scenario.entry(pair.0.to_string()).or_default();
            t.0 += 1;
            t.1 += u64::from(pick(pair) >= SUCCESS_REWARD);
        }
        by_scenario
            .into_iter()
            .map(|(scenario, (n, successes))| ScenarioTrials {
                scenario,
                n,
                successes,
            })
            .collect::<Vec<_>>()
    };
    let a_pass = pass_hat_k_report(trials(|p| p.1), ks);
    let b_pass = pass_hat_k_report(trials(|p| p.2), ks);
    let pass_hat_k = a_pass
        .values
        .iter()
        .zip(&b_pass.values)
        .map(|(a, b)| PassHatKDifference {
            k: a.k,
            a: a.value,
            b: b.value,
            difference: a.value.zip(b.value).map(|(a, b)| b - a),
            scenarios: a.scenarios,
        })
        .collect();
    let seed_mismatches = pairs.iter().filter(|(a, b)| a.seed != b.seed).count() as u64;
    Ok(UserComparison {
        matched,
        only_a: (a_rows.len() as u64).saturating_sub(matched),
        only_b: (b_rows.len() as u64).saturating_sub(matched),
        seed_mismatches,
        a: a_job,
        b: b_job,
        flags,
        reward,
        pass_hat_k,
    })
}

fn flag_difference(flag: &str, outcomes: impl Iterator<Item = (bool, bool)>) -> FlagDifference {
    let outcomes: Vec<(bool, bool)> = outcomes.collect();
    let n = outcomes.len() as u64;
    let a_flagged = outcomes.iter().filter(|(a, _)| *a).count() as u64;
    let b_flagged = outcomes.iter().filter(|(_, b)| *b).count() as u64;
    let as_number = |x: bool| if x { 1.0 } else { 0.0 };
    FlagDifference {
        flag: flag.to_string(),
        pairs: n,
        a_flagged,
        b_flagged,
        a_rate: Mean::of_share(a_flagged, n),
        b_rate: Mean::of_share(b_flagged, n),
        difference: paired(outcomes.iter().map(|(a, b)| (as_number(*a), as_number(*b))))
            .map(|d| d.difference),
    }
}

/// The paired difference B − A of values in [0, 1]: its mean with the normal
/// interval, clamped to [−1, 1].
fn paired(values: impl Iterator<Item = (f64, f64)>) -> Option<Difference> {
    let values: Vec<(f64, f64)> = values.collect();
    let differences: Vec<f64> = values.iter().map(|(a, b)| b - a).collect();
    let mut difference = Mean::of_unbounded(&differences)?;
    difference.ci95 = difference.ci95.map(|(lo, hi)| (lo.max(-1.0), hi.min(1.0)));
    let n = values.len() as f64;
    Some(Difference {
        pairs: values.len() as u64,
        a_mean: values.iter().map(|(a, _)| a).sum::<f64>() / n,
        b_mean: values.iter().map(|(_, b)| b).sum::<f64>() / n,
        difference,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user_checks::{CheckResult, Evidence, CHECKS_VERSION};

    fn row(id: i64, scenario: &str, reward: f64, premature: bool) -> ConversationRow {
        let evidence = if premature {
            vec![Evidence {
                message: Some(3),
                text: "bye".into(),
                why: "w".into(),
            }]
        } else {
            vec![]
        };
        let checks = UserChecks {
            version: CHECKS_VERSION,
            checks: vec![CheckResult::from_evidence(
                UserFlag::PrematureStop,
                evidence,
            )],
        };
        ConversationRow {
            id,
            job_id: 1,
            item_id: id,
            item_key: String::new(),
            scenario_id: scenario.into(),
            persona_id: "p".into(),
            sample: 0,
            seed: 7,
            policy_model: "m".into(),
            user_model: "u".into(),
            termination: "user_stop".into(),
            reward: Some(reward),
            reward_breakdown: serde_json::Value::Null,
            metadata: serde_json::Value::Null,
            tools: serde_json::Value::Null,
            started_at: 0,
            finished_at: 0,
            user_checks: Some(checks.to_json()),
        }
    }

    fn job(id: i64) -> ComparedJob {
        ComparedJob {
            id,
            name: format!("j{id}"),
            user_models: vec![],
        }
    }

    #[test]
    fn a_premature_user_shows_as_a_flag_difference_and_a_lower_pass_rate() {
        let a = vec![
            row(1, "s1", 1.0, false),
            row(2, "s2", 1.0, false),
            row(3, "s3", 0.0, false),
        ];
        let b = vec![
            row(11, "s1", 0.0, true),
            row(12, "s2", 1.0, false),
            row(13, "s3", 0.0, true),
        ];
        let c = compare(job(1), job(2), &a, &b, &[1]).unwrap();
        assert_eq!(
            (c.matched, c.only_a, c.only_b, c.seed_mismatches),
            (3, 0, 0, 0)
        );
        let premature = &c.flags[0];
        assert_eq!(premature.flag, "premature_stop");
        assert_eq!(
            (premature.pairs, premature.a_flagged, premature.b_flagged),
            (3, 0, 2)
        );
        let d = premature.difference.unwrap();
        assert!((d.mean - 2.0 / 3.0).abs() < 1e-9);
        let (lo, hi) = d.ci95.unwrap();
        assert!(lo >= -1.0 && hi <= 1.0 && lo < d.mean && d.mean < hi);
        // Checks other than premature_stop were not stored: no pairs.
        assert_eq!(c.flags[1].pairs, 0);
        assert_eq!(c.flags.last().unwrap().flag, "any");
        let reward = c.reward.unwrap();
        assert!((reward.difference.mean + 1.0 / 3.0).abs() < 1e-9);
        let pass1 = &c.pass_hat_k[0];
        assert_eq!((pass1.a, pass1.b), (Some(2.0 / 3.0), Some(1.0 / 3.0)));
        assert!((pass1.difference.unwrap() + 1.0 / 3.0).abs() < 1e-9);
    }
}
