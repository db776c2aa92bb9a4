//! Curation (`sparring export --profile strict|generous|FILE.toml`, the
//! service's `profile=`): quality gates applied in order to a job's stored
//! conversations ([`gates`]), with the settings of a [`profile`] combined
//! with the export's own flags ([`combine`]); a first pass over the store
//! ([`pass`]) decides which conversations are kept and counts the funnel
//! ([`funnel`]), then the export writes the kept ones as usual, and beside
//! its files `manifest.json` ([`manifest`]) and a Hugging Face dataset card
//! `README.md` ([`card`]).
//!
//! Curation reads only stored rows (conversations, judgments, judge calls,
//! user checks), never a job's config file, so an imported job curates as a
//! generated one does.

pub mod card;
pub mod combine;
pub mod funnel;
pub mod gates;
pub mod manifest;
pub mod near_duplicates;
pub mod pass;
pub mod profile;
pub mod stratum;
#[cfg(test)]
pub(crate) mod test_rows;

use std::collections::HashSet;

use crate::store::ConversationRow;

pub use pass::Curated;
pub use profile::{Profile, ProfileSource};
pub use stratum::StratifyBy;

/// `--profile` and `--stratify-by` as asked.
#[derive(Debug, Clone, PartialEq)]
pub struct CurationRequest {
    /// `strict`, `generous` or a TOML file.
    pub profile: String,
    pub stratify_by: Option<String>,
}

/// A profile read and checked, with the stratum the caps count by.
#[derive(Debug, Clone, PartialEq)]
pub struct Curation {
    /// The profile's name (a file's name without its folders).
    pub label: String,
    pub profile: Profile,
    pub stratify_by: Option<StratifyBy>,
}

/// The conversations of job `job` a curation kept.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CuratedSet {
    pub job: i64,
    pub ids: HashSet<i64>,
}

impl CuratedSet {
    /// Whether `c` stays: kept, or of another job (the other side of a DPO
    /// pair, held to the export's filter alone).
    pub fn keeps(&self, c: &ConversationRow) -> bool {
        c.job_id != self.job || self.ids.contains(&c.id)
    }
}
