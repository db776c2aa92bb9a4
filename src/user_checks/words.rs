//! Words and entities of a message: normalized words with their place in the
//! text (for n-gram overlap), and the emails, ids and amounts it states.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

use regex::Regex;

/// A word of a text: lower-cased, curly apostrophes made straight, and where
/// it is in the text (bytes), so a match can be quoted as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub norm: String,
    pub start: usize,
    pub end: usize,
}

/// The words of `text`: runs of letters, digits and apostrophes.
pub fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start = None;
    let is_word = |c: char| c.is_alphanumeric() || c == '\'' || c == '’';
    for (at, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (start, is_word(c)) {
            (None, true) => start = Some(at),
            (Some(from), false) => {
                let raw = &text[from..at];
                let norm: String = if raw.is_ascii() {
                    raw.to_ascii_lowercase()
                } else {
                    raw.chars()
                        .map(|c| if c == '’' { '\'' } else { c })
                        .flat_map(char::to_lowercase)
                        .collect()
                };
                let norm = norm.trim_matches('\'').to_string();
                if !norm.is_empty() {
                    out.push(Word {
                        norm,
                        start: from,
                        end: at,
                    });
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// A word with the first and second person folded together, so "You ordered
/// boots" (the scenario) and "I ordered boots" (the user retelling it) read
/// the same.
pub fn fold_person(word: &str) -> &str {
    match word {
        "i" | "me" => "you",
        "my" => "your",
        "mine" => "yours",
        "myself" => "yourself",
        "i'm" => "you're",
        "i've" => "you've",
        "i'll" => "you'll",
        "i'd" => "you'd",
        "am" => "are",
        "was" => "were",
        other => other,
    }
}

/// A word as it is: no folding.
pub fn as_written(word: &str) -> &str {
    word
}

/// An n-gram of words, as a 64-bit hash of its folded words: sets of them
/// are compared for every line of every conversation, and a hash costs no
/// allocation. Two different n-grams share a hash with odds of about one in
/// 2^64 per pair, far below anything a flag rate could show.
pub type Gram = u64;

/// A set of [`Gram`]s. They are hashes already, so the set uses them as
/// they are instead of hashing them again.
pub type GramSet = HashSet<Gram, BuildHasherDefault<GramIdentity>>;

/// The hasher of a [`GramSet`]: the gram itself.
#[derive(Default)]
pub struct GramIdentity(u64);

impl Hasher for GramIdentity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(GRAM_MIX);
        }
    }
    fn write_u64(&mut self, gram: u64) {
        self.0 = gram;
    }
}

/// An odd constant with well-spread bits (FxHash's), for mixing bytes.
const GRAM_MIX: u64 = 0x517c_c1b7_2722_0a95;

/// The n-grams of `words`, each word folded by `fold`.
pub fn ngrams(words: &[Word], n: usize, fold: fn(&str) -> &str) -> GramSet {
    if n == 0 {
        return GramSet::default();
    }
    words.windows(n).map(|w| gram(w, fold)).collect()
}

/// The [`Gram`] of a window of words, each folded by `fold`.
pub fn gram(window: &[Word], fold: fn(&str) -> &str) -> Gram {
    let mut h: u64 = 0;
    for w in window {
        for &b in fold(&w.norm).as_bytes() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(GRAM_MIX);
        }
        // A separator, so "ab c" and "a bc" differ.
        h = (h.rotate_left(5) ^ 0xff).wrapping_mul(GRAM_MIX);
    }
    h
}

/// The first run of at least `n` words of `words` whose every n-gram is in
/// `found` and in none of `allowed`, as a range of word positions, extended
/// as far as it goes.
pub fn shared_run(
    words: &[Word],
    n: usize,
    fold: fn(&str) -> &str,
    found: &GramSet,
    allowed: &[&GramSet],
) -> Option<std::ops::Range<usize>> {
    if n == 0 || words.len() < n {
        return None;
    }
    let hit = |i: usize| {
        let gram = gram(&words[i..i + n], fold);
        found.contains(&gram) && !allowed.iter().any(|a| a.contains(&gram))
    };
    let first = (0..=words.len() - n).find(|&i| hit(i))?;
    let mut last = first;
    while last + 1 + n <= words.len() && hit(last + 1) {
        last += 1;
    }
    Some(first..last + n)
}

/// The text a range of words covers, as written.
pub fn quote<'a>(text: &'a str, words: &[Word], range: std::ops::Range<usize>) -> &'a str {
    match (
        words.get(range.start),
        range.end.checked_sub(1).and_then(|e| words.get(e)),
    ) {
        (Some(first), Some(last)) => &text[first.start..last.end],
        _ => "",
    }
}

/// What kind of fact an entity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntityKind {
    Email,
    /// `$42`, `1,234.50`, `500 dollars`.
    Amount,
    /// An order number, an account, card or reservation id, a code:
    /// `#W123`, `LL21743`, `70116`, `EHGLP3`, `emma_kim_9957`.
    Id,
}

impl EntityKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::Email => "email",
            EntityKind::Amount => "amount",
            EntityKind::Id => "id",
        }
    }
}

/// A fact stated in a text: its kind, its normal form (what is compared)
/// and the text as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    pub kind: EntityKind,
    pub norm: String,
    pub text: String,
}

static EMAIL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}").ok()
});
static AMOUNT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\$\s?\d[\d,]*(?:\.\d+)?|(?-u:\b)\d[\d,]*\.\d\d(?-u:\b)|(?-u:\b)\d[\d,]*(?:\.\d+)?[ -]?(?:dollars?|usd|bucks)(?-u:\b)",
    )
    .ok()
});
// ASCII word boundaries (`(?-u:\b)`): ids are ASCII, and the Unicode
// boundary keeps the regex off its fastest engine. Each match is a
// candidate that [`is_id`] keeps or not.
static ID: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"#[A-Za-z0-9-]{3,}|(?-u:\b)[A-Za-z0-9][A-Za-z0-9_-]{4,}").ok());
/// What looks like an id but is a measure, an ordinal or a compound of a
/// number and a word: `24-hour`, `100th`, `750ml`, `60x80`, `11am`.
static NOT_ID: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)^\d+(?:(?:-[a-z]+)+|st|nd|rd|th|ml|mm|cm|m|kg|g|lbs?|oz|gb|tb|mb|in|ft|km|mi|am|pm|s)$|^\d{1,3}x\d{1,3}$")
        .ok()
});

/// Whether `token` (a match of [`ID`]) is an id: `#` and 3 more
/// characters, or at least 5 characters of letters, digits, `_` and `-`
/// with a digit and a letter or `_` (`EHGLP3`, `emma_kim_9957`,
/// `ORD-20251208`), or 5 digits and more (`70116`); not a date or a phone
/// number (digits and dashes) nor a measure ([`NOT_ID`]).
fn is_id(token: &str) -> bool {
    if let Some(rest) = token.strip_prefix('#') {
        return rest.len() >= 3;
    }
    let token = token.trim_end_matches(['-', '_']);
    let digit = token.bytes().any(|b| b.is_ascii_digit());
    let letter = token.bytes().any(|b| b.is_ascii_alphabetic() || b == b'_');
    let all_digits = token.bytes().all(|b| b.is_ascii_digit());
    token.len() >= 5
        && digit
        && (all_digits || letter)
        && !NOT_ID.as_ref().is_some_and(|n| n.is_match(token))
}

/// The emails, amounts and ids `text` states, in that order of precedence (a
/// span taken by one kind is not read again as another).
pub fn entities(text: &str) -> Vec<Entity> {
    let mut taken: Vec<std::ops::Range<usize>> = Vec::new();
    let mut out = Vec::new();
    // Every email has an `@`, every amount a digit, every id a digit or a
    // `#`: most lines of a conversation need no regex at all.
    let digit = text.bytes().any(|b| b.is_ascii_digit());
    for (kind, pattern, may_hold) in [
        (EntityKind::Email, &EMAIL, text.contains('@')),
        (EntityKind::Amount, &AMOUNT, digit),
        (EntityKind::Id, &ID, digit || text.contains('#')),
    ] {
        let Some(pattern) = pattern.as_ref().filter(|_| may_hold) else {
            continue;
        };
        for m in pattern.find_iter(text) {
            if taken.iter().any(|r| r.start < m.end() && m.start() < r.end) {
                continue;
            }
            if kind == EntityKind::Id && !is_id(m.as_str()) {
                continue;
            }
            taken.push(m.range());
            if let Some(norm) = normalize(kind, m.as_str()) {
                out.push(Entity {
                    kind,
                    norm,
                    text: m.as_str().to_string(),
                });
            }
        }
    }
    out
}

/// The form two mentions of one fact share: lower case; no `#`, `-` or
/// spaces in an id; an amount as its number ("$1,234.50" and "1234.5" agree,
/// as do "$42" and "42.00").
fn normalize(kind: EntityKind, text: &str) -> Option<String> {
    match kind {
        EntityKind::Email => Some(text.to_lowercase()),
        EntityKind::Id => Some(
            text.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect(),
        ),
        EntityKind::Amount => {
            let digits: String = text
                .chars()
                .filter(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let value: f64 = digits.parse().ok()?;
            let cents = (value * 100.0).round();
            Some(if cents % 100.0 == 0.0 {
                format!("{}", cents / 100.0)
            } else {
                format!("{:.2}", cents / 100.0)
            })
        }
    }
}

/// The normal forms of the entities of `texts`: what a speaker has said, or
/// a scenario gives. The parts of a joined id that are ids themselves count
/// too: the agent's `gift_card_5634230` is the user's "the card ending in
/// 5634230".
pub fn entity_set<'a>(texts: impl IntoIterator<Item = &'a str>) -> HashSet<(EntityKind, String)> {
    let mut set = HashSet::new();
    for e in texts.into_iter().flat_map(entities) {
        if e.kind == EntityKind::Id {
            let parts: Vec<&str> = e.text.split(['_', '-']).collect();
            for part in parts.iter().filter(|p| parts.len() > 1 && is_id(p)) {
                set.extend(normalize(e.kind, part).map(|n| (e.kind, n)));
            }
        }
        set.insert((e.kind, e.norm));
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn norms(text: &str) -> Vec<String> {
        words(text).into_iter().map(|w| w.norm).collect()
    }

    #[test]
    fn words_are_lower_case_with_straight_apostrophes_and_their_place() {
        assert_eq!(
            norms("I’m the  Desk, OK?"),
            vec!["i'm", "the", "desk", "ok"]
        );
        let text = "Hello, world";
        let w = words(text);
        assert_eq!(&text[w[1].start..w[1].end], "world");
    }

    #[test]
    fn a_shared_run_is_found_extended_and_quoted_as_written() {
        let source = words("Ask for the tracking number of your boots and thank the agent.");
        let found = ngrams(&source, 4, fold_person);
        let text = "Well, ask for the tracking number of my boots, please.";
        let said = words(text);
        let run = shared_run(&said, 4, fold_person, &found, &[]).unwrap();
        assert_eq!(
            quote(text, &said, run),
            "ask for the tracking number of my boots"
        );
        let allowed = ngrams(&words("for the tracking number of"), 4, fold_person);
        let run = shared_run(&said, 4, fold_person, &found, &[&allowed]);
        assert_eq!(
            run.map(|r| quote(text, &said, r)),
            Some("ask for the tracking")
        );
    }

    #[test]
    fn entities_are_emails_amounts_and_ids_in_a_normal_form() {
        let found = entities(
            "Email theo.lindqvist@inkwell.example. Order #LL21743, refund $1,234.50 or 42.00, zip 70116, 12 days.",
        );
        let got: Vec<(EntityKind, &str, &str)> = found
            .iter()
            .map(|e| (e.kind, e.norm.as_str(), e.text.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    EntityKind::Email,
                    "theo.lindqvist@inkwell.example",
                    "theo.lindqvist@inkwell.example"
                ),
                (EntityKind::Amount, "1234.50", "$1,234.50"),
                (EntityKind::Amount, "42", "42.00"),
                (EntityKind::Id, "ll21743", "#LL21743"),
                (EntityKind::Id, "70116", "70116"),
            ]
        );
        assert_eq!(entity_set(["it is $42"]), entity_set(["42.00 dollars"]));
        assert_eq!(entity_set(["the 500 dollar one"]), entity_set(["$500"]));
        assert_eq!(entity_set(["order LL21743"]), entity_set(["#LL21743"]));
    }

    #[test]
    fn ids_are_codes_of_letters_and_digits_not_dates_measures_or_phone_numbers() {
        let ids = |text: &str| -> Vec<String> {
            entities(text)
                .into_iter()
                .filter(|e| e.kind == EntityKind::Id)
                .map(|e| e.norm)
                .collect()
        };
        assert_eq!(
            ids("I am emma_kim_9957, reservation EHGLP3, order ORD-20251208-E2025, code 847291."),
            ["emmakim9957", "ehglp3", "ord20251208e2025", "847291"]
        );
        assert!(ids(
            "On 2024-05-20 at 10:30, call 555-0198 within 24-hours: the 100th, 750ml, 60x80, 11am, 1990s flight."
        )
        .is_empty());
        assert!(
            entity_set(["Use gift_card_5634230."]).contains(&(EntityKind::Id, "5634230".into()))
        );
    }

    #[test]
    fn the_patterns_compile() {
        assert!(EMAIL.is_some() && AMOUNT.is_some() && ID.is_some());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn words_and_entities_never_panic_and_quote_inside_the_text(text in "\\PC{0,120}") {
            let w = words(&text);
            for word in &w {
                prop_assert!(word.start < word.end && word.end <= text.len());
                prop_assert!(!word.norm.is_empty());
            }
            if !w.is_empty() {
                let quoted = quote(&text, &w, 0..w.len());
                prop_assert!(text.contains(quoted));
            }
            for e in entities(&text) {
                prop_assert!(text.contains(&e.text));
            }
        }

        #[test]
        fn a_message_shares_every_run_with_itself(text in "[a-z ]{0,80}", n in 1usize..6) {
            let w = words(&text);
            let grams = ngrams(&w, n, fold_person);
            let run = shared_run(&w, n, fold_person, &grams, &[]);
            prop_assert_eq!(run.is_some(), w.len() >= n);
            if let Some(run) = run {
                prop_assert_eq!(run, 0..w.len());
            }
        }
    }
}
