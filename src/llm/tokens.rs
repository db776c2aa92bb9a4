//! Token information a policy server may return with a generation: the type
//! lives in [`crate::token_ids`], below `store`, which keeps it beside the
//! message; the model's side of it is here.

pub use crate::token_ids::TokenIds;

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
