//! The token fields an output item may carry (NeMo Gym's
//! `TokenIDLogProbMixin`: `prompt_token_ids`, `generation_token_ids`,
//! `generation_log_probs`; NeMo Gym's model servers put them on the last
//! item of a generation), read where they are and never made up.

use serde::Deserialize;

use crate::llm::error::LlmError;
use crate::llm::tokens::TokenIds;

/// The names of the token fields, taken off an item kept to be sent back.
pub(super) const FIELDS: [&str; 4] = [
    "prompt_token_ids",
    "generation_token_ids",
    "generation_log_probs",
    "routed_experts",
];

#[derive(Debug, Default, Deserialize)]
pub(super) struct ItemTokens {
    #[serde(default)]
    prompt_token_ids: Option<Vec<u32>>,
    #[serde(default)]
    generation_token_ids: Option<Vec<u32>>,
    #[serde(default)]
    generation_log_probs: Option<Vec<f64>>,
}

impl ItemTokens {
    pub(super) fn into_token_ids(self, index: usize) -> Result<Option<TokenIds>, LlmError> {
        TokenIds::from_fields(
            self.prompt_token_ids,
            self.generation_token_ids,
            self.generation_log_probs,
            &format!("output item {index}"),
        )
    }
}

/// The one generation's tokens of a reply: at most one item carries them.
pub(super) fn keep_one(
    found: &mut Option<(usize, TokenIds)>,
    index: usize,
    tokens: Option<TokenIds>,
) -> Result<(), LlmError> {
    let Some(tokens) = tokens else { return Ok(()) };
    if let Some((first, _)) = found {
        return Err(LlmError::Malformed(format!(
            "output items {first} and {index} both carry token fields; one generation has one \
             set of token ids"
        )));
    }
    *found = Some((index, tokens));
    Ok(())
}
