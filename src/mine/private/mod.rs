//! Private data in conversations, replaced by consistent fakes before a
//! conversation is sent to a model and again in what the model wrote. Two
//! sources say what is private: the documented patterns of each kind
//! (`patterns`, plus the user's), and the values the conversations
//! themselves name as private (`known`: a tool result's `user_id`, `dob` or
//! `zip`, the scenario's "your reservation number is XEWRD9"), learned from
//! every conversation of the job before the first is sent and then replaced
//! wherever they stand. The same real value gets the same fake within a run
//! (and across runs with the same seed); a fake has the real value's shape
//! (`fake`), so an email stays an email and an order id stays an order id.

mod dates;
mod fake;
mod kind;
mod known;
mod patterns;

use std::collections::{HashMap, HashSet};

use aho_corasick::{AhoCorasick, MatchKind};
use regex::Regex;

use crate::store::StoredConversation;

pub use kind::PrivateKind;
pub use patterns::PATTERNS;

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

/// Texts this long met a second time are kept with their redaction (the
/// same text always gets the same redaction once learning is done), at most
/// `MEMO_MOST` of them.
const MEMO_TEXT: usize = 1024;
const MEMO_MOST: usize = 256;

/// A span of a text to replace, and the kind of its value.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    kind: Option<PrivateKind>,
}

/// The known values, searched for in one pass.
struct Literals {
    automaton: Option<AhoCorasick>,
    values: Vec<(String, PrivateKind)>,
}

/// Replaces private values by fakes, remembering every pair for the run.
pub struct Redactor {
    kinds: Vec<PrivateKind>,
    patterns: patterns::Compiled,
    /// The patterns with a cue, for learning.
    cues: patterns::Compiled,
    /// Hashes of the long texts learning has read.
    read: HashSet<u64>,
    /// Long texts met twice (a job's system prompt), redacted once.
    memo: HashMap<String, String>,
    /// Hashes of the long texts redacted once.
    redacted_once: HashSet<u64>,
    seed: u64,
    /// Values the conversations name as private, and their kinds.
    known: HashMap<String, PrivateKind>,
    /// `known` ready to search; `None` after something new was learned.
    literals: Option<Literals>,
    fakes: HashMap<String, String>,
    /// Fakes handed out: met again (in a model's answer), they stay.
    given: HashSet<String>,
    /// `given` ready to search, and how many fakes it held when built.
    given_literals: Option<(AhoCorasick, usize)>,
}

impl Redactor {
    pub fn new(rules: &PrivacyRules) -> Result<Redactor, PrivacyError> {
        let mut extra = Vec::new();
        for pattern in &rules.extra {
            let compiled = Regex::new(pattern).map_err(|error| PrivacyError::Pattern {
                pattern: pattern.clone(),
                error: Box::new(error),
            })?;
            if compiled.is_match("") {
                return Err(PrivacyError::MatchesEmpty(pattern.clone()));
            }
            extra.push(compiled);
        }
        let compile_error = |error| PrivacyError::Pattern {
            pattern: rules.extra.join(" | "),
            error: Box::new(error),
        };
        let patterns = patterns::Compiled::new(&rules.kinds, &extra).map_err(compile_error)?;
        let cues = patterns::Compiled::cues(&rules.kinds, &extra).map_err(compile_error)?;
        Ok(Redactor {
            kinds: rules.kinds.clone(),
            patterns,
            cues,
            read: HashSet::new(),
            memo: HashMap::new(),
            redacted_once: HashSet::new(),
            seed: rules.seed,
            known: HashMap::new(),
            literals: None,
            fakes: HashMap::new(),
            given: HashSet::new(),
            given_literals: None,
        })
    }

    /// Learn the values `conversation` names as private (its records'
    /// fields, its metadata, its cues): from now on they are replaced in
    /// every text, wherever they stand.
    pub fn learn(&mut self, conversation: &StoredConversation) {
        for (value, kind) in known::learn(conversation, &self.cues, &self.kinds, &mut self.read) {
            if self.given.contains(&value) || self.known.contains_key(&value) {
                continue;
            }
            self.known.insert(value, kind);
            self.literals = None;
            self.memo.clear();
            self.redacted_once.clear();
        }
    }

    /// The values the conversations named as private, and their kinds.
    pub fn known(&self) -> impl Iterator<Item = (&str, PrivateKind)> {
        self.known.iter().map(|(v, k)| (v.as_str(), *k))
    }

    /// `text` with every private value replaced by its fake.
    pub fn redact(&mut self, text: &str) -> String {
        self.redact_keeping(text, false)
    }

    /// What a model wrote from redacted text: every private value replaced,
    /// and every fake handed out kept as it stands, even one whose parts a
    /// pattern would find again (a fake of several values that touched).
    pub fn redact_answer(&mut self, text: &str) -> String {
        self.redact_keeping(text, true)
    }

    /// Every string inside `value` redacted (keys too).
    pub fn redact_json(&mut self, value: &serde_json::Value) -> serde_json::Value {
        self.json_keeping(value, false)
    }

    /// [`Redactor::redact_answer`] of every string inside `value`.
    pub fn redact_answer_json(&mut self, value: &serde_json::Value) -> serde_json::Value {
        self.json_keeping(value, true)
    }

    fn json_keeping(&mut self, value: &serde_json::Value, keep: bool) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(s) => Value::String(self.redact_keeping(s, keep)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.json_keeping(v, keep)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (self.redact_keeping(k, keep), self.json_keeping(v, keep)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn redact_keeping(&mut self, text: &str, keep_fakes: bool) -> String {
        let long = !keep_fakes && text.len() >= MEMO_TEXT;
        if long {
            if let Some(out) = self.memo.get(text) {
                return out.clone();
            }
        }
        let out = self.redact_spans(text, keep_fakes);
        if long {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            std::hash::Hash::hash(text, &mut hasher);
            let again = !self
                .redacted_once
                .insert(std::hash::Hasher::finish(&hasher));
            if again && self.memo.len() < MEMO_MOST {
                self.memo.insert(text.to_string(), out.clone());
            }
        }
        out
    }

    fn redact_spans(&mut self, text: &str, keep_fakes: bool) -> String {
        let mut spans = self.known_in(text);
        spans.extend(
            self.patterns
                .find(text)
                .into_iter()
                .filter(|f| !f.learn_only)
                .map(|f| Span {
                    start: f.start,
                    end: f.end,
                    kind: f.kind,
                }),
        );
        if keep_fakes && !spans.is_empty() {
            let kept = self.fakes_in(text);
            spans.retain(|s| !kept.iter().any(|(a, b)| *a <= s.start && s.end <= *b));
        }
        if spans.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for span in merged(spans) {
            out.push_str(&text[last..span.start]);
            out.push_str(&self.fake_for(&text[span.start..span.end], span.kind));
            last = span.end;
        }
        out.push_str(&text[last..]);
        out
    }

    /// Where the fakes handed out stand in `text`, each a whole word.
    fn fakes_in(&mut self, text: &str) -> Vec<(usize, usize)> {
        if self.given.is_empty() {
            return Vec::new();
        }
        let stale = self
            .given_literals
            .as_ref()
            .is_none_or(|(_, n)| *n != self.given.len());
        if stale {
            self.given_literals = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(self.given.iter())
                .ok()
                .map(|a| (a, self.given.len()));
        }
        match &self.given_literals {
            Some((automaton, _)) => automaton
                .find_iter(text)
                .filter(|m| whole_word(text, m.start(), m.end()))
                .map(|m| (m.start(), m.end()))
                .collect(),
            None => Vec::new(),
        }
    }

    /// How many distinct private values were replaced.
    pub fn replaced(&self) -> usize {
        self.fakes.len()
    }

    /// Where the known values stand in `text`, each a whole word.
    fn known_in(&mut self, text: &str) -> Vec<Span> {
        if self.known.is_empty() {
            return Vec::new();
        }
        let literals = self.literals.get_or_insert_with(|| {
            let mut values: Vec<(String, PrivateKind)> =
                self.known.iter().map(|(v, k)| (v.clone(), *k)).collect();
            values.sort();
            let automaton = AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(values.iter().map(|(v, _)| v.as_str()))
                .ok();
            Literals { automaton, values }
        });
        // Any case but a name's: as written, or in capitals if it has four
        // letters or more (`MIA` is an airport; `Mia` and `GARCIA` names).
        let accept = |start: usize, end: usize, value: &str, kind: PrivateKind| {
            let found = &text[start..end];
            whole_word(text, start, end)
                && (kind != PrivateKind::Name
                    || found == value
                    || (value.chars().count() >= 4 && found == value.to_uppercase()))
        };
        let mut spans = Vec::new();
        match &literals.automaton {
            Some(automaton) => {
                for m in automaton.find_overlapping_iter(text) {
                    let Some((value, kind)) = literals.values.get(m.pattern().as_usize()) else {
                        continue;
                    };
                    if accept(m.start(), m.end(), value, *kind) {
                        spans.push(Span {
                            start: m.start(),
                            end: m.end(),
                            kind: Some(*kind),
                        });
                    }
                }
            }
            // Too many values for one automaton: each searched for alone
            // (exact case), slower but nothing is missed.
            None => {
                for (value, kind) in &literals.values {
                    for (start, _) in text.match_indices(value.as_str()) {
                        let end = start + value.len();
                        if accept(start, end, value, *kind) {
                            spans.push(Span {
                                start,
                                end,
                                kind: Some(*kind),
                            });
                        }
                    }
                }
            }
        }
        spans
    }

    fn fake_for(&mut self, real: &str, kind: Option<PrivateKind>) -> String {
        if self.given.contains(real) {
            return real.to_string();
        }
        if let Some(fake) = self.fakes.get(real) {
            return fake.clone();
        }
        let mut attempt: u32 = 0;
        let fake = loop {
            let candidate = fake::fake(real, kind, self.seed, attempt);
            // A fake must differ from every real value, or it would copy one.
            if candidate != real
                && !self.fakes.contains_key(&candidate)
                && !self.known.contains_key(&candidate)
            {
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

/// Whether `text[start..end]` stands as a whole word: no letter, digit or
/// `_` joins it on a side where the value itself begins or ends with one.
fn whole_word(text: &str, start: usize, end: usize) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let value = &text[start..end];
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    let open = !value.chars().next().is_some_and(word) || !before.is_some_and(word);
    let close = !value.chars().next_back().is_some_and(word) || !after.is_some_and(word);
    open && close
}

/// Spans in order, overlapping ones joined into one.
fn merged(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match out.last_mut() {
            Some(last) if span.start < last.end => last.end = last.end.max(span.end),
            _ => out.push(span),
        }
    }
    out
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

    fn class(c: char) -> char {
        match c {
            '0'..='9' => '9',
            'a'..='z' => 'a',
            'A'..='Z' => 'A',
            other => other,
        }
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
        let shape = |t: &str| t.chars().map(class).collect::<String>();
        assert_eq!(shape(&out), shape(text), "{out}");
        assert_eq!(r.replaced(), 4);
    }

    /// Each kind in the forms docs/mining.md gives: (text, the values in it).
    const EVERY_KIND: &[(&str, &[&str])] = &[
        ("write to dana.whitfield@example.com", &["dana.whitfield@example.com"]),
        ("call (212) 555-0199 or +44 20 7946 0958 or 07700 900123", &["555-0199", "7946 0958", "900123"]),
        ("order #W2378156, ORD-88213, user mia_li_3668, item 1008292230", &["2378156", "88213", "mia_li_3668", "1008292230"]),
        ("my reservation number is XEWRD9, confirmation code: 4WQ150", &["XEWRD9", "4WQ150"]),
        ("pay with paypal_3024827 or certificate_7583008 or gift_card_2550356", &["paypal_3024827", "certificate_7583008", "gift_card_2550356"]),
        ("card 4111 1111 1111 1111, 5500-0000-0000-0004, 378282246310005, 3782 822463 10005, CVV 737, expires 04/27", &["4111 1111", "5500-0000", "378282246310005", "822463", "737", "04/27"]),
        ("keys sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm AKIAIOSFODNN7EXAMPLE ghp_16C7e42F292c6912E7710c838347Ae178B4a", &["Ab3dEf6hIj9kLm2nOp5qRs8t", "Zx9Yw8Vu7Ts6Rq5Po4Nm", "AKIAIOSFODNN7EXAMPLE", "16C7e42F292c6912E7710c838347Ae178B4a"]),
        ("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", &["eyJhbGciOiJIUzI1NiJ9", "dozjgNryP4J3jVmNHl0w5N"]),
        ("my password is Tr0ub4dor&3, PIN: 4471", &["Tr0ub4dor&3", "4471"]),
        ("SSN 123-45-6789 or social security number 123456789", &["123-45-6789", "123456789"]),
        ("IBAN GB82 WEST 1234 5698 7654 32 or DE89370400440532013000", &["GB82 WEST", "DE89370400440532013000"]),
        ("from 192.168.10.42 and 2001:db8:85a3::8a2e:370:7334", &["192.168.10.42", "8a2e:370:7334"]),
        ("San Antonio, TX 78256; my zip code is 94107", &["78256", "94107"]),
        ("I live at 1234 Maple Avenue, Apt 5B", &["1234 Maple", "5B"]),
        ("my date of birth is 04/23/1987, born on April 23, 1987", &["04/23/1987", "April 23, 1987"]),
    ];

    #[test]
    fn every_kind_in_its_documented_forms_is_replaced() {
        for (text, values) in EVERY_KIND {
            let out = redactor(1).redact(text);
            for value in *values {
                assert!(!out.contains(value), "{value} leaked: {out}");
            }
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let text = "The current time is 2024-05-15 15:00:00 EST. Flight HAT255 from DEN to \
                    MIA on May 16th costs $149; 2 free checked bags, 4 in total. Your \
                    reservation details: economy, insurance yes. I will transfer you now, \
                    and the password reset link is on our site. Order status: delivered.";
        assert_eq!(redactor(1).redact(text), text);
    }

    #[test]
    fn a_value_a_record_names_is_replaced_bare_and_a_name_only_as_written() {
        use crate::judge::transcript::tests::row;
        let mut r = redactor(2);
        let record = serde_json::json!({"user_id": "anya_garcia_5901",
            "name": {"first_name": "Anya", "last_name": "Lee"},
            "saved_passengers": [{"first_name": "Mia", "last_name": "Garcia"}],
            "dob": "1992-11-12", "reservations": ["TAMSDK"]});
        r.learn(&known::tests::conversation(
            serde_json::Value::Null,
            vec![row("tool", &record.to_string())],
        ));
        let out = r.redact(
            "Anya Lee, born November 12th, 1992, has TAMSDK; she will flee to MIA with GARCIA.",
        );
        for real in ["Anya", "Lee", "November 12th, 1992", "TAMSDK", "GARCIA"] {
            assert!(!out.contains(real), "{real} leaked: {out}");
        }
        assert!(out.contains("; she will flee to MIA with "), "{out}");
        let dob = out
            .split(", born ")
            .nth(1)
            .unwrap()
            .split(", has")
            .next()
            .unwrap();
        assert!(dates::read(dob).is_some(), "{out}");
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
        // Values that touch are one fake, kept whole in an answer.
        let touching = r.redact("+1 415-555-0134 4111-1111-1111-1111");
        assert_eq!(
            r.redact_answer(&format!("so {touching}.")),
            format!("so {touching}.")
        );
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
            "\\+44 [1-9][0-9] [0-9]{4} [0-9]{4}",
            "#W[0-9]{7}",
            "[A-Z]{3}-[0-9]{5}",
            "[a-z]{2,6}_[a-z]{2,6}_[0-9]{4}",
            "(paypal|certificate|gift_card)_[0-9]{7}",
            "[1-9][0-9]{3}( |-)[0-9]{4}( |-)[0-9]{4}( |-)[0-9]{4}",
            "sk-(proj|ant)-[A-Za-z0-9]{24}",
            "AKIA[0-9A-Z]{16}",
            "ghp_[A-Za-z0-9]{36}",
            "[0-9]{3}-[0-9]{2}-[0-9]{4}",
            "GB[0-9]{2} [A-Z]{4} [0-9]{4} [0-9]{4} [0-9]{4} [0-9]{2}",
            "1[0-9]{2}\\.[1-9][0-9]?\\.[1-9][0-9]?\\.[1-9][0-9]?",
        ]
    }

    proptest! {
        // Each case's redactor warms its own regex caches: 64 cases, not 256.
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn no_planted_value_survives_redaction(
            words in proptest::collection::vec("[A-Za-z0-9,.!?$']{0,10}", 0..12),
            values in proptest::collection::vec(planted(), 1..6),
            seed in any::<u64>(),
        ) {
            let mut parts = words.clone();
            for (i, v) in values.iter().enumerate() {
                parts.insert((i * 3).min(parts.len()), v.clone());
            }
            let text = parts.join(" ");
            let mut r = redactor(seed);
            let out = r.redact(&text);
            for v in &values {
                prop_assert!(!out.contains(v.as_str()), "{v} leaked from {text}: {out}");
            }
            // Redacting what a model wrote from the fakes changes nothing more.
            prop_assert_eq!(r.redact_answer(&out), out.clone());
        }
    }
}
