//! Near-duplicate scenarios: two blueprints are the same task when they run
//! the same gold actions for much the same goal, or when their goals read
//! almost alike whatever the actions. Goals are compared by MinHash over word
//! shingles ([`crate::minhash`]: an estimate of their Jaccard similarity).

use std::collections::HashMap;

use serde::Serialize;

use crate::config::ranges::{DEDUP_PERMUTATIONS, DEDUP_SHINGLE_WORDS, DEDUP_SIMILARITY};
use crate::minhash::{signature_similarity, MinHash};
use crate::persona::Scenario;

#[cfg(test)]
use crate::minhash::exact_jaccard;

pub use crate::config::dedup::DedupConfig;

/// Why a scenario is left out: which kept scenario it repeats.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Duplicate {
    /// The id of the scenario kept earlier.
    pub of: String,
    /// The estimated goal similarity, in [0, 1].
    pub similarity: f64,
    pub reason: String,
}

struct Kept {
    id: String,
    signature: Vec<u64>,
}

/// The scenarios kept so far, to check new ones against.
pub struct DedupIndex {
    similarity: f64,
    same_actions_similarity: f64,
    minhash: MinHash,
    kept: Vec<Kept>,
    /// Indexes into `kept` by normalized gold-action sequence (non-empty only).
    by_actions: HashMap<String, Vec<usize>>,
}

impl DedupIndex {
    /// An empty index. Numbers out of range (a config not validated) are
    /// brought into range rather than trusted.
    pub fn new(config: &DedupConfig) -> Self {
        let clamp = |x: f64, fallback: f64| {
            if DEDUP_SIMILARITY.contains(x) {
                x
            } else {
                fallback
            }
        };
        let shingle_words = u64::from(config.shingle_words)
            .clamp(DEDUP_SHINGLE_WORDS.min, DEDUP_SHINGLE_WORDS.max)
            as usize;
        let permutations =
            u64::from(config.permutations).clamp(DEDUP_PERMUTATIONS.min, DEDUP_PERMUTATIONS.max);
        let defaults = DedupConfig::default();
        DedupIndex {
            similarity: clamp(config.similarity, defaults.similarity),
            same_actions_similarity: clamp(
                config.same_actions_similarity,
                defaults.same_actions_similarity,
            ),
            minhash: MinHash::new(shingle_words, permutations, config.seed),
            kept: Vec::new(),
            by_actions: HashMap::new(),
        }
    }

    /// How many scenarios the index holds.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// The kept scenario `s` repeats, if any; the most similar one.
    pub fn check(&self, s: &Scenario) -> Option<Duplicate> {
        let signature = self.signature(&goal_text(s));
        let actions = action_sequence(s);
        if !actions.is_empty() {
            if let Some(indexes) = self.by_actions.get(&actions) {
                let best = indexes
                    .iter()
                    .filter_map(|&i| self.kept.get(i))
                    .map(|k| (k, signature_similarity(&signature, &k.signature)))
                    .max_by(|a, b| a.1.total_cmp(&b.1));
                if let Some((kept, similarity)) = best {
                    if similarity >= self.same_actions_similarity {
                        return Some(Duplicate {
                            of: kept.id.clone(),
                            similarity,
                            reason: format!(
                                "the same gold actions ({}) as '{}' and a goal {:.2} similar \
                                 to its goal (duplicates from {:.2} with the same actions)",
                                action_names(s),
                                kept.id,
                                similarity,
                                self.same_actions_similarity
                            ),
                        });
                    }
                }
            }
        }
        let (kept, similarity) = self
            .kept
            .iter()
            .map(|k| (k, signature_similarity(&signature, &k.signature)))
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        (similarity >= self.similarity).then(|| Duplicate {
            of: kept.id.clone(),
            similarity,
            reason: format!(
                "a goal {:.2} similar to the goal of '{}' (duplicates from {:.2} whatever \
                 the actions)",
                similarity, kept.id, self.similarity
            ),
        })
    }

    /// Keeps `s`: later scenarios are checked against it.
    pub fn insert(&mut self, s: &Scenario) {
        let signature = self.signature(&goal_text(s));
        let actions = action_sequence(s);
        let index = self.kept.len();
        self.kept.push(Kept {
            id: s.id.clone(),
            signature,
        });
        if !actions.is_empty() {
            self.by_actions.entry(actions).or_default().push(index);
        }
    }

    /// The MinHash signature of `text`'s word shingles.
    pub fn signature(&self, text: &str) -> Vec<u64> {
        self.minhash.signature(text)
    }

    /// The estimated Jaccard similarity of two texts' word shingles.
    pub fn similarity(&self, a: &str, b: &str) -> f64 {
        self.minhash.similarity(a, b)
    }
}

/// What the user wants, in words: the reason for contact and the instructions.
pub fn goal_text(s: &Scenario) -> String {
    format!("{} {}", s.user.reason_for_contact, s.user.task_instructions)
}

/// The gold actions as one canonical text: tool names and arguments with
/// strings trimmed and lowercased and object keys sorted, one action a line.
pub fn action_sequence(s: &Scenario) -> String {
    s.evaluation
        .actions
        .iter()
        .map(|a| {
            let mut line = a.name.trim().to_lowercase();
            line.push(' ');
            canonical(&a.arguments, &mut line);
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn action_names(s: &Scenario) -> String {
    s.evaluation
        .actions
        .iter()
        .map(|a| a.name.trim())
        .collect::<Vec<_>>()
        .join(", ")
}

fn canonical(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::String(text) => {
            out.push_str(&serde_json::Value::String(text.trim().to_lowercase()).to_string())
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(v) = map.get(key) {
                    canonical(v, out);
                }
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
#[path = "dedup_tests.rs"]
mod tests;
