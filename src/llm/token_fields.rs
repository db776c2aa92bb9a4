//! The wire fields of token capture over chat completions: what a
//! capturing request adds, and a choice's `logprobs` as vLLM returns them.
//! Types only, sent and read by [`super::wire`] and read into token ids by
//! [`super::chat_tokens`].

use serde::{Deserialize, Serialize};

/// The fields a capturing request adds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CaptureFields {
    logprobs: bool,
    top_logprobs: u8,
    return_tokens_as_token_ids: bool,
    return_token_ids: bool,
}

impl CaptureFields {
    pub const VLLM: CaptureFields = CaptureFields {
        logprobs: true,
        top_logprobs: 0,
        return_tokens_as_token_ids: true,
        return_token_ids: true,
    };
}

/// A choice's `logprobs`.
#[derive(Debug, Deserialize)]
pub struct ChoiceLogprobs {
    #[serde(default)]
    pub(super) content: Option<Vec<TokenLogprob>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct TokenLogprob {
    pub(super) token: String,
    pub(super) logprob: f64,
}
