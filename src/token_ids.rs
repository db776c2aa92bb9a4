//! Token information a policy server may return with a generation (NeMo Gym's
//! model servers with `return_token_id_information: true`, vLLM with
//! `return_tokens_as_token_ids` and `logprobs`): the fields of NeMo Gym's
//! `TokenIDLogProbMixin`, passed through untouched, never invented.
//!
//! A bottom module (beside `interval`): `llm` receives them, `sim` keeps them
//! on the policy's recorded turn, `store` writes them beside the message and
//! the `nemo_gym` export and the agent server put them on rollout items.

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
