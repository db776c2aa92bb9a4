//! Type–token ratio on equal-size samples: a longer text repeats more words,
//! so a plain ratio would compare lengths. Each conversation's user words,
//! in order, are cut into consecutive chunks of [`CHUNK`] words (a last
//! partial chunk left out), and the ratio is the mean over all chunks of
//! distinct words / words (the standardised TTR). A chunk never spans two
//! conversations, so neither the order conversations are stored in nor a
//! conversation drawn twice by the bootstrap changes it; a conversation of
//! fewer than [`CHUNK`] user words has no chunk.

use std::collections::HashSet;
use std::hash::Hash;

/// Words per chunk.
pub const CHUNK: usize = 25;

/// The mean type–token ratio of the whole chunks of `chunk` words of each
/// text; `None` when no text has one.
pub fn standardised_ttr<'a, W: Eq + Hash + 'a>(
    texts: impl IntoIterator<Item = &'a [W]>,
    chunk: usize,
) -> Option<f64> {
    if chunk == 0 {
        return None;
    }
    let (mut sum, mut chunks) = (0.0, 0u64);
    for text in texts {
        for part in text.chunks_exact(chunk) {
            let types: HashSet<&W> = part.iter().collect();
            sum += types.len() as f64 / chunk as f64;
            chunks += 1;
        }
    }
    (chunks > 0).then(|| sum / chunks as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_new_is_one_the_same_word_is_one_over_the_chunk() {
        let distinct: Vec<u32> = (0..200).collect();
        assert_eq!(standardised_ttr([&distinct[..]], 100), Some(1.0));
        assert_eq!(standardised_ttr([&[7u32; 250][..]], 100), Some(0.01));
    }

    #[test]
    fn length_does_not_lower_the_ratio_of_a_repeating_text() {
        let text = [1u32, 2, 3, 4];
        let short: Vec<u32> = text.iter().cycle().take(8).copied().collect();
        let long: Vec<u32> = text.iter().cycle().take(4000).copied().collect();
        assert_eq!(
            standardised_ttr([&short[..]], 4),
            standardised_ttr([&long[..]], 4)
        );
    }

    #[test]
    fn chunks_stay_inside_a_conversation_and_short_ones_have_none() {
        // Two conversations of the same two words: each chunk is whole, 2/2.
        let (a, b) = ([1u32, 2], [1u32, 2]);
        assert_eq!(standardised_ttr([&a[..], &b[..]], 2), Some(1.0));
        assert_eq!(standardised_ttr([&[1u32, 2][..]], 3), None);
        assert_eq!(standardised_ttr([&[1u32][..]], 0), None);
    }
}
