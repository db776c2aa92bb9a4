//! Token capture over chat completions (`capture_tokens = true`): the
//! request asks vLLM for what NeMo Gym's `vllm_model` asks it for
//! (`logprobs: true, top_logprobs: 0, return_tokens_as_token_ids: true`,
//! and `return_token_ids: true`), and the reply's token fields are read
//! where they are:
//! 1. a whole bundle on the message (`prompt_token_ids`,
//!    `generation_token_ids`, `generation_log_probs`: NeMo Gym's model
//!    servers' chat completions);
//! 2. else vLLM's: the response's `prompt_token_ids`, the choice's
//!    `token_ids`, and its `logprobs.content` (`token: "token_id:N"`,
//!    `logprob`).
//!
//! Nothing is made up: without prompt ids, generation ids or log
//! probabilities there are no tokens (`None`); ids and log probabilities
//! that disagree are a malformed response.

use super::error::LlmError;
pub use super::token_fields::{CaptureFields, ChoiceLogprobs};
use super::tokens::TokenIds;
use super::wire::WireResponse;

const TOKEN_ID_PREFIX: &str = "token_id:";

impl WireResponse {
    /// The first choice's token fields, taken out of the response.
    pub fn take_tokens(&mut self) -> Result<Option<TokenIds>, LlmError> {
        let prompt = self.prompt_token_ids.take();
        let Some(choice) = self.choices.first_mut() else {
            return Ok(None);
        };
        if let Some(message) = choice.message.as_mut() {
            let bundle = TokenIds::from_fields(
                message.prompt_token_ids.take(),
                message.generation_token_ids.take(),
                message.generation_log_probs.take(),
                "the message",
            )?;
            if bundle.is_some() {
                return Ok(bundle);
            }
        }
        let generation = choice.token_ids.take();
        let Some(entries) = choice.logprobs.take().and_then(|l| l.content) else {
            return Ok(None);
        };
        let mut log_probs = Vec::with_capacity(entries.len());
        let mut named = Vec::with_capacity(entries.len());
        for (i, entry) in entries.into_iter().enumerate() {
            log_probs.push(entry.logprob);
            named.push(match entry.token.strip_prefix(TOKEN_ID_PREFIX) {
                Some(id) => Some(id.parse::<u32>().map_err(|_| {
                    LlmError::Malformed(format!(
                        "choices[0].logprobs.content[{i}].token is not `token_id:N`"
                    ))
                })?),
                None => None,
            });
        }
        let from_logprobs: Option<Vec<u32>> = named.into_iter().collect();
        let generation = match (generation, from_logprobs) {
            (Some(ids), Some(named)) if ids != named => {
                return Err(LlmError::Malformed(
                    "choices[0].token_ids disagree with the token ids of choices[0].logprobs"
                        .into(),
                ))
            }
            (Some(ids), _) => ids,
            (None, Some(named)) => named,
            (None, None) => return Ok(None),
        };
        let Some(prompt) = prompt else {
            tracing::debug!("the reply has generation tokens but no prompt_token_ids; none kept");
            return Ok(None);
        };
        TokenIds::from_fields(
            Some(prompt),
            Some(generation),
            Some(log_probs),
            "choices[0]",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(json: &str) -> Result<Option<TokenIds>, LlmError> {
        serde_json::from_str::<WireResponse>(json)
            .unwrap()
            .take_tokens()
    }

    #[test]
    fn vllm_token_ids_and_logprobs_make_the_generations_tokens() {
        let t = tokens(
            r#"{"prompt_token_ids":[1,2],"choices":[{"message":{"content":"hi"},"token_ids":[5,6],
                "logprobs":{"content":[{"token":"token_id:5","logprob":-0.5,"top_logprobs":[]},
                                       {"token":"token_id:6","logprob":-1.5,"top_logprobs":[]}]}}]}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(t.prompt_token_ids, [1, 2]);
        assert_eq!(t.generation_token_ids, [5, 6]);
        assert_eq!(t.generation_log_probs, [-0.5, -1.5]);
        let t = tokens(
            r#"{"prompt_token_ids":[1],"choices":[{"message":{"content":"hi"},
                "logprobs":{"content":[{"token":"token_id:9","logprob":-0.1}]}}]}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(t.generation_token_ids, [9], "ids from the logprobs' tokens");
    }

    #[test]
    fn a_bundle_on_the_message_is_taken_as_it_is() {
        let t = tokens(
            r#"{"choices":[{"message":{"content":"hi","prompt_token_ids":[3],
                "generation_token_ids":[4],"generation_log_probs":[-2.0]}}]}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(t.generation_token_ids, [4]);
    }

    #[test]
    fn what_is_absent_gives_no_tokens() {
        for json in [
            r#"{"choices":[{"message":{"content":"hi"}}]}"#,
            r#"{"choices":[{"message":{"content":"hi"},"logprobs":null}]}"#,
            // Log probabilities of text tokens, without ids.
            r#"{"prompt_token_ids":[1],"choices":[{"message":{"content":"hi"},
                "logprobs":{"content":[{"token":"hi","logprob":-0.1}]}}]}"#,
            // No prompt ids.
            r#"{"choices":[{"message":{"content":"hi"},
                "logprobs":{"content":[{"token":"token_id:9","logprob":-0.1}]}}]}"#,
        ] {
            assert_eq!(tokens(json).unwrap(), None, "{json}");
        }
    }

    #[test]
    fn ids_that_disagree_or_a_partial_bundle_are_malformed() {
        for (json, says) in [
            (
                r#"{"prompt_token_ids":[1],"choices":[{"message":{},"token_ids":[5,6],
                    "logprobs":{"content":[{"token":"token_id:5","logprob":-0.5}]}}]}"#,
                "disagree",
            ),
            (
                r#"{"prompt_token_ids":[1],"choices":[{"message":{},"token_ids":[5,6],
                    "logprobs":{"content":[{"token":"x","logprob":-0.5}]}}]}"#,
                "2 generation_token_ids but 1 generation_log_probs",
            ),
            (
                r#"{"choices":[{"message":{"prompt_token_ids":[1]}}]}"#,
                "partial token fields",
            ),
            (
                r#"{"prompt_token_ids":[1],"choices":[{"message":{},
                    "logprobs":{"content":[{"token":"token_id:x","logprob":-0.5}]}}]}"#,
                "not `token_id:N`",
            ),
        ] {
            let e = tokens(json).unwrap_err();
            assert_eq!(e.class(), "malformed_response");
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    #[test]
    fn a_capturing_request_asks_for_what_vllm_model_asks_for() {
        let req = crate::llm::ChatRequest::default();
        let body = serde_json::to_value(
            super::super::wire::to_request("m", &Default::default(), &req).capturing_tokens(),
        )
        .unwrap();
        assert_eq!(body["logprobs"], true);
        assert_eq!(body["top_logprobs"], 0);
        assert_eq!(body["return_tokens_as_token_ids"], true);
        assert_eq!(body["return_token_ids"], true);
        let plain = serde_json::to_value(super::super::wire::to_request(
            "m",
            &Default::default(),
            &req,
        ))
        .unwrap();
        assert!(plain.get("logprobs").is_none(), "{plain}");
    }
}
