//! A job's conversations broken down by one attribute (`sparring stats --by
//! ATTR`, `GET /v1/jobs/{id}/stats?by=`, the UI's strata): a persona
//! attribute as the job stored it (`job_personas`), `persona` (its id),
//! `scenario`, or `knob.NAME` (the knob value drawn for the conversation,
//! `metadata.persona_knobs`). Per cell: conversations, the mean reward with
//! its 95% interval, pass^k, termination shares and each simulated-user
//! flag's rate with Wilson intervals; cells under the minimum size are
//! marked too small. Cells are ordered furthest below the job's mean first.
//!
//! Unscored conversations count in a cell's conversations and nowhere in its
//! reward or pass^k; failed items store no conversation and are in no cell,
//! as in `sparring stats`.

//!
//! Numeric attributes are binned as `strata_bins` says.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::RangeInclusive;

use serde::Serialize;
use serde_json::Value;

use crate::store::{ConversationRow, JobPersona, Store, StoreError};
use crate::user_checks::{Outcome, UserChecks, UserFlag};

use super::gather::{each_conversation, pass_hat_k_report};
use super::interval::Mean;
use super::stats::{JobInfo, PassHatKValue, ScenarioTrials, SUCCESS_REWARD};
use super::strata_bins::{cell_labels, CellKey, Stratum};
use super::strata_probe::{self, CellProbe, ProbeTally};
use super::users::{FlagCounts, FlagRate};
use crate::verify::probe_spec::ProbeOutcome;

/// Cells with fewer conversations are marked too small and not ordered.
pub const DEFAULT_MIN_CELL: u64 = 10;
pub const MIN_CELL: RangeInclusive<u64> = 1..=1_000_000;
/// Bins of a numeric attribute.
pub const DEFAULT_BINS: u64 = 4;
pub const BINS: RangeInclusive<u64> = 2..=20;
pub use super::strata_bins::MISSING;

/// What to break a job down by, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct StrataRequest {
    pub by: String,
    pub min_cell: u64,
    pub bins: u64,
}

/// A request value out of range: the field and what would be right.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct FieldProblem {
    pub field: &'static str,
    pub message: String,
}

impl StrataRequest {
    /// `by` not blank, `min_cell` in [`MIN_CELL`], `bins` in [`BINS`].
    pub fn new(by: &str, min_cell: u64, bins: u64) -> Result<StrataRequest, FieldProblem> {
        if by.trim().is_empty() {
            return Err(FieldProblem {
                field: "by",
                message: "is empty: give an attribute, e.g. by=country, by=persona, \
                          by=scenario, by=knob.verbosity or by=probe.family"
                    .into(),
            });
        }
        for (field, value, range) in [("min_cell", min_cell, &MIN_CELL), ("bins", bins, &BINS)] {
            if !range.contains(&value) {
                return Err(FieldProblem {
                    field,
                    message: format!(
                        "{value} is out of range: give a whole number from {} to {}",
                        range.start(),
                        range.end()
                    ),
                });
            }
        }
        Ok(StrataRequest {
            by: by.trim().to_string(),
            min_cell,
            bins,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StrataError {
    #[error("job {0} is not in the database")]
    NoSuchJob(i64),
    #[error(
        "by: job {job} has no attribute `{by}`; its attributes are: {}",
        known.join(", ")
    )]
    UnknownAttribute {
        job: i64,
        by: String,
        known: Vec<String>,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrataReport {
    pub job: JobInfo,
    /// The attribute, as asked.
    pub by: String,
    /// `persona_attribute`, `persona`, `scenario` or `knob`.
    pub source: &'static str,
    /// How a numeric attribute was cut; `None` when each value is a cell.
    pub binning: Option<Binning>,
    pub min_cell: u64,
    /// The whole job, as `sparring stats` counts it.
    pub conversations: u64,
    pub scored: u64,
    pub reward: Option<Mean>,
    pub pass_hat_k: Vec<PassHatKValue>,
    /// Furthest below the job's mean reward first; then cells with nothing
    /// scored, then the too small ones.
    pub cells: Vec<Cell>,
    /// Every attribute this job can be broken down by.
    pub attributes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Binning {
    pub bins: u64,
    pub rule: &'static str,
}

const BIN_RULE: &str = "about equal counts of conversations per bin (quantiles); equal values \
                        share a bin; each labelled with the smallest and largest value it holds";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The value, a bin's `LOW–HIGH`, or [`MISSING`].
    pub value: String,
    /// A bin's smallest and largest value.
    pub bounds: Option<(f64, f64)>,
    pub conversations: u64,
    pub scored: u64,
    /// Mean reward with its 95% interval (Wilson when every reward is 0 or 1).
    pub reward: Option<Mean>,
    /// The cell's mean reward minus the job's.
    pub difference: Option<f64>,
    /// Fewer conversations than `min_cell`: shown, not ordered.
    pub too_small: bool,
    pub pass_hat_k: Vec<PassHatKValue>,
    /// Most frequent first; each share of the cell's conversations (Wilson).
    pub terminations: Vec<TerminationShare>,
    /// Of the cell's conversations with stored checks.
    pub simulated_user: CellFlags,
    /// The cell's probes (scenarios with a `probe` block): held the line or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<CellProbe>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TerminationShare {
    pub reason: String,
    pub count: u64,
    pub share: Option<Mean>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CellFlags {
    pub checked: u64,
    pub any_flag: Option<FlagRate>,
    /// In [`UserFlag::ALL`] order.
    pub flags: Vec<FlagRate>,
}

/// What a stratum is read from.
#[derive(Debug, Clone, PartialEq)]
enum Attribute {
    Persona,
    Scenario,
    Knob(String),
    /// A field of the probe's outcome (`probe.family`, `probe.strategy`).
    Probe(String),
    /// A persona attribute (`NAME`, or `attributes.NAME` for one named like
    /// the others).
    OfPersona(String),
}

impl Attribute {
    fn parse(by: &str) -> Attribute {
        if let Some(name) = by.strip_prefix("knob.") {
            return Attribute::Knob(name.to_string());
        }
        if let Some(name) = by.strip_prefix("probe.") {
            return Attribute::Probe(name.to_string());
        }
        if let Some(name) = by.strip_prefix("attributes.") {
            return Attribute::OfPersona(name.to_string());
        }
        match by {
            "persona" => Attribute::Persona,
            "scenario" => Attribute::Scenario,
            name => Attribute::OfPersona(name.to_string()),
        }
    }

    fn source(&self) -> &'static str {
        match self {
            Attribute::Persona => "persona",
            Attribute::Scenario => "scenario",
            Attribute::Knob(_) => "knob",
            Attribute::Probe(_) => "probe",
            Attribute::OfPersona(_) => "persona_attribute",
        }
    }
}

/// What a cell needs of one conversation.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    persona: String,
    scenario: String,
    knobs: BTreeMap<String, String>,
    reward: Option<f64>,
    termination: String,
    /// In [`UserFlag::ALL`] order; `None` when stored without checks.
    checks: Option<[Outcome; UserFlag::ALL.len()]>,
    probe: Option<ProbeOutcome>,
}

impl Record {
    fn of(c: &ConversationRow) -> Result<Record, StoreError> {
        let checks = UserChecks::from_stored(c.user_checks.as_ref())
            .map_err(|e| StoreError::Corrupt(format!("conversation {}: {e}", c.id)))?
            .map(|checks| UserFlag::ALL.map(|f| checks.outcome(f)));
        let knobs = c
            .metadata
            .get("persona_knobs")
            .and_then(Value::as_object)
            .map(|knobs| {
                knobs
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.as_str().map_or_else(|| v.to_string(), str::to_string),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let probe = strata_probe::outcome_of(&c.metadata).map_err(|e| {
            StoreError::Corrupt(format!("conversation {}: metadata.probe: {e}", c.id))
        })?;
        Ok(Record {
            probe,
            persona: c.persona_id.clone(),
            scenario: c.scenario_id.clone(),
            knobs,
            reward: c.reward,
            termination: c.termination.clone(),
            checks,
        })
    }
}

/// Job `job_id` broken down as `request` asks, with pass^k for each of `ks`.
pub async fn job_strata(
    store: &dyn Store,
    job_id: i64,
    request: &StrataRequest,
    ks: &[u64],
) -> Result<StrataReport, StrataError> {
    let job = store
        .get_job(job_id)
        .await?
        .ok_or(StrataError::NoSuchJob(job_id))?;
    let personas = store.job_personas(job_id).await?;
    let mut records = Vec::new();
    each_conversation(store, job_id, |c| {
        records.push(Record::of(c)?);
        Ok(())
    })
    .await?;
    let info = JobInfo {
        id: job.id,
        name: job.name,
        kind: job.kind,
        status: job.status,
    };
    strata(info, &personas, &records, request, ks)
}

/// Every attribute `records` of a job with `personas` can be broken down by.
fn attributes(personas: &[JobPersona], records: &[Record]) -> Vec<String> {
    let mut names: BTreeSet<String> = personas
        .iter()
        .flat_map(|p| p.attributes.keys().cloned())
        .collect();
    let clashing: Vec<String> = names
        .iter()
        .filter(|n| !matches!(Attribute::parse(n), Attribute::OfPersona(ref m) if m == *n))
        .cloned()
        .collect();
    for name in clashing {
        names.remove(&name);
        names.insert(format!("attributes.{name}"));
    }
    let mut all: Vec<String> = names.into_iter().collect();
    all.push("persona".into());
    all.push("scenario".into());
    let knobs: BTreeSet<&String> = records.iter().flat_map(|r| r.knobs.keys()).collect();
    all.extend(knobs.into_iter().map(|k| format!("knob.{k}")));
    if records.iter().any(|r| r.probe.is_some()) {
        all.extend(strata_probe::FIELDS.map(|f| format!("probe.{f}")));
    }
    all
}

pub(crate) fn strata(
    job: JobInfo,
    personas: &[JobPersona],
    records: &[Record],
    request: &StrataRequest,
    ks: &[u64],
) -> Result<StrataReport, StrataError> {
    let attribute = Attribute::parse(&request.by);
    let known = attributes(personas, records);
    let exists = match &attribute {
        Attribute::Persona | Attribute::Scenario => true,
        Attribute::Knob(name) => records.iter().any(|r| r.knobs.contains_key(name)),
        Attribute::Probe(name) => {
            strata_probe::FIELDS.contains(&name.as_str())
                && records.iter().any(|r| r.probe.is_some())
        }
        Attribute::OfPersona(name) => personas.iter().any(|p| p.attributes.contains_key(name)),
    };
    if !exists {
        return Err(StrataError::UnknownAttribute {
            job: job.id,
            by: request.by.clone(),
            known,
        });
    }
    let by_persona: BTreeMap<&str, &JobPersona> = personas
        .iter()
        .map(|p| (p.persona_id.as_str(), p))
        .collect();
    let values: Vec<Stratum> = records
        .iter()
        .map(|r| match &attribute {
            Attribute::Persona => Stratum::Text(r.persona.clone()),
            Attribute::Scenario => Stratum::Text(r.scenario.clone()),
            Attribute::Knob(name) => r
                .knobs
                .get(name)
                .map_or(Stratum::Missing, |v| Stratum::Text(v.clone())),
            Attribute::Probe(name) => r
                .probe
                .as_ref()
                .and_then(|p| strata_probe::field(p, name))
                .map_or(Stratum::Missing, Stratum::Text),
            Attribute::OfPersona(name) => Stratum::of_json(
                by_persona
                    .get(r.persona.as_str())
                    .and_then(|p| p.attributes.get(name)),
            ),
        })
        .collect();
    let (labels, binned) = cell_labels(&values, request.bins);
    let mut tallies: BTreeMap<CellKey, Tally> = BTreeMap::new();
    let mut whole = Tally::default();
    for (record, key) in records.iter().zip(labels) {
        tallies.entry(key).or_default().add(record);
        whole.add(record);
    }
    let job_mean = Mean::of_unit(&whole.rewards);
    let mut cells: Vec<Cell> = tallies
        .into_iter()
        .map(|(key, tally)| tally.cell(key, job_mean.map(|m| m.mean), request.min_cell, ks))
        .collect();
    order(&mut cells);
    Ok(StrataReport {
        job,
        by: request.by.clone(),
        source: attribute.source(),
        binning: binned.then_some(Binning {
            bins: request.bins,
            rule: BIN_RULE,
        }),
        min_cell: request.min_cell,
        conversations: whole.conversations,
        scored: whole.rewards.len() as u64,
        reward: job_mean,
        pass_hat_k: pass_hat_k_report(whole.trials(), ks).values,
        cells,
        attributes: known,
    })
}

/// Cells with a reward, not too small, by difference from the job's mean
/// (most negative first); then those with nothing scored; then the too
/// small; each group in its natural order (already the order given).
fn order(cells: &mut [Cell]) {
    let group = |c: &Cell| match (c.too_small, c.difference) {
        (false, Some(_)) => 0,
        (false, None) => 1,
        (true, _) => 2,
    };
    // Stable: ties keep the natural order.
    cells.sort_by(|a, b| {
        group(a)
            .cmp(&group(b))
            .then_with(|| match (a.difference, b.difference) {
                (Some(x), Some(y)) if group(a) == 0 => x.total_cmp(&y),
                _ => std::cmp::Ordering::Equal,
            })
    });
}

#[derive(Debug, Default)]
struct Tally {
    conversations: u64,
    rewards: Vec<f64>,
    /// scenario → (trials, successes)
    scenarios: BTreeMap<String, (u64, u64)>,
    terminations: BTreeMap<String, u64>,
    flags: FlagCounts,
    probes: ProbeTally,
}

impl Tally {
    fn add(&mut self, r: &Record) {
        self.conversations += 1;
        *self.terminations.entry(r.termination.clone()).or_default() += 1;
        if let Some(reward) = r.reward {
            self.rewards.push(reward);
            let trials = self.scenarios.entry(r.scenario.clone()).or_default();
            trials.0 += 1;
            trials.1 += u64::from(reward >= SUCCESS_REWARD);
        }
        if let Some(outcomes) = r.checks {
            self.flags.add(outcomes);
        }
        if let Some(probe) = &r.probe {
            self.probes.add(&r.scenario, probe);
        }
    }

    fn trials(&self) -> Vec<ScenarioTrials> {
        self.scenarios
            .iter()
            .map(|(scenario, &(n, successes))| ScenarioTrials {
                scenario: scenario.clone(),
                n,
                successes,
            })
            .collect()
    }

    fn cell(self, key: CellKey, job_mean: Option<f64>, min_cell: u64, ks: &[u64]) -> Cell {
        let reward = Mean::of_unit(&self.rewards);
        let mut terminations: Vec<TerminationShare> = self
            .terminations
            .iter()
            .map(|(reason, &count)| TerminationShare {
                reason: reason.clone(),
                count,
                share: Mean::of_share(count, self.conversations),
            })
            .collect();
        terminations.sort_by_key(|t| std::cmp::Reverse(t.count));
        Cell {
            value: key.rank.2,
            bounds: key.bounds,
            conversations: self.conversations,
            scored: self.rewards.len() as u64,
            difference: reward.zip(job_mean).map(|(r, m)| r.mean - m),
            reward,
            too_small: self.conversations < min_cell,
            pass_hat_k: pass_hat_k_report(self.trials(), ks).values,
            terminations,
            simulated_user: CellFlags {
                checked: self.flags.checked,
                any_flag: self.flags.any_flag(),
                flags: self.flags.rates(),
            },
            probe: self.probes.cell(ks),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::{JobKind, JobStatus};

    fn info() -> JobInfo {
        JobInfo {
            id: 7,
            name: "j".into(),
            kind: JobKind::Generation,
            status: JobStatus::Done,
        }
    }

    fn record(persona: &str, reward: Option<f64>) -> Record {
        Record {
            persona: persona.into(),
            scenario: "s".into(),
            knobs: BTreeMap::from([("mood".to_string(), "calm".to_string())]),
            reward,
            termination: "user_stop".into(),
            checks: None,
            probe: None,
        }
    }

    fn persona(id: &str, attributes: Value) -> JobPersona {
        JobPersona {
            persona_id: id.into(),
            attributes: serde_json::from_value(attributes).unwrap(),
        }
    }

    fn request(by: &str, min_cell: u64) -> StrataRequest {
        StrataRequest::new(by, min_cell, 4).unwrap()
    }

    #[test]
    fn cells_furthest_below_the_job_mean_come_first_and_small_ones_last() {
        let personas = [
            persona("a", json!({"country": "US"})),
            persona("b", json!({"country": "DE"})),
            persona("c", json!({"country": "FR"})),
            persona("d", json!({"country": "JP"})),
        ];
        let mut records = Vec::new();
        // US 3 of 4, DE 1 of 4, FR 2 of 4 and one unscored; JP 0 of 1, too
        // small (under 4) though furthest below.
        for (p, rewards) in [
            ("a", vec![1.0, 1.0, 1.0, 0.0]),
            ("b", vec![1.0, 0.0, 0.0, 0.0]),
            ("c", vec![1.0, 1.0, 0.0, 0.0]),
            ("d", vec![0.0]),
        ] {
            records.extend(rewards.into_iter().map(|r| record(p, Some(r))));
        }
        records.push(record("c", None));
        let report = strata(info(), &personas, &records, &request("country", 4), &[1]).unwrap();
        let order: Vec<(&str, bool)> = report
            .cells
            .iter()
            .map(|c| (c.value.as_str(), c.too_small))
            .collect();
        assert_eq!(
            order,
            [("DE", false), ("FR", false), ("US", false), ("JP", true)]
        );
        // The job: 6 of 13 scored; FR's unscored one counts as a conversation only.
        assert_eq!((report.conversations, report.scored), (14, 13));
        let fr = &report.cells[1];
        assert_eq!((fr.conversations, fr.scored), (5, 4));
        let reward = fr.reward.unwrap();
        assert_eq!(reward.ci_method, crate::interval::IntervalMethod::Wilson);
        assert_eq!(reward.ci95, crate::interval::wilson(2, 4));
        assert!((fr.difference.unwrap() - (0.5 - 6.0 / 13.0)).abs() < 1e-12);
        assert_eq!(fr.terminations[0].count, 5);
        assert_eq!(report.source, "persona_attribute");
        assert!(report.binning.is_none());
    }

    #[test]
    fn an_unknown_attribute_names_the_attributes_the_job_has() {
        let personas = [persona("a", json!({"country": "US", "age": 30}))];
        let err = strata(
            info(),
            &personas,
            &[record("a", Some(1.0))],
            &request("income", 1),
            &[1],
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "by: job 7 has no attribute `income`; its attributes are: age, country, persona, \
             scenario, knob.mood"
        );
    }

    #[test]
    fn knobs_personas_and_a_persona_without_the_attribute_make_cells() {
        let personas = [
            persona("a", json!({"country": "US"})),
            persona("b", json!({})),
        ];
        let records = [record("a", Some(1.0)), record("b", Some(0.0))];
        let by = |by: &str| {
            strata(info(), &personas, &records, &request(by, 1), &[1])
                .unwrap()
                .cells
                .into_iter()
                .map(|c| c.value)
                .collect::<Vec<_>>()
        };
        assert_eq!(by("country"), [MISSING, "US"]);
        assert_eq!(by("persona"), ["b", "a"]);
        assert_eq!(by("knob.mood"), ["calm"]);
    }

    #[test]
    fn out_of_range_numbers_name_their_field() {
        assert_eq!(
            StrataRequest::new("age", 0, 4).unwrap_err().field,
            "min_cell"
        );
        assert_eq!(StrataRequest::new("age", 5, 21).unwrap_err().field, "bins");
        assert_eq!(StrataRequest::new(" ", 5, 4).unwrap_err().field, "by");
    }
}
