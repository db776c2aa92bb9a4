//! A Responses API server's `reasoning` items, kept with the assistant
//! message they came with: the Responses API expects them back, in order,
//! before that message's output in every later request of the conversation
//! (OpenAI refuses a `function_call` without its reasoning item; NeMo Gym's
//! model servers turn them into the model's `<think>` text). They are the
//! policy's own: the simulated user's view is built from message text only,
//! and nothing is stored or exported from here.

use std::sync::Arc;

use serde_json::value::RawValue;

/// The reasoning items of one reply, as the server wrote them (less their
/// `status` and any token fields, which a server refuses or ignores when sent
/// back). Cloning costs a reference count; a thin pointer, so that a message
/// without reasoning grows by 8 bytes only.
#[derive(Debug, Clone)]
pub struct Reasoning(Arc<Vec<Box<RawValue>>>);

impl Reasoning {
    pub fn new(items: Vec<Box<RawValue>>) -> Self {
        Reasoning(Arc::new(items))
    }

    pub fn items(&self) -> &[Box<RawValue>] {
        &self.0
    }
}

impl PartialEq for Reasoning {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(other.0.iter())
                .all(|(a, b)| a.get() == b.get())
    }
}
