//! Type–token ratio on equal-size samples: a longer text repeats more words,
//! so a plain ratio would compare lengths. Both jobs' user words, in
//! conversation order, are cut into consecutive chunks of the same size
//! (100 words, or the smaller job's whole count when it has fewer), and the
//! ratio is the mean over whole chunks of distinct words / words (the
//! standardised TTR); a last partial chunk is left out.

use std::collections::HashSet;

/// The chunk size: at most 100 words, at most the smaller job's word count.
pub const CHUNK: usize = 100;

/// The chunk both jobs are measured with; 0 when either has no words.
pub fn chunk_for(a_words: usize, b_words: usize) -> usize {
    CHUNK.min(a_words).min(b_words)
}

/// The mean type–token ratio of `words`' whole chunks of `chunk`; `None`
/// when there is none.
pub fn standardised_ttr<'a>(words: impl IntoIterator<Item = &'a str>, chunk: usize) -> Option<f64> {
    if chunk == 0 {
        return None;
    }
    let (mut sum, mut chunks) = (0.0, 0u64);
    let mut types: HashSet<&str> = HashSet::new();
    let mut in_chunk = 0;
    for w in words {
        types.insert(w);
        in_chunk += 1;
        if in_chunk == chunk {
            sum += types.len() as f64 / chunk as f64;
            chunks += 1;
            types.clear();
            in_chunk = 0;
        }
    }
    (chunks > 0).then(|| sum / chunks as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_new_is_one_the_same_word_is_one_over_the_chunk() {
        let distinct: Vec<String> = (0..200).map(|i| format!("w{i}")).collect();
        let ttr = standardised_ttr(distinct.iter().map(String::as_str), 100);
        assert_eq!(ttr, Some(1.0));
        assert_eq!(standardised_ttr(["ok"; 250], 100), Some(0.01));
    }

    #[test]
    fn length_does_not_lower_the_ratio_of_a_repeating_text() {
        let text = ["a", "b", "c", "d"];
        let short = standardised_ttr(text.iter().cycle().take(8).copied(), 4);
        let long = standardised_ttr(text.iter().cycle().take(4000).copied(), 4);
        assert_eq!(short, long);
    }

    #[test]
    fn the_chunk_is_the_smaller_count_below_one_hundred() {
        assert_eq!(chunk_for(1000, 40), 40);
        assert_eq!(chunk_for(1000, 5000), 100);
        assert_eq!(chunk_for(0, 5000), 0);
        assert_eq!(standardised_ttr(["a", "b"], 3), None);
    }
}
