//! Private data in conversations: emails, phone numbers and ids found by
//! patterns and replaced by consistent fakes, before a conversation is sent
//! to a model and again in what the model wrote. The same real value gets the
//! same fake within a run (and across runs with the same seed); a fake has
//! the real value's shape (a digit for a digit, a letter for a letter of the
//! same case, everything else kept), so an email stays an email and an order
//! id stays an order id.

use std::collections::{HashMap, HashSet};

use regex::Regex;
use sha2::{Digest, Sha256};

/// A kind of private value and its default pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrivateKind {
    Email,
    Phone,
    Id,
}

impl PrivateKind {
    pub const ALL: [PrivateKind; 3] = [PrivateKind::Email, PrivateKind::Phone, PrivateKind::Id];

    pub fn as_str(self) -> &'static str {
        match self {
            PrivateKind::Email => "email",
            PrivateKind::Phone => "phone",
            PrivateKind::Id => "id",
        }
    }

    pub fn parse(name: &str) -> Option<PrivateKind> {
        PrivateKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The documented default pattern (docs/mining.md).
    pub fn pattern(self) -> &'static str {
        match self {
            PrivateKind::Email => {
                r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
            }
            PrivateKind::Phone => {
                r"(?:\+\d{1,3}[ .-]?)?(?:\(\d{3}\)|\b\d{3})[ .-]?\d{3}[ .-]?\d{4}\b"
            }
            // `#W2378156`, `ORD-12345`, `mia_li_3668`, `4242424242424242`.
            PrivateKind::Id => {
                r"#[A-Za-z]?\d{4,}\b|\b[A-Z]{2,5}[-_]?\d{4,}\b|\b[a-z]+(?:_[a-z]+)+_\d{3,}\b|\b\d{8,}\b"
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PrivacyError {
    #[error("private pattern '{pattern}' is not a regular expression: {error}")]
    Pattern {
        pattern: String,
        error: Box<regex::Error>,
    },
    #[error(
        "private pattern '{0}' matches the empty text; write a pattern that matches at least \
         one character"
    )]
    MatchesEmpty(String),
}

/// What counts as private: the kinds kept out and extra patterns.
#[derive(Debug, Clone)]
pub struct PrivacyRules {
    pub kinds: Vec<PrivateKind>,
    pub extra: Vec<String>,
    pub seed: u64,
}

impl Default for PrivacyRules {
    fn default() -> Self {
        PrivacyRules {
            kinds: PrivateKind::ALL.to_vec(),
            extra: Vec::new(),
            seed: 0,
        }
    }
}

/// Replaces private values by fakes, remembering every pair for the run.
pub struct Redactor {
    pattern: Option<Regex>,
    seed: u64,
    fakes: HashMap<String, String>,
    /// Fakes handed out: met again (in a model's answer), they stay.
    given: HashSet<String>,
}

impl Redactor {
    pub fn new(rules: &PrivacyRules) -> Result<Redactor, PrivacyError> {
        let mut alternatives: Vec<String> = Vec::new();
        for pattern in &rules.extra {
            let compiled = Regex::new(pattern).map_err(|error| PrivacyError::Pattern {
                pattern: pattern.clone(),
                error: Box::new(error),
            })?;
            if compiled.is_match("") {
                return Err(PrivacyError::MatchesEmpty(pattern.clone()));
            }
            alternatives.push(format!("(?:{pattern})"));
        }
        alternatives.extend(rules.kinds.iter().map(|k| format!("(?:{})", k.pattern())));
        let pattern = match alternatives.is_empty() {
            true => None,
            false => Some(Regex::new(&alternatives.join("|")).map_err(|error| {
                PrivacyError::Pattern {
                    pattern: alternatives.join("|"),
                    error: Box::new(error),
                }
            })?),
        };
        Ok(Redactor {
            pattern,
            seed: rules.seed,
            fakes: HashMap::new(),
            given: HashSet::new(),
        })
    }

    /// `text` with every private value replaced by its fake.
    pub fn redact(&mut self, text: &str) -> String {
        // Not a clone of the regex: a clone builds its match caches anew.
        let found: Vec<(usize, usize)> = match &self.pattern {
            None => return text.to_string(),
            Some(pattern) => pattern
                .find_iter(text)
                .map(|m| (m.start(), m.end()))
                .collect(),
        };
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for (start, end) in found {
            out.push_str(&text[last..start]);
            out.push_str(&self.fake_for(&text[start..end]));
            last = end;
        }
        out.push_str(&text[last..]);
        out
    }

    /// Every string inside `value` redacted (keys too).
    pub fn redact_json(&mut self, value: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(s) => Value::String(self.redact(s)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.redact_json(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (self.redact(k), self.redact_json(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// How many distinct private values were replaced.
    pub fn replaced(&self) -> usize {
        self.fakes.len()
    }

    fn fake_for(&mut self, real: &str) -> String {
        if self.given.contains(real) {
            return real.to_string();
        }
        if let Some(fake) = self.fakes.get(real) {
            return fake.clone();
        }
        let mut attempt: u32 = 0;
        let fake = loop {
            let candidate = same_shape(real, self.seed, attempt);
            // A fake must differ from every real value, or it would copy one.
            if candidate != real && !self.fakes.contains_key(&candidate) {
                break candidate;
            }
            attempt += 1;
            if attempt > 64 {
                // Only values without letters or digits come here; no pattern
                // matches such a value, but never copy it.
                break "x".repeat(real.chars().count().max(1));
            }
        };
        self.given.insert(fake.clone());
        self.fakes.insert(real.to_string(), fake.clone());
        fake
    }
}

/// `real` with each digit and letter replaced by one drawn from SHA-256 of
/// the seed, the attempt and the value: deterministic, same shape.
fn same_shape(real: &str, seed: u64, attempt: u32) -> String {
    let mut stream = Vec::new();
    let mut block: u64 = 0;
    let mut next = || {
        if stream.is_empty() {
            let mut hasher = Sha256::new();
            hasher.update(seed.to_le_bytes());
            hasher.update(attempt.to_le_bytes());
            hasher.update(block.to_le_bytes());
            hasher.update(real.as_bytes());
            stream = hasher.finalize().to_vec();
            stream.reverse();
            block += 1;
        }
        stream.pop().unwrap_or(0)
    };
    real.chars()
        .map(|c| match c {
            '0'..='9' => char::from(b'0' + next() % 10),
            'a'..='z' => char::from(b'a' + next() % 26),
            'A'..='Z' => char::from(b'A' + next() % 26),
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn redactor(seed: u64) -> Redactor {
        Redactor::new(&PrivacyRules {
            seed,
            ..PrivacyRules::default()
        })
        .unwrap()
    }

    #[test]
    fn emails_phones_and_ids_become_fakes_of_the_same_shape() {
        let mut r = redactor(7);
        let text =
            "I'm mia.li@example.com, call +1 415-555-0134, order #W2378156, user mia_li_3668";
        let out = r.redact(text);
        for real in [
            "mia.li@example.com",
            "415-555-0134",
            "#W2378156",
            "mia_li_3668",
        ] {
            assert!(!out.contains(real), "{real} leaked: {out}");
        }
        let email = Regex::new(PrivateKind::Email.pattern()).unwrap();
        let id = Regex::new(PrivateKind::Id.pattern()).unwrap();
        assert!(email.is_match(&out), "{out}");
        assert_eq!(id.find_iter(&out).count(), 2, "{out}");
        assert_eq!(r.replaced(), 4);
    }

    #[test]
    fn the_same_value_gets_the_same_fake_and_a_seed_decides_it() {
        let mut a = redactor(1);
        let first = a.redact("order #W2378156");
        assert_eq!(a.redact("again #W2378156"), first.replace("order", "again"));
        assert_eq!(redactor(1).redact("order #W2378156"), first);
        assert_ne!(redactor(2).redact("order #W2378156"), first);
    }

    #[test]
    fn a_fake_met_again_in_a_models_answer_stays_as_it_is() {
        let mut r = redactor(3);
        let fake = r.redact("a@b.com");
        assert_eq!(r.redact(&fake), fake);
    }

    #[test]
    fn extra_patterns_count_and_a_bad_or_empty_one_is_refused() {
        let mut r = Redactor::new(&PrivacyRules {
            extra: vec![r"\bZIP \d{5}\b".into()],
            ..PrivacyRules::default()
        })
        .unwrap();
        assert!(!r.redact("my ZIP 94107 please").contains("94107"));
        let bad = |p: &str| {
            Redactor::new(&PrivacyRules {
                extra: vec![p.into()],
                ..PrivacyRules::default()
            })
            .err()
            .unwrap()
            .to_string()
        };
        assert!(bad("(").contains("is not a regular expression"));
        assert!(bad("a*").contains("matches the empty text"));
    }

    #[test]
    fn with_no_kinds_nothing_is_replaced() {
        let mut r = Redactor::new(&PrivacyRules {
            kinds: vec![],
            ..PrivacyRules::default()
        })
        .unwrap();
        assert_eq!(r.redact("a@b.com"), "a@b.com");
    }

    fn planted() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z]{1,8}(\\.[a-z]{1,5})?@[a-z]{2,8}\\.(com|org|io)",
            "\\+1 [2-9][0-9]{2}-[0-9]{3}-[0-9]{4}",
            "\\([2-9][0-9]{2}\\) [0-9]{3}-[0-9]{4}",
            "#W[0-9]{7}",
            "[A-Z]{3}-[0-9]{5}",
            "[a-z]{2,6}_[a-z]{2,6}_[0-9]{4}",
        ]
    }

    proptest! {
        #[test]
        fn no_matched_value_survives_redaction(
            words in proptest::collection::vec("[A-Za-z0-9,.!?$']{0,10}", 0..12),
            values in proptest::collection::vec(planted(), 1..6),
            seed in any::<u64>(),
        ) {
            let mut parts = words.clone();
            for (i, v) in values.iter().enumerate() {
                parts.insert((i * 3).min(parts.len()), v.clone());
            }
            let text = parts.join(" ");
            let all = Regex::new(&PrivateKind::ALL.map(|k| format!("(?:{})", k.pattern())).join("|")).unwrap();
            let matched: Vec<String> = all.find_iter(&text).map(|m| m.as_str().to_string()).collect();
            let mut r = redactor(seed);
            let out = r.redact(&text);
            for m in &matched {
                prop_assert!(!out.contains(m.as_str()), "{m} leaked from {text}: {out}");
            }
            // Redacting what a model wrote from the fakes changes nothing more.
            prop_assert_eq!(r.redact(&out), out.clone());
        }
    }
}
