//! A batch request's `custom_id`: which judge call it is (judge hash,
//! conversations, order, sample, prompt) and which attempt. Deterministic, so
//! a restarted job knows its own requests; with the attempt in it, no id is
//! ever sent twice.

use crate::judge::Order;

/// One judge call, whatever the attempt.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct CallKey {
    pub judge_hash: String,
    pub a: i64,
    pub b: Option<i64>,
    pub order: Order,
    pub sample: u32,
    pub prompt_hash: String,
}

impl CallKey {
    /// `j` + 12 hex of the judge hash, the conversations (`0` for none),
    /// order, sample and 12 hex of the prompt's hash: at most 64 characters
    /// with the attempt while conversation ids have at most 10 digits.
    pub fn base(&self) -> String {
        format!(
            "j{}-{}-{}-{}-{}-{}",
            prefix(&self.judge_hash),
            self.a,
            self.b.unwrap_or(0),
            self.order.as_str(),
            self.sample,
            prefix(&self.prompt_hash)
        )
    }

    /// The id of this call's `attempt`-th submission (from 1).
    pub fn custom_id(&self, attempt: i64) -> String {
        format!("{}-{attempt}", self.base())
    }
}

fn prefix(hex: &str) -> &str {
    hex.get(..12).unwrap_or(hex)
}

/// The call part of a custom id (without its attempt).
pub(super) fn base_of(custom_id: &str) -> &str {
    custom_id
        .rsplit_once('-')
        .map_or(custom_id, |(base, _)| base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> CallKey {
        CallKey {
            judge_hash: "a".repeat(64),
            a: 9_999_999_999,
            b: Some(9_999_999_999),
            order: Order::Single,
            sample: 99,
            prompt_hash: "f".repeat(64),
        }
    }

    #[test]
    fn custom_ids_are_deterministic_short_and_differ_by_attempt() {
        let k = key();
        assert_eq!(k.custom_id(1), key().custom_id(1));
        assert_ne!(k.custom_id(1), k.custom_id(2));
        assert!(k.custom_id(10).len() <= 64, "{}", k.custom_id(10).len());
        assert_eq!(base_of(&k.custom_id(3)), k.base());
    }

    #[test]
    fn every_part_of_the_call_changes_its_id() {
        let k = key();
        let variants = [
            CallKey { a: 1, ..key() },
            CallKey { b: None, ..key() },
            CallKey {
                order: Order::Ab,
                ..key()
            },
            CallKey { sample: 0, ..key() },
            CallKey {
                prompt_hash: "0".repeat(64),
                ..key()
            },
            CallKey {
                judge_hash: "b".repeat(64),
                ..key()
            },
        ];
        for v in variants {
            assert_ne!(v.custom_id(1), k.custom_id(1));
        }
        let single = CallKey {
            b: None,
            a: 7,
            ..key()
        }
        .custom_id(1);
        assert!(
            single.starts_with("jaaaaaaaaaaaa-7-0-single-99-ffffffffffff-"),
            "{single}"
        );
    }
}
