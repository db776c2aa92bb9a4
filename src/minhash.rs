//! MinHash over word shingles: an estimate of the Jaccard similarity of two
//! texts' sets of `n`-word shingles, cheap and deterministic (fixed hashes,
//! seeded permutations), no embedding model. Shared by synthesis (near-
//! duplicate scenarios, `synth::dedup`) and curation (near-duplicate
//! conversations, `export::curate::near_duplicates`).

/// The permutations of one index: signatures made by the same [`MinHash`]
/// can be compared.
#[derive(Debug, Clone)]
pub struct MinHash {
    shingle_words: usize,
    permutation_seeds: Vec<u64>,
}

impl MinHash {
    /// `permutations` seeded permutations of `shingle_words`-word shingles
    /// (both at least 1).
    pub fn new(shingle_words: usize, permutations: u64, seed: u64) -> MinHash {
        MinHash {
            shingle_words: shingle_words.max(1),
            permutation_seeds: (0..permutations.max(1))
                .map(|i| splitmix64(seed ^ splitmix64(i)))
                .collect(),
        }
    }

    /// How many slots a signature has.
    pub fn permutations(&self) -> usize {
        self.permutation_seeds.len()
    }

    /// The MinHash signature of `text`'s word shingles.
    pub fn signature(&self, text: &str) -> Vec<u64> {
        let shingles = shingle_hashes(text, self.shingle_words);
        self.permutation_seeds
            .iter()
            .map(|&seed| {
                shingles
                    .iter()
                    .map(|&h| splitmix64(h ^ seed))
                    .min()
                    .unwrap_or(u64::MAX)
            })
            .collect()
    }

    /// The estimated Jaccard similarity of two texts' word shingles.
    pub fn similarity(&self, a: &str, b: &str) -> f64 {
        signature_similarity(&self.signature(a), &self.signature(b))
    }
}

/// The share of equal slots of two signatures of one [`MinHash`]: 1 for two
/// empty texts, in [0, 1] always.
pub fn signature_similarity(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() {
        return 1.0;
    }
    let equal = a.iter().zip(b).filter(|(x, y)| x == y).count();
    equal as f64 / a.len() as f64
}

/// Lowercased alphanumeric words.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The distinct shingles of `n` words (a text shorter than `n` words is one
/// shingle), hashed.
fn shingle_hashes(text: &str, n: usize) -> Vec<u64> {
    let words = words(text);
    let mut hashes: Vec<u64> = if words.is_empty() {
        Vec::new()
    } else if words.len() <= n {
        vec![fnv1a(&words.join(" "))]
    } else {
        words.windows(n).map(|w| fnv1a(&w.join(" "))).collect()
    };
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

/// The exact Jaccard similarity of two texts' `n`-word shingles (1 for two
/// empty texts); what the MinHash estimate approximates.
pub fn exact_jaccard(a: &str, b: &str, n: usize) -> f64 {
    let a = shingle_hashes(a, n.max(1));
    let b = shingle_hashes(b, n.max(1));
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (a, b): (std::collections::HashSet<_>, std::collections::HashSet<_>) =
        (a.into_iter().collect(), b.into_iter().collect());
    a.intersection(&b).count() as f64 / a.union(&b).count() as f64
}

/// 64-bit FNV-1a: a fixed hash, so signatures are the same on every run.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// SplitMix64's finalizer: one seeded permutation of the hashes per seed
/// (and the diversity planner's offsets).
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
