//! The `near_duplicates` gate: a conversation whose dialogue (the user's and
//! the policy's words) is at least `similarity` alike (MinHash estimate of
//! word-shingle Jaccard, [`crate::minhash`], the machinery synthesis uses for
//! scenarios) to one kept earlier is dropped. Kept signatures are bucketed
//! by bands (locality-sensitive hashing), so a conversation is compared only
//! with the kept ones that share a band: the bands are chosen so that a pair
//! at the threshold shares one with probability at least 0.99 (where the
//! permutations allow it: 64 do from a similarity of 0.07).

use std::collections::HashMap;

use crate::minhash::{signature_similarity, splitmix64, MinHash};

use super::profile::NearDuplicates;

/// A kept conversation it repeats, and how alike they are.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeat {
    pub of: i64,
    pub similarity: f64,
}

pub struct NearDuplicateIndex {
    minhash: MinHash,
    similarity: f64,
    rows: usize,
    bands: Vec<HashMap<u64, Vec<usize>>>,
    kept: Vec<(i64, Vec<u64>)>,
}

impl NearDuplicateIndex {
    pub fn new(settings: &NearDuplicates) -> NearDuplicateIndex {
        let minhash = MinHash::new(settings.shingle_words as usize, settings.permutations, 0);
        let (rows, bands) = banding(minhash.permutations(), settings.similarity);
        NearDuplicateIndex {
            minhash,
            similarity: settings.similarity,
            rows,
            bands: vec![HashMap::new(); bands],
            kept: Vec::new(),
        }
    }

    /// The signature of `text`.
    pub fn signature(&self, text: &str) -> Vec<u64> {
        self.minhash.signature(text)
    }

    /// The most alike kept conversation at or above the threshold.
    pub fn check(&self, signature: &[u64]) -> Option<Repeat> {
        let mut seen = std::collections::HashSet::new();
        let mut best: Option<Repeat> = None;
        for (band, buckets) in self.bands.iter().enumerate() {
            let Some(candidates) = buckets.get(&self.band_key(signature, band)) else {
                continue;
            };
            for &i in candidates {
                if !seen.insert(i) {
                    continue;
                }
                let (id, kept) = &self.kept[i];
                let similarity = signature_similarity(signature, kept);
                if similarity >= self.similarity
                    && best.as_ref().is_none_or(|b| similarity > b.similarity)
                {
                    best = Some(Repeat {
                        of: *id,
                        similarity,
                    });
                }
            }
        }
        best
    }

    /// Keep conversation `id`: later ones are checked against it.
    pub fn insert(&mut self, id: i64, signature: Vec<u64>) {
        let index = self.kept.len();
        for band in 0..self.bands.len() {
            let key = self.band_key(&signature, band);
            self.bands[band].entry(key).or_default().push(index);
        }
        self.kept.push((id, signature));
    }

    fn band_key(&self, signature: &[u64], band: usize) -> u64 {
        signature[band * self.rows..(band + 1) * self.rows]
            .iter()
            .fold(band as u64, |h, slot| splitmix64(h ^ slot))
    }
}

/// `(rows per band, bands)` for `permutations` slots: the most rows per band
/// (fewest false candidates) with which a pair at `threshold` shares a band
/// with probability ≥ 0.99; one row per band when no banding reaches it.
pub fn banding(permutations: usize, threshold: f64) -> (usize, usize) {
    let permutations = permutations.max(1);
    let mut best = (1, permutations);
    for rows in 1..=permutations {
        let bands = permutations / rows;
        let p = 1.0 - (1.0 - threshold.powi(rows as i32)).powi(bands as i32);
        if p >= 0.99 {
            best = (rows, bands);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(similarity: f64) -> NearDuplicateIndex {
        NearDuplicateIndex::new(&NearDuplicates {
            similarity,
            shingle_words: 3,
            permutations: 64,
        })
    }

    #[test]
    fn a_repeat_is_found_and_a_different_dialogue_is_not() {
        let mut index = index(0.8);
        let a = "I want to return the lamp I bought last week, order LL1001. \
                 Sure, I can help you return the lamp from order LL1001.";
        index.insert(1, index.signature(a));
        let same = index.check(&index.signature(a)).unwrap();
        assert_eq!(
            same,
            Repeat {
                of: 1,
                similarity: 1.0
            }
        );
        let other = "Where is my package? It was supposed to arrive on Monday. \
                     Let me check the tracking number for you.";
        assert_eq!(index.check(&index.signature(other)), None);
    }

    #[test]
    fn the_bands_catch_a_pair_at_the_threshold_almost_always() {
        for (perms, t) in [(64, 0.9), (64, 0.5), (128, 0.98), (16, 0.3)] {
            let (rows, bands) = banding(perms, t);
            assert!(rows * bands <= perms);
            let p = 1.0 - (1.0 - f64::powi(t, rows as i32)).powi(bands as i32);
            assert!(p >= 0.99, "{perms} {t}: {rows}x{bands} gives {p}");
        }
        // A high threshold affords long bands; too few slots for a low one:
        // one slot a band, every shared slot a candidate.
        assert!(banding(64, 0.98).0 > banding(64, 0.5).0);
        assert_eq!(banding(8, 0.3), (1, 8));
    }

    #[test]
    fn the_banded_search_agrees_with_comparing_every_pair() {
        let texts: Vec<String> = (0..40)
            .map(|i| {
                let base = i % 7;
                format!(
                    "customer {base} asks about order {base} and the delivery window {base} \
                     then thanks the agent number {}",
                    i % 3
                )
            })
            .collect();
        let mut index = index(0.7);
        let mut kept: Vec<(i64, Vec<u64>)> = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let sig = index.signature(text);
            let banded = index.check(&sig).is_some();
            let exhaustive = kept
                .iter()
                .any(|(_, k)| signature_similarity(&sig, k) >= 0.7);
            assert_eq!(banded, exhaustive, "text {i}");
            if !banded {
                index.insert(i as i64, sig.clone());
                kept.push((i as i64, sig));
            }
        }
        assert!(kept.len() < texts.len());
    }
}
