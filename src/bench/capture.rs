//! What token capture costs a conversation in flight (`sparring bench
//! --capture-memory`): many conversations' transcripts held at once, as the
//! engine records them (the policy's turns through
//! [`Transcript::push_generated`], the environment's results, the user's
//! words), once without token information and once with each policy
//! generation's `TokenIds` (a prompt that grows turn by turn, as a policy
//! server returns it), and the resident anonymous memory each costs per
//! conversation. The mock model server returns no token ids, so the lists
//! are made here, of the sizes given; their bytes are also counted exactly.

use std::sync::Arc;

use serde::Serialize;

use crate::llm::message::{Message, ToolCall};
use crate::llm::Usage;
use crate::sim::transcript::{Author, Transcript};
use crate::token_ids::TokenIds;

use super::memory::rss_now;

/// The shape of the conversations held.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CaptureShape {
    pub conversations: usize,
    /// Policy generations per conversation (each a tool call or a reply).
    pub generations: usize,
    /// Prompt tokens of the first generation; each later one's prompt is
    /// the one before, its generation and a tool result or user turn more.
    pub first_prompt_tokens: usize,
    pub generation_tokens: usize,
    /// Tokens a tool result or a user turn adds to the next prompt.
    pub turn_tokens: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct CaptureFigures {
    pub shape: CaptureShape,
    /// Resident anonymous memory per conversation held, KiB.
    pub off_kib: f64,
    pub on_kib: f64,
    /// The token lists' own bytes per conversation (4 a token id, 8 a log
    /// probability), KiB: what `on_kib − off_kib` should be near.
    pub token_bytes_kib: f64,
}

/// One conversation as the engine records it; with `capture`, each policy
/// generation carries its token information.
fn transcript(shape: &CaptureShape, n: usize, capture: bool) -> Transcript {
    let mut t = Transcript::default();
    t.push(
        Message::system(format!("You are a retail agent ({n}). Follow the policy.")),
        Author::System,
    );
    t.push(
        Message::user("Hi, I want to return the lamp from order #W1234."),
        Author::System,
    );
    let mut prompt = shape.first_prompt_tokens;
    for g in 0..shape.generations {
        let tokens = capture.then(|| {
            Arc::new(TokenIds {
                prompt_token_ids: (0..prompt as u32).collect(),
                generation_token_ids: (0..shape.generation_tokens as u32).collect(),
                generation_log_probs: vec![-0.5; shape.generation_tokens],
            })
        });
        let usage = Usage {
            prompt_tokens: prompt as u64,
            completion_tokens: shape.generation_tokens as u64,
        };
        if g % 2 == 0 {
            let mut call = Message::assistant("");
            call.tool_calls.push(ToolCall {
                id: format!("call_{n}_{g}"),
                name: "get_order_details".into(),
                arguments: "{\"order_id\": \"#W1234\"}".into(),
            });
            t.push_generated(call, Author::Policy, usage, 200, tokens);
            t.push(
                Message::tool_result(
                    format!("call_{n}_{g}"),
                    "{\"order_id\": \"#W1234\", \"status\": \"delivered\", \"items\": [\"lamp\"]}",
                ),
                Author::Env,
            );
        } else {
            t.push_generated(
                Message::assistant("I can return the lamp; shall I refund it to your card?"),
                Author::Policy,
                usage,
                200,
                tokens,
            );
            t.push_generated(
                Message::user("Yes please, to the card."),
                Author::User,
                Usage::default(),
                150,
                None,
            );
        }
        prompt += shape.generation_tokens + shape.turn_tokens;
    }
    t
}

/// Hold `shape.conversations` transcripts, without and then with token
/// information, and measure each.
pub fn capture_memory(shape: CaptureShape) -> CaptureFigures {
    let per = |capture: bool| -> f64 {
        let before = rss_now().anon;
        let held: Vec<Transcript> = (0..shape.conversations)
            .map(|n| transcript(&shape, n, capture))
            .collect();
        let after = rss_now().anon;
        drop(held);
        after.saturating_sub(before) as f64 / shape.conversations.max(1) as f64
    };
    let off_kib = per(false);
    let on_kib = per(true);
    let token_bytes: usize = (0..shape.generations)
        .map(|g| {
            let prompt =
                shape.first_prompt_tokens + g * (shape.generation_tokens + shape.turn_tokens);
            4 * prompt + 12 * shape.generation_tokens
        })
        .sum();
    CaptureFigures {
        shape,
        off_kib,
        on_kib,
        token_bytes_kib: token_bytes as f64 / 1024.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_policys_generations_carry_tokens_and_the_model_never_sees_them() {
        let shape = CaptureShape {
            conversations: 1,
            generations: 4,
            first_prompt_tokens: 100,
            generation_tokens: 10,
            turn_tokens: 5,
        };
        let t = transcript(&shape, 0, true);
        let carried: Vec<usize> = t
            .messages
            .iter()
            .filter_map(|r| r.tokens.as_ref().map(|k| k.prompt_token_ids.len()))
            .collect();
        assert_eq!(carried, [100, 115, 130, 145]);
        assert!(t
            .messages
            .iter()
            .filter(|r| r.author != Author::Policy)
            .all(|r| r.tokens.is_none()));
        // What a model is sent is messages, which have no place for them.
        let view = serde_json::to_string(&t.policy_view()).unwrap();
        assert!(!view.contains("token_ids"), "{view}");
        assert!(transcript(&shape, 0, false)
            .messages
            .iter()
            .all(|r| r.tokens.is_none()));
    }
}
