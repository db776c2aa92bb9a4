//! The "simulated user" section of `sparring stats`: per flag of the
//! deterministic checks (`user_checks`), the share of checked conversations it
//! fired on with a 95% Wilson interval; the share with any flag by persona
//! and by scenario; and how a `user_fidelity` judge agrees with the checks
//! where both looked at a conversation.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::export::{newest_judgments, ok_verdict, CorruptJudgment};
use crate::store::{ConversationRow, JobRow, JudgmentRow, StoreError};
use crate::user_checks::{Outcome, UserChecks, UserFlag};

use super::interval::Mean;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UserReport {
    /// Conversations with stored checks.
    pub checked: u64,
    /// Conversations stored before the checks existed (left out below).
    pub unchecked: u64,
    /// Of the checked ones, those an older version of the checks made (their
    /// flags are that version's: `sparring recheck` makes them again).
    pub older_checks: u64,
    /// Checked conversations with at least one flag.
    pub any_flag: Option<FlagRate>,
    /// In [`UserFlag::ALL`] order.
    pub flags: Vec<FlagRate>,
    /// By persona id, then by scenario id: the share with any flag.
    pub by_persona: Vec<GroupRate>,
    pub by_scenario: Vec<GroupRate>,
    /// Per `user_fidelity` judge with `ok` judgments of checked conversations.
    pub judge_agreement: Vec<JudgeAgreement>,
}

/// How often one flag fired, over the conversations it could run on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlagRate {
    pub flag: String,
    pub flagged: u64,
    /// Conversations where the check ran (flagged or clear).
    pub known: u64,
    /// Conversations where it could not run (e.g. no gold actions).
    pub unknown: u64,
    /// flagged / known with its Wilson interval; `None` when none is known.
    pub rate: Option<Mean>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupRate {
    pub group: String,
    pub checked: u64,
    /// Of those, with at least one flag.
    pub flagged: u64,
    pub rate: Option<Mean>,
    /// How many conversations each flag fired on (only flags that fired).
    pub flags: BTreeMap<String, u64>,
}

/// A pass/fail judge of the simulated user (`user_fidelity`) against the
/// deterministic checks, over the conversations both looked at: the judge
/// fails a conversation (score < 0.5), the checks flag it (any flag).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeAgreement {
    pub judge: String,
    pub conversations: u64,
    pub both_flag: u64,
    pub judge_only: u64,
    pub checks_only: u64,
    pub neither: u64,
    /// (both_flag + neither) / conversations, with its Wilson interval.
    pub agreement: Option<Mean>,
    /// Cohen's kappa: agreement beyond chance; `None` when chance explains
    /// everything (both always say the same one thing).
    pub kappa: Option<f64>,
}

/// What the section needs of the conversations, gathered one at a time.
#[derive(Debug, Default)]
pub struct UserTally {
    unchecked: u64,
    older_checks: u64,
    counts: FlagCounts,
    by_persona: BTreeMap<String, Group>,
    by_scenario: BTreeMap<String, Group>,
    /// conversation id → whether any flag fired
    flagged_ids: HashMap<i64, bool>,
}

#[derive(Debug, Default)]
struct Group {
    checked: u64,
    flagged: u64,
    flags: BTreeMap<String, u64>,
}

impl Group {
    fn add(&mut self, flagged: &[UserFlag]) {
        self.checked += 1;
        self.flagged += u64::from(!flagged.is_empty());
        for f in flagged {
            *self.flags.entry(f.as_str().to_string()).or_default() += 1;
        }
    }
}

/// How often each flag fired over some conversations' checks (a job's, or
/// a stratum's), and how many had any flag.
#[derive(Debug, Default)]
pub struct FlagCounts {
    /// Conversations with stored checks.
    pub checked: u64,
    any: u64,
    /// (flagged, known, unknown), in [`UserFlag::ALL`] order.
    flags: [(u64, u64, u64); UserFlag::ALL.len()],
}

impl FlagCounts {
    /// One conversation's outcomes, in [`UserFlag::ALL`] order.
    pub fn add(&mut self, outcomes: [Outcome; UserFlag::ALL.len()]) {
        self.checked += 1;
        for (counts, outcome) in self.flags.iter_mut().zip(outcomes) {
            match outcome {
                Outcome::Flagged => {
                    counts.0 += 1;
                    counts.1 += 1;
                }
                Outcome::Clear => counts.1 += 1,
                Outcome::Unknown => counts.2 += 1,
            }
        }
        self.any += u64::from(outcomes.contains(&Outcome::Flagged));
    }

    /// The share with any flag; `None` when none is checked.
    pub fn any_flag(&self) -> Option<FlagRate> {
        (self.checked > 0).then(|| FlagRate {
            flag: "any".into(),
            flagged: self.any,
            known: self.checked,
            unknown: 0,
            rate: Mean::of_share(self.any, self.checked),
        })
    }

    /// Each flag's rate, in [`UserFlag::ALL`] order.
    pub fn rates(&self) -> Vec<FlagRate> {
        UserFlag::ALL
            .iter()
            .zip(self.flags)
            .map(|(flag, (flagged, known, unknown))| FlagRate {
                flag: flag.as_str().to_string(),
                flagged,
                known,
                unknown,
                rate: Mean::of_share(flagged, known),
            })
            .collect()
    }
}

impl UserTally {
    pub fn add(&mut self, c: &ConversationRow) -> Result<(), StoreError> {
        let checks = UserChecks::from_stored(c.user_checks.as_ref())
            .map_err(|e| StoreError::Corrupt(format!("conversation {}: {e}", c.id)))?;
        let Some(checks) = checks else {
            self.unchecked += 1;
            return Ok(());
        };
        self.older_checks += u64::from(!checks.is_current());
        self.counts
            .add(UserFlag::ALL.map(|flag| checks.outcome(flag)));
        let flagged = checks.flagged();
        self.by_persona
            .entry(c.persona_id.clone())
            .or_default()
            .add(&flagged);
        self.by_scenario
            .entry(c.scenario_id.clone())
            .or_default()
            .add(&flagged);
        self.flagged_ids.insert(c.id, !flagged.is_empty());
        Ok(())
    }

    /// The section, with the agreement of the judges named in
    /// `fidelity_judges` from `judgments` (a job's).
    pub fn finish(
        self,
        judgments: &[JudgmentRow],
        fidelity_judges: &[String],
    ) -> Result<UserReport, CorruptJudgment> {
        let judge_agreement = agreement(&self.flagged_ids, judgments, fidelity_judges)?;
        let groups = |groups: BTreeMap<String, Group>| -> Vec<GroupRate> {
            groups
                .into_iter()
                .map(|(group, g)| GroupRate {
                    group,
                    checked: g.checked,
                    flagged: g.flagged,
                    rate: Mean::of_share(g.flagged, g.checked),
                    flags: g.flags,
                })
                .collect()
        };
        Ok(UserReport {
            checked: self.counts.checked,
            unchecked: self.unchecked,
            older_checks: self.older_checks,
            any_flag: self.counts.any_flag(),
            flags: self.counts.rates(),
            by_persona: groups(self.by_persona),
            by_scenario: groups(self.by_scenario),
            judge_agreement,
        })
    }
}

fn agreement(
    flagged: &HashMap<i64, bool>,
    judgments: &[JudgmentRow],
    fidelity_judges: &[String],
) -> Result<Vec<JudgeAgreement>, CorruptJudgment> {
    // judge → [both, judge only, checks only, neither]
    let mut tables: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    for row in newest_judgments(judgments.to_vec()) {
        if row.conversation_b.is_some() || !fidelity_judges.contains(&row.judge_name) {
            continue;
        }
        let (Some(score), Some(&checks_flag)) = (
            ok_verdict(&row)?.and_then(|v| v.score()),
            flagged.get(&row.conversation_a),
        ) else {
            continue;
        };
        let judge_flag = score < 0.5;
        let cell = match (judge_flag, checks_flag) {
            (true, true) => 0,
            (true, false) => 1,
            (false, true) => 2,
            (false, false) => 3,
        };
        tables.entry(row.judge_name.clone()).or_default()[cell] += 1;
    }
    Ok(tables
        .into_iter()
        .map(|(judge, [both, judge_only, checks_only, neither])| {
            let n = both + judge_only + checks_only + neither;
            JudgeAgreement {
                judge,
                conversations: n,
                both_flag: both,
                judge_only,
                checks_only,
                neither,
                agreement: Mean::of_share(both + neither, n),
                kappa: kappa([both, judge_only, checks_only, neither]),
            }
        })
        .collect())
}

/// Cohen's kappa of a 2×2 table [both, first only, second only, neither].
pub fn kappa([both, first, second, neither]: [u64; 4]) -> Option<f64> {
    let n = (both + first + second + neither) as f64;
    if n == 0.0 {
        return None;
    }
    let observed = (both + neither) as f64 / n;
    let first_yes = (both + first) as f64 / n;
    let second_yes = (both + second) as f64 / n;
    let chance = first_yes * second_yes + (1.0 - first_yes) * (1.0 - second_yes);
    (chance < 1.0).then(|| (observed - chance) / (1.0 - chance))
}

/// The names of the `user_fidelity` judges in a job's stored config: its
/// `[[judges]]` tables with `builtin = "user_fidelity"`.
pub fn fidelity_judges_of(job: &JobRow) -> Vec<String> {
    let Ok(config) = job.config_snapshot.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(judges) = config.get("judges").and_then(toml::Value::as_array) else {
        return Vec::new();
    };
    judges
        .iter()
        .filter(|j| j.get("builtin").and_then(toml::Value::as_str) == Some("user_fidelity"))
        .filter_map(|j| j.get("name").and_then(toml::Value::as_str))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kappa_is_one_for_full_agreement_zero_for_chance_and_none_when_undefined() {
        assert_eq!(kappa([5, 0, 0, 5]), Some(1.0));
        assert_eq!(kappa([1, 1, 1, 1]), Some(0.0));
        assert_eq!(kappa([0, 0, 0, 10]), None);
        assert_eq!(kappa([0, 0, 0, 0]), None);
    }

    #[test]
    fn the_fidelity_judges_are_read_from_the_stored_config() {
        let job = JobRow {
            id: 1,
            name: "j".into(),
            kind: crate::store::JobKind::Generation,
            config_snapshot:
                "name = \"j\"\n[[judges]]\nname = \"uf\"\nbuiltin = \"user_fidelity\"\n\
                              [[judges]]\nname = \"h\"\nbuiltin = \"helpfulness\"\n"
                    .into(),
            config_hash: String::new(),
            status: crate::store::JobStatus::Done,
            created_at: 0,
            updated_at: 0,
        };
        assert_eq!(fidelity_judges_of(&job), vec!["uf".to_string()]);
    }
}
