//! What makes imported conversations the same: their content (a conversation
//! imported twice is stored once) and their prompt (answers to the same
//! prompt are grouped, and paired when two models' answers are judged).

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::ImportedConversation;
use crate::llm::message::Role;

/// The conversation's identity: a hash of everything read from its source,
/// so the same conversation imported again (from any file or line) is
/// found, and any difference makes another.
pub fn content_hash(c: &ImportedConversation) -> String {
    /// Borrowed, so nothing is copied to be hashed.
    #[derive(Serialize)]
    struct Canonical<'a> {
        system: &'a Option<String>,
        messages: &'a [crate::llm::message::Message],
        tools: &'a [serde_json::Value],
        reward: Option<f64>,
        metadata: &'a serde_json::Map<String, serde_json::Value>,
        origin: (&'a Option<String>, &'a Option<String>, Option<i64>),
        scenario: &'a Option<crate::persona::UserScenario>,
        simulated_user: bool,
    }
    /// Bytes written straight into the hash.
    struct Hashing(Sha256);
    impl std::io::Write for Hashing {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.update(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let canonical = Canonical {
        system: &c.system_prompt,
        messages: &c.messages,
        tools: &c.tools,
        reward: c.reward,
        metadata: &c.metadata,
        origin: (&c.origin.scenario_id, &c.origin.persona_id, c.origin.trial),
        scenario: &c.scenario,
        simulated_user: c.simulated_user,
    };
    let mut hashing = Hashing(Sha256::new());
    // Writing to a hash cannot fail, and these values always serialize.
    let _ = serde_json::to_writer(&mut hashing, &canonical);
    hex(&hashing.0.finalize()[..16])
}

/// A conversation without a task id is grouped with the others that answer
/// the same prompt: the same system prompt and first user message.
pub fn prompt_id(c: &ImportedConversation) -> String {
    let first_user = c.messages.iter().find(|m| m.role == Role::User);
    prompt_key(
        c.system_prompt.as_deref().unwrap_or_default(),
        first_user.map_or("", |m| &m.content),
    )
}

/// `prompt-` and a hash of a system prompt and a first user message: what
/// conversations answering the same prompt share (pairwise `--match-by
/// prompt` too).
pub fn prompt_key(system: &str, first_user: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(system.as_bytes());
    hasher.update([0]);
    hasher.update(first_user.as_bytes());
    format!("prompt-{}", hex(&hasher.finalize()[..6]))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Format;

    fn read(text: &str) -> ImportedConversation {
        Format::Openai.read_line(text, 1).unwrap()
    }

    #[test]
    fn the_same_content_has_the_same_hash_and_any_change_another() {
        let a = r#"{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}"#;
        let b = r#"{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello!"}]}"#;
        assert_eq!(content_hash(&read(a)), content_hash(&read(a)));
        assert_ne!(content_hash(&read(a)), content_hash(&read(b)));
        assert_eq!(content_hash(&read(a)).len(), 32);
    }

    #[test]
    fn answers_to_one_prompt_share_its_key() {
        let a = r#"{"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}, {"role": "assistant", "content": "A1"}]}"#;
        let b = r#"{"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}, {"role": "assistant", "content": "A2"}]}"#;
        assert_eq!(prompt_id(&read(a)), prompt_id(&read(b)));
        assert_eq!(prompt_id(&read(a)), prompt_key("S", "Q"));
        assert_ne!(prompt_key("S", "Q"), prompt_key("SQ", ""));
    }
}
