//! Token information a policy server may return with a generation (NeMo Gym's
//! model servers with `return_token_id_information: true`, vLLM with
//! `return_tokens_as_token_ids` and `logprobs`): the fields of NeMo Gym's
//! `TokenIDLogProbMixin`, passed through untouched, never invented.

use serde::{Deserialize, Serialize};

/// One generation's token ids and log probabilities, as the server said them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenIds {
    /// The prompt the server tokenized for this generation.
    pub prompt_token_ids: Vec<u32>,
    /// The tokens generated.
    pub generation_token_ids: Vec<u32>,
    /// One log probability per generated token.
    pub generation_log_probs: Vec<f64>,
}

impl TokenIds {
    /// The three fields as a server returned them (`where` names the place,
    /// for the error): all three, or none (`Ok(None)`); a generation with
    /// as many log probabilities as tokens. Anything else is a malformed
    /// response, never repaired.
    pub fn from_fields(
        prompt_token_ids: Option<Vec<u32>>,
        generation_token_ids: Option<Vec<u32>>,
        generation_log_probs: Option<Vec<f64>>,
        place: &str,
    ) -> Result<Option<TokenIds>, super::LlmError> {
        match (prompt_token_ids, generation_token_ids, generation_log_probs) {
            (None, None, None) => Ok(None),
            (Some(prompt), Some(generation), Some(log_probs)) => {
                if generation.len() != log_probs.len() {
                    return Err(super::LlmError::Malformed(format!(
                        "{place} has {} generation_token_ids but {} generation_log_probs",
                        generation.len(),
                        log_probs.len()
                    )));
                }
                Ok(Some(TokenIds {
                    prompt_token_ids: prompt,
                    generation_token_ids: generation,
                    generation_log_probs: log_probs,
                }))
            }
            (prompt, generation, log_probs) => {
                let missing: Vec<&str> = [
                    ("prompt_token_ids", prompt.is_none()),
                    ("generation_token_ids", generation.is_none()),
                    ("generation_log_probs", log_probs.is_none()),
                ]
                .into_iter()
                .filter_map(|(name, absent)| absent.then_some(name))
                .collect();
                Err(super::LlmError::Malformed(format!(
                    "{place} has partial token fields: {} missing",
                    missing.join(", ")
                )))
            }
        }
    }
}
