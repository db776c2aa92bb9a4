//! The job page's probe section, for a job with probe scenarios: each
//! family's hold rate with its Wilson interval and when the line broke, and
//! every conversation that broke it, linked to the user turn after which it
//! broke (`/conversations/ID#turn-N`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::gather::each_conversation;
use crate::report::strata_probe::{outcome_of, ProbeTally};
use crate::store::{ConversationStore, StoreError};
use crate::verify::probe_spec::Family;

use super::display;

/// Broken conversations listed at most; the rest are counted.
const LISTED: usize = 50;

#[derive(Debug, Serialize)]
pub struct ProbeSection {
    families: Vec<FamilyRow>,
    broken: Vec<Broken>,
    /// Broken conversations not listed.
    more: usize,
}

#[derive(Debug, Serialize)]
struct FamilyRow {
    family: &'static str,
    scored_by: &'static str,
    probes: u64,
    /// `4/10`: held of decided.
    held: String,
    rate: String,
    /// `3×2 4×1`: user turn × conversations that broke after it.
    flips: String,
}

#[derive(Debug, Serialize)]
struct Broken {
    id: i64,
    scenario: String,
    family: &'static str,
    turn: Option<u32>,
    detail: String,
}

/// The section of job `job_id`; `None` when it has no probe conversation.
pub async fn section(
    store: &dyn ConversationStore,
    job_id: i64,
) -> Result<Option<ProbeSection>, StoreError> {
    let mut tallies: BTreeMap<Family, (ProbeTally, &'static str)> = BTreeMap::new();
    let mut broken = Vec::new();
    let mut count = 0;
    each_conversation(store, job_id, |c| {
        let outcome = outcome_of(&c.metadata).map_err(|e| {
            StoreError::Corrupt(format!("conversation {}: metadata.probe: {e}", c.id))
        })?;
        let Some(outcome) = outcome else {
            return Ok(());
        };
        let family = outcome.family;
        let scored_by = family.scored_by().as_str();
        tallies
            .entry(family)
            .or_insert_with(|| (ProbeTally::default(), scored_by))
            .0
            .add(&c.scenario_id, &outcome);
        if outcome.held == Some(false) {
            count += 1;
            if broken.len() < LISTED {
                broken.push(Broken {
                    id: c.id,
                    scenario: c.scenario_id.clone(),
                    family: family.as_str(),
                    turn: outcome.turn_of_flip,
                    detail: outcome.detail,
                });
            }
        }
        Ok(())
    })
    .await?;
    if tallies.is_empty() {
        return Ok(None);
    }
    let families = tallies
        .into_iter()
        .filter_map(|(family, (tally, scored_by))| {
            let cell = tally.cell(&[])?;
            Some(FamilyRow {
                family: family.as_str(),
                scored_by,
                probes: cell.probes,
                held: format!("{}/{}", cell.held, cell.decided),
                rate: cell.hold_rate.as_ref().map_or_else(
                    || "n/a".into(),
                    |m| display::mean_with_interval(m.mean, m.ci95),
                ),
                flips: cell
                    .turn_of_flip
                    .iter()
                    .map(|(turn, n)| format!("{turn}×{n}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            })
        })
        .collect();
    Ok(Some(ProbeSection {
        families,
        more: count - broken.len(),
        broken,
    }))
}
