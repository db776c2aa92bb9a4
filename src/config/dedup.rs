//! `[dedup]` of a synthesis config: when two proposals are the same task
//! (`synth::dedup` applies it).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ranges::{DEDUP_PERMUTATIONS, DEDUP_SHINGLE_WORDS, DEDUP_SIMILARITY};
use super::Problem;

/// `[dedup]` of a synthesis config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DedupConfig {
    /// Goal similarity at which two scenarios are duplicates whatever their actions.
    pub similarity: f64,
    /// Goal similarity at which two scenarios with the same gold-action
    /// sequence are duplicates.
    pub same_actions_similarity: f64,
    /// Words per shingle.
    pub shingle_words: u32,
    /// MinHash permutations per goal.
    pub permutations: u32,
    /// Seeds the permutations; the same seed gives the same verdicts.
    pub seed: u64,
}

impl Default for DedupConfig {
    fn default() -> Self {
        DedupConfig {
            similarity: 0.9,
            same_actions_similarity: 0.5,
            shingle_words: 3,
            permutations: 128,
            seed: 0,
        }
    }
}

impl DedupConfig {
    /// Every number out of its range, as problems at `table.field` of `file`
    /// (`table` is where the config sits, e.g. `dedup`).
    pub fn problems(&self, file: &Path, table: &str) -> Vec<Problem> {
        let field = |name: &str| format!("{table}.{name}");
        [
            DEDUP_SIMILARITY.problem(file, &field("similarity"), self.similarity),
            DEDUP_SIMILARITY.problem(
                file,
                &field("same_actions_similarity"),
                self.same_actions_similarity,
            ),
            DEDUP_SHINGLE_WORDS.problem(file, &field("shingle_words"), self.shingle_words),
            DEDUP_PERMUTATIONS.problem(file, &field("permutations"), self.permutations),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}
