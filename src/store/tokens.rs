//! A policy generation's token ids and log probabilities as stored in
//! `message_tokens` (see `migrations/*/0007_message_tokens.sql`): each list
//! packed little-endian, token ids 4 bytes each, log probabilities 8 bytes
//! each, so a long prompt costs 4 bytes a token to write and read back and
//! every log probability reads back bit for bit.

use crate::token_ids::TokenIds;

use super::StoreError;

/// `ids` as stored.
pub fn pack_ids(ids: &[u32]) -> Vec<u8> {
    ids.iter().flat_map(|id| id.to_le_bytes()).collect()
}

/// Log probabilities as stored.
pub fn pack_log_probs(log_probs: &[f64]) -> Vec<u8> {
    log_probs.iter().flat_map(|p| p.to_le_bytes()).collect()
}

/// The three lists of message `idx` of conversation `conversation` read back;
/// a column whose length is not a whole number of values is corrupt.
pub fn unpack(
    conversation: i64,
    idx: i64,
    prompt: &[u8],
    generation: &[u8],
    log_probs: &[u8],
) -> Result<TokenIds, StoreError> {
    let corrupt = |column: &str, len: usize, width: usize| {
        StoreError::Corrupt(format!(
            "message_tokens of conversation {conversation}, message {idx}: {column} has {len} \
             bytes, not a multiple of {width}"
        ))
    };
    let ids = |column: &str, bytes: &[u8]| -> Result<Vec<u32>, StoreError> {
        let chunks = bytes.chunks_exact(4);
        if !chunks.remainder().is_empty() {
            return Err(corrupt(column, bytes.len(), 4));
        }
        Ok(chunks
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    };
    let chunks = log_probs.chunks_exact(8);
    if !chunks.remainder().is_empty() {
        return Err(corrupt("generation_log_probs", log_probs.len(), 8));
    }
    let generation_log_probs = chunks
        .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect();
    Ok(TokenIds {
        prompt_token_ids: ids("prompt_token_ids", prompt)?,
        generation_token_ids: ids("generation_token_ids", generation)?,
        generation_log_probs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_lists_read_back_exactly_as_packed() {
        let tokens = TokenIds {
            prompt_token_ids: vec![0, 1, 151_643, u32::MAX],
            generation_token_ids: vec![42],
            generation_log_probs: vec![-0.000_123_456_789_012_345_6, -17.5, 0.0, -1e-300],
        };
        let back = unpack(
            1,
            2,
            &pack_ids(&tokens.prompt_token_ids),
            &pack_ids(&tokens.generation_token_ids),
            &pack_log_probs(&tokens.generation_log_probs),
        )
        .unwrap();
        assert_eq!(back, tokens);
        let bits = |v: &[f64]| v.iter().map(|p| p.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&back.generation_log_probs),
            bits(&tokens.generation_log_probs)
        );
    }

    #[test]
    fn a_column_cut_mid_value_is_corrupt_and_says_where() {
        let err = unpack(7, 3, &[1, 0, 0], &[], &[]).unwrap_err().to_string();
        assert!(err.contains("conversation 7, message 3"), "{err}");
        assert!(err.contains("prompt_token_ids has 3 bytes"), "{err}");
        let err = unpack(7, 3, &[], &[], &[0; 9]).unwrap_err().to_string();
        assert!(err.contains("generation_log_probs has 9 bytes"), "{err}");
    }
}
