//! `sparring compare-users SIM REAL --realism`: how close a job's simulated
//! users are to real ones (an imported job), on the user side only. Pure
//! measures, one concept a file: the words of a turn ([`words`]), what a turn
//! does ([`lexicon`]), typos ([`typos`]), the order facts are disclosed in
//! ([`disclosure`]), how a conversation ends ([`ending`]), the vocabulary's
//! divergence ([`divergence`]) and type–token ratio ([`type_token`]); a
//! conversation counted once ([`conversation`]); the measures over a set of
//! them ([`measures`]); the resampling ([`bootstrap`]); gaps made comparable
//! ([`gaps`]); the comparison ([`comparison`]). Reading the store is
//! [`gather`]'s alone. docs/realism.md says what each counts.

pub mod bootstrap;
pub mod comparison;
pub mod conversation;
pub mod disclosure;
pub mod divergence;
pub mod ending;
pub mod gaps;
pub mod gather;
pub mod lexicon;
pub mod measures;
mod render;
pub mod type_token;
pub mod typos;
pub mod words;

use std::collections::HashMap;

use serde::Serialize;

use crate::store::Store;

use super::compare_users::ComparedJob;
use super::stats::{StatsError, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED};
use comparison::{measure, Measured};
use conversation::{Counted, Vocabulary};

/// The realism report: the two jobs and what was measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Realism {
    /// The simulated job (the first named).
    pub sim: ComparedJob,
    /// The real job (imported conversations).
    pub real: ComparedJob,
    #[serde(flatten)]
    pub measured: Measured,
}

/// Compare job `sim`'s users with job `real`'s.
pub async fn realism(store: &dyn Store, sim: i64, real: i64) -> Result<Realism, StatsError> {
    let sim_job = store
        .get_job(sim)
        .await?
        .ok_or(StatsError::NoSuchJob(sim))?;
    let real_job = store
        .get_job(real)
        .await?
        .ok_or(StatsError::NoSuchJob(real))?;
    let mut known = HashMap::new();
    let mut sim_gathered = gather::user_sides(store, sim, &mut known).await?;
    let mut real_gathered = gather::user_sides(store, real, &mut known).await?;
    gather::lend_known_info(&mut sim_gathered.sides, &known);
    gather::lend_known_info(&mut real_gathered.sides, &known);
    let mut vocabulary = Vocabulary::default();
    let mut count = |sides: &[conversation::UserSide]| -> Vec<Counted> {
        sides
            .iter()
            .map(|s| Counted::of(s, &mut vocabulary))
            .collect()
    };
    let sim_counted = count(&sim_gathered.sides);
    let real_counted = count(&real_gathered.sides);
    Ok(Realism {
        sim: ComparedJob {
            id: sim,
            name: sim_job.name,
            user_models: sim_gathered.user_models,
        },
        real: ComparedJob {
            id: real,
            name: real_job.name,
            user_models: real_gathered.user_models,
        },
        measured: measure(
            &sim_counted,
            &real_counted,
            BOOTSTRAP_RESAMPLES,
            BOOTSTRAP_SEED,
        ),
    })
}
