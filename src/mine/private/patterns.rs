//! The documented patterns of each kind of private value (docs/mining.md).
//! A pattern with a group named `v` has a cue around its value ("my password
//! is …", "ZIP code …"): only the value is replaced, and the value is learned
//! as a known value of the run, so it is replaced where it stands bare too.
//! Some values need a check a regular expression cannot make (enough digits,
//! not an ordinary word); names found by a cue are only learned, with the
//! checks of `known`, never replaced by the pattern itself. Word boundaries
//! are ASCII ones (`(?-u:\b)`): a Unicode boundary keeps the regex engine
//! off its fast automata, twenty times slower over a conversation.

use std::sync::OnceLock;

use regex::{Regex, RegexSet};

use super::kind::PrivateKind;

/// A check of a found value: how much of it is the value (its length in
/// bytes, the whole or a shorter start of it), or `None` to drop it.
pub type Check = fn(&str) -> Option<usize>;

/// A check that keeps a value whole or drops it.
macro_rules! whole {
    ($test:expr) => {{
        fn check(v: &str) -> Option<usize> {
            let test: fn(&str) -> bool = $test;
            test(v).then_some(v.len())
        }
        check
    }};
}

/// One pattern of a kind.
pub struct KindPattern {
    pub kind: PrivateKind,
    pub regex: &'static str,
    pub check: Option<Check>,
    /// Found values are learned (checked by `known`), never replaced here.
    pub learn_only: bool,
}

const fn plain(kind: PrivateKind, regex: &'static str) -> KindPattern {
    KindPattern {
        kind,
        regex,
        check: None,
        learn_only: false,
    }
}

const fn checked(kind: PrivateKind, regex: &'static str, check: Check) -> KindPattern {
    KindPattern {
        kind,
        regex,
        check: Some(check),
        learn_only: false,
    }
}

const fn learned(kind: PrivateKind, regex: &'static str) -> KindPattern {
    KindPattern {
        kind,
        regex,
        check: None,
        learn_only: true,
    }
}

/// Separators between a cue and its value: "is", ":", "—", "it's" ...
macro_rules! joined {
    () => {
        r"(?:[ \t]*(?:(?i-u:is|was|are|of|it's|it’s|on)[ \t]|[:#=—–-])[ \t]*|[ \t]+)+"
    };
}

/// A calendar date as people write one (digits, or a month's name).
macro_rules! date {
    () => {
        concat!(
            r"[0-9]{4}[-/.][0-9]{1,2}[-/.][0-9]{1,2}",
            r"|[0-9]{1,2}[-/.][0-9]{1,2}[-/.](?:[0-9]{4}|[0-9]{2})",
            r"|(?i-u:",
            month!(),
            r")\.?[ \t]+[0-9]{1,2}(?i-u:st|nd|rd|th)?,?[ \t]+[0-9]{4}",
            r"|[0-9]{1,2}(?i-u:st|nd|rd|th)?[ \t]+(?i-u:of[ \t]+)?(?i-u:",
            month!(),
            r")\.?,?[ \t]+[0-9]{4}"
        )
    };
}

macro_rules! month {
    () => {
        "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
    };
}

/// A word of a name: a capital, then letters, apostrophes or hyphens.
macro_rules! name_word {
    () => {
        r"[A-Z](?:[^\W\d_]|['’-][^\W\d_])+"
    };
}

/// Every kind's patterns, in the order docs/mining.md lists them.
pub const PATTERNS: &[KindPattern] = &[
    // email
    plain(
        PrivateKind::Email,
        r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}",
    ),
    // phone: North American, international (+CC ...), UK national (0...)
    plain(
        PrivateKind::Phone,
        r"(?:\+1[ .-]?)?(?:\([0-9]{3}\)|(?-u:\b)[0-9]{3})[ .-]?[0-9]{3}[ .-]?[0-9]{4}(?-u:\b)",
    ),
    checked(
        PrivateKind::Phone,
        r"\+[0-9]{1,3}(?:[ .-]?(?:\([0-9]{1,4}\)|[0-9]{1,5})){2,6}(?-u:\b)",
        international_phone,
    ),
    checked(
        PrivateKind::Phone,
        r"(?-u:\b)0[0-9]{2,4}[ -]?[0-9]{3,4}[ -]?[0-9]{3,4}(?-u:\b)",
        whole!(|v| (10..=11).contains(&digits(v))),
    ),
    // id: order numbers, record ids, user ids, long numbers, ids after a cue
    plain(PrivateKind::Id, r"#[A-Za-z]?[0-9]{4,}(?-u:\b)"),
    plain(PrivateKind::Id, r"(?-u:\b)[A-Z]{2,5}[-_]?[0-9]{4,}(?-u:\b)"),
    plain(
        PrivateKind::Id,
        r"(?-u:\b)[a-z]+(?:_[a-z]+)+_[0-9]{3,}(?-u:\b)",
    ),
    plain(PrivateKind::Id, r"(?-u:\b)[0-9]{8,}(?-u:\b)"),
    checked(
        PrivateKind::Id,
        concat!(
            r"(?i-u:reservation|confirmation|booking|order|ticket|case|record locator|locator|pnr|reference|account|user)",
            r"(?:[ \t]+(?i-u:id|number|code|no\.?|num|#|locator))?",
            joined!(),
            r"(?P<v>[A-Za-z0-9]{5,12})(?-u:\b)"
        ),
        whole!(record_id),
    ),
    // payment: payment-method ids of any prefix
    plain(
        PrivateKind::Payment,
        r"(?-u:\b)[a-z]+(?:_[a-z]+)*_[0-9]{4,}(?-u:\b)",
    ),
    // card: numbers in groups, bare 13-19 digits, security codes, expiry
    plain(
        PrivateKind::Card,
        r"(?-u:\b)[0-9]{4}(?:[ -][0-9]{4}){2,3}(?:[ -][0-9]{1,4})?(?-u:\b)",
    ),
    plain(
        PrivateKind::Card,
        r"(?-u:\b)[0-9]{4}[ -][0-9]{6}[ -][0-9]{4,5}(?-u:\b)",
    ),
    plain(PrivateKind::Card, r"(?-u:\b)[0-9]{13,19}(?-u:\b)"),
    plain(
        PrivateKind::Card,
        concat!(
            r"(?i-u:cvv2?|cvc2?|csc|security code|card verification (?:code|value))",
            r"[^0-9]{0,12}?(?P<v>[0-9]{3,4})(?-u:\b)"
        ),
    ),
    plain(
        PrivateKind::Card,
        concat!(
            r"(?i-u:expiry|expiration|expires|exp\.?|valid thru|valid through)(?: date)?",
            r"[^0-9]{0,6}?(?P<v>(?:0?[1-9]|1[0-2])[ \t]?/[ \t]?(?:20)?[0-9]{2})(?-u:\b)"
        ),
    ),
    // secret: API keys and tokens by their prefixes, JWTs, a value after a cue
    plain(
        PrivateKind::Secret,
        r"(?-u:\b)sk-(?:proj-|ant-|svcacct-|admin-|live-)?[A-Za-z0-9_-]{20,}",
    ),
    plain(
        PrivateKind::Secret,
        r"(?-u:\b)[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}",
    ),
    plain(
        PrivateKind::Secret,
        r"(?-u:\b)(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}(?-u:\b)",
    ),
    plain(
        PrivateKind::Secret,
        r"(?-u:\b)(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}",
    ),
    plain(PrivateKind::Secret, r"(?-u:\b)github_pat_[A-Za-z0-9_]{30,}"),
    plain(PrivateKind::Secret, r"(?-u:\b)glpat-[A-Za-z0-9_-]{20,}"),
    plain(
        PrivateKind::Secret,
        r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}",
    ),
    plain(PrivateKind::Secret, r"(?-u:\b)AIza[0-9A-Za-z_-]{35}"),
    plain(PrivateKind::Secret, r"(?-u:\b)hf_[A-Za-z0-9]{30,}"),
    plain(
        PrivateKind::Secret,
        r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    plain(
        PrivateKind::Secret,
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    ),
    checked(
        PrivateKind::Secret,
        concat!(
            r"(?i-u:api[ _-]?key|secret(?:[ _-]?access)?[ _-]?key|access[ _-]?token|auth(?:orization)?[ _-]?token|client[ _-]?secret|bearer|token)",
            joined!(),
            r#"["'“‘]?(?P<v>[A-Za-z0-9._~+/=-]{16,})"#
        ),
        whole!(
            |v| v.chars().any(|c| c.is_ascii_digit()) && v.chars().any(|c| c.is_ascii_alphabetic())
        ),
    ),
    // password: a value after a cue
    checked(
        PrivateKind::Password,
        concat!(
            r"(?i-u:password|passcode|passphrase|pass code|pin code|pin number|pin|pwd|one-time code|verification code|security answer)",
            r"(?:[ \t]*(?:(?i-u:is|was|are)[ \t]|[:=—–-])[ \t]*)+(?i-u:now[ \t]+)?",
            r#"["'“‘]?(?P<v>[^\s"'”’]*[^\s"'”’.,;:!?)])"#
        ),
        whole!(password),
    ),
    // ssn
    plain(
        PrivateKind::Ssn,
        r"(?-u:\b)[0-9]{3}-[0-9]{2}-[0-9]{4}(?-u:\b)",
    ),
    plain(
        PrivateKind::Ssn,
        r"(?-u:\b)[0-9]{3} [0-9]{2} [0-9]{4}(?-u:\b)",
    ),
    plain(
        PrivateKind::Ssn,
        r"(?i-u:ssn|social security(?: number| no\.?)?)[^0-9]{0,16}?(?P<v>[0-9]{9})(?-u:\b)",
    ),
    // iban
    checked(
        PrivateKind::Iban,
        r"(?-u:\b)[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?-u:\b)",
        whole!(|v| digits(v) >= 8 && (15..=34).contains(&v.chars().filter(|c| *c != ' ').count())),
    ),
    // ip
    plain(
        PrivateKind::Ip,
        r"(?-u:\b)(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?-u:\b)",
    ),
    plain(
        PrivateKind::Ip,
        r"(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?-u:\b)",
    ),
    checked(
        PrivateKind::Ip,
        r"(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,5})?(?-u:\b)|::(?:[0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4}(?-u:\b)",
        whole!(|v| digits(v) > 0 && v.split(':').filter(|g| !g.is_empty()).count() >= 2),
    ),
    // zip: after a cue, or after a US state's code
    plain(
        PrivateKind::Zip,
        concat!(
            r"(?i-u:zip(?:[ \t]?code)?|postal[ \t]?code|post[ \t]?code)",
            joined!(),
            r"(?P<v>[0-9]{5}(?:-[0-9]{4})?|[A-Z]{1,2}[0-9][A-Z0-9]?[ \t]?[0-9][A-Z]{2})(?-u:\b)"
        ),
    ),
    plain(
        PrivateKind::Zip,
        concat!(
            r"(?-u:\b)(?:AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY)",
            r",?[ \t]+(?P<v>[0-9]{5}(?:-[0-9]{4})?)(?-u:\b)"
        ),
    ),
    // name: learned after a cue ("my name is", "I'm", "Mr."), checked by `known`
    learned(
        PrivateKind::Name,
        concat!(
            r"(?:(?-u:\b)[Mm]y (?:full )?name is|(?-u:\b)[Mm]y name's|(?-u:\b)[Yy]our (?:full )?name is|(?-u:\b)[Nn]ame:|(?-u:\b)[Nn]ame is|(?-u:\b)[Cc]all me|(?-u:\b)[Ss]igned,?|(?-u:\b)[Rr]egards,)",
            r"[ \t]+(?P<v>",
            name_word!(),
            r"(?:[ \t]+",
            name_word!(),
            r"){0,2})"
        ),
    ),
    learned(
        PrivateKind::Name,
        concat!(
            r"(?:(?-u:\b)[Yy]ou are|(?-u:\b)I am|(?-u:\b)I'm|(?-u:\b)I’m|(?-u:\b)[Tt]his is|(?-u:\b)[Mm]yself|(?-u:\b)[Cc]ompanion|(?-u:\b)[Pp]assengers?|(?-u:\b)[Hh]usband|(?-u:\b)[Ww]ife|(?-u:\b)[Ss]on|(?-u:\b)[Dd]aughter|(?-u:\b)[Ff]riend|(?-u:\b)[Mm]other|(?-u:\b)[Ff]ather|(?-u:\b)[Pp]artner|(?-u:\b)[Bb]rother|(?-u:\b)[Ss]ister|(?-u:\b)[Cc]olleague|(?-u:\b)[Tt]raveler|(?-u:\b)[Gg]uest)",
            r"(?:[ \t]*[,(:—–-][ \t]*|[ \t]+)(?P<v>",
            name_word!(),
            r"(?:[ \t]+",
            name_word!(),
            r"){1,2})"
        ),
    ),
    learned(
        PrivateKind::Name,
        concat!(
            r"(?-u:\b)(?:Mr|Mrs|Ms|Miss|Mx|Dr)\.?[ \t]+(?P<v>",
            name_word!(),
            r"(?:[ \t]+",
            name_word!(),
            r")?)"
        ),
    ),
    // address: number and street (the street's type kept), unit numbers
    plain(
        PrivateKind::Address,
        concat!(
            r"(?-u:\b)(?P<v>[0-9]{1,6}[A-Za-z]?(?:[ \t]+(?:[NSEW]\.?|North|South|East|West))?(?:[ \t]+",
            name_word!(),
            r"\.?){1,4})[ \t]+(?:Street|St|Avenue|Ave|Road|Rd|Drive|Dr|Lane|Ln|Boulevard|Blvd|Way|Court|Ct|Place|Pl|Terrace|Ter|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Square|Sq|Trail|Trl|Crescent|Close|Row|Loop|Path|Pike|Alley|Plaza|Walk|Gardens|Hill|Heights)(?-u:\b)"
        ),
    ),
    plain(
        PrivateKind::Address,
        r"(?-u:\b)(?i-u:suite|ste|apt|apartment|unit|flat)\.?[ \t]*#?[ \t]*(?P<v>[0-9]+[A-Za-z]?|[A-Za-z][0-9]+)(?-u:\b)",
    ),
    plain(
        PrivateKind::Address,
        r"(?i-u:p\.?[ \t]?o\.?[ \t]?box)[ \t]+(?P<v>[0-9]+)(?-u:\b)",
    ),
    // dob: a date after a cue
    plain(
        PrivateKind::Dob,
        concat!(
            r"(?i-u:born(?:[ \t]+on)?|birth[ \t]?date|date[ \t]of[ \t]birth|d\.?o\.?b\.?|birthday)",
            joined!(),
            r"(?P<v>",
            date!(),
            r")"
        ),
    ),
];

/// The patterns of the chosen kinds and the user's, compiled once.
pub struct Compiled {
    /// Which patterns match a text at all: most texts match none.
    set: Option<RegexSet>,
    each: Vec<Compiled1>,
}

struct Compiled1 {
    /// `None`: a pattern of the user's.
    kind: Option<PrivateKind>,
    regex: Regex,
    check: Option<Check>,
    learn_only: bool,
}

/// A value a pattern found: its span in the text and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub start: usize,
    pub end: usize,
    pub kind: Option<PrivateKind>,
    /// Only to learn (a name after a cue), not to replace as it stands.
    pub learn_only: bool,
    /// The value of a cue (the pattern's group `v`), learned as known.
    pub cued: bool,
}

impl Compiled {
    /// `extra` are the user's patterns, already checked to compile.
    pub fn new(kinds: &[PrivateKind], extra: &[Regex]) -> Result<Compiled, regex::Error> {
        Compiled::chosen(kinds, extra, false)
    }

    /// Only the patterns with a cue (a group `v`): what learning needs.
    pub fn cues(kinds: &[PrivateKind], extra: &[Regex]) -> Result<Compiled, regex::Error> {
        Compiled::chosen(kinds, extra, true)
    }

    fn chosen(
        kinds: &[PrivateKind],
        extra: &[Regex],
        cues: bool,
    ) -> Result<Compiled, regex::Error> {
        let every = every_pattern()?;
        let cued = |regex: &Regex| regex.capture_names().any(|n| n == Some("v"));
        let mut each: Vec<Compiled1> = extra
            .iter()
            .filter(|regex| !cues || cued(regex))
            .map(|regex| Compiled1 {
                kind: None,
                regex: regex.clone(),
                check: None,
                learn_only: false,
            })
            .collect();
        for (p, regex) in PATTERNS
            .iter()
            .zip(every)
            .filter(|(p, _)| kinds.contains(&p.kind))
        {
            each.push(Compiled1 {
                kind: Some(p.kind),
                regex: regex.clone(),
                check: p.check,
                learn_only: p.learn_only,
            });
        }
        let set = if each.is_empty() {
            None
        } else if extra.is_empty() && each.len() == every_pattern_set(cues)?.len() {
            Some(every_pattern_set(cues)?.clone())
        } else {
            Some(RegexSet::new(each.iter().map(|c| c.regex.as_str()))?)
        };
        Ok(Compiled { set, each })
    }

    /// Every value the patterns find in `text` (overlaps included).
    pub fn find(&self, text: &str) -> Vec<Found> {
        let Some(set) = &self.set else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for i in set.matches(text).iter() {
            let Some(c) = self.each.get(i) else { continue };
            for caps in c.regex.captures_iter(text) {
                let cued = caps.name("v");
                let Some(m) = cued.or_else(|| caps.get(0)) else {
                    continue;
                };
                let len = match c.check {
                    None => Some(m.len()),
                    Some(check) => check(m.as_str()),
                };
                let Some(len) = len.filter(|n| *n > 0) else {
                    continue;
                };
                if fraction(text, m.start()) {
                    continue;
                }
                found.push(Found {
                    start: m.start(),
                    end: m.start() + len,
                    kind: c.kind,
                    learn_only: c.learn_only,
                    cued: cued.is_some(),
                });
            }
        }
        found
    }
}

/// Whether digits at `start` are the fraction of a number (`10.8400000000003`
/// is a price a float wrote, not an id).
fn fraction(text: &str, start: usize) -> bool {
    let mut before = text[..start].chars().rev();
    text[start..].starts_with(|c: char| c.is_ascii_digit())
        && before.next() == Some('.')
        && before.next().is_some_and(|c| c.is_ascii_digit())
}

/// Every pattern compiled, once per process (a regular expression is
/// cheap to clone; compiling them all takes a fifth of a second unoptimised).
fn every_pattern() -> Result<&'static [Regex], regex::Error> {
    static EVERY: OnceLock<Result<Vec<Regex>, regex::Error>> = OnceLock::new();
    EVERY
        .get_or_init(|| PATTERNS.iter().map(|p| Regex::new(p.regex)).collect())
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

/// Every pattern (or every pattern with a cue) as one set, for the default
/// of every kind.
fn every_pattern_set(cues: bool) -> Result<&'static RegexSet, regex::Error> {
    static EVERY: OnceLock<Result<RegexSet, regex::Error>> = OnceLock::new();
    static CUES: OnceLock<Result<RegexSet, regex::Error>> = OnceLock::new();
    let build = || {
        let every = every_pattern()?;
        let chosen = every
            .iter()
            .filter(|r| !cues || r.capture_names().any(|n| n == Some("v")));
        RegexSet::new(chosen.map(Regex::as_str))
    };
    match cues {
        true => CUES.get_or_init(build),
        false => EVERY.get_or_init(build),
    }
    .as_ref()
    .map_err(Clone::clone)
}

/// An international number: `+`, then groups up to 15 digits in all (a
/// run that goes on is cut after the last group that fits), 8 at least.
fn international_phone(v: &str) -> Option<usize> {
    let mut count = 0;
    let mut end = 0;
    for (i, c) in v.char_indices() {
        if c.is_ascii_digit() {
            count += 1;
            if count > 15 {
                break;
            }
            let next = v[i + 1..].chars().next();
            if !next.is_some_and(|n| n.is_ascii_digit()) && count >= 8 {
                end = i + 1;
            }
        }
    }
    (end > 0).then_some(end)
}

fn digits(v: &str) -> usize {
    v.chars().filter(char::is_ascii_digit).count()
}

/// A record id after a cue holds a digit, or is a code in capitals
/// (`TAMSDK`); an ordinary word after "order" is not one.
pub fn record_id(v: &str) -> bool {
    v.chars().any(|c| c.is_ascii_digit())
        || (v.len() >= 5 && v.chars().all(|c| c.is_ascii_uppercase()))
}

/// Words that follow "password is" and are not a password.
const NOT_PASSWORDS: &[&str] = &[
    "not",
    "the",
    "a",
    "an",
    "my",
    "your",
    "his",
    "her",
    "their",
    "our",
    "correct",
    "incorrect",
    "wrong",
    "right",
    "working",
    "expired",
    "required",
    "needed",
    "changed",
    "reset",
    "same",
    "still",
    "invalid",
    "valid",
    "missing",
    "empty",
    "set",
    "too",
    "also",
    "already",
    "case",
    "sensitive",
    "different",
    "locked",
    "blocked",
    "saved",
    "stored",
    "in",
    "on",
    "for",
    "to",
    "that",
    "this",
    "it",
    "one",
    "being",
    "been",
    "fine",
    "ok",
    "okay",
    "new",
    "old",
    "updated",
    "protected",
    "secure",
    "strong",
    "weak",
    "short",
    "long",
    "forgotten",
    "lost",
    "unknown",
    "what",
    "which",
    "and",
    "or",
    "but",
    "so",
    "now",
    "then",
    "there",
    "here",
    "no",
    "yes",
    "sent",
    "shown",
    "hidden",
    "attached",
    "below",
    "above",
    "something",
    "nothing",
    "just",
];

fn password(v: &str) -> bool {
    v.chars().count() >= 3 && !NOT_PASSWORDS.contains(&v.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(kind: PrivateKind, text: &str) -> Vec<String> {
        let compiled = Compiled::new(&[kind], &[]).unwrap();
        let mut found = compiled.find(text);
        found.sort_by_key(|f| f.start);
        found
            .iter()
            .map(|f| text[f.start..f.end].to_string())
            .collect()
    }

    #[test]
    fn every_pattern_compiles() {
        Compiled::new(&PrivateKind::ALL, &[]).unwrap();
    }

    #[test]
    fn cues_give_their_value_alone() {
        assert_eq!(
            values(
                PrivateKind::Password,
                "my password is hunter2! and PIN: 4471."
            ),
            ["hunter2", "4471"]
        );
        assert!(values(PrivateKind::Password, "the password is not working").is_empty());
        assert_eq!(
            values(
                PrivateKind::Id,
                "the confirmation number—it’s JMO1MG, reservation TAMSDK"
            ),
            ["JMO1MG", "TAMSDK"]
        );
        assert!(values(PrivateKind::Id, "my reservation details please").is_empty());
        assert_eq!(
            values(PrivateKind::Zip, "San Antonio, TX 78256; zip code is 94107"),
            ["78256", "94107"]
        );
        assert_eq!(
            values(
                PrivateKind::Dob,
                "born on April 23, 1987 and my date of birth is 1987-04-23"
            ),
            ["April 23, 1987", "1987-04-23"]
        );
        assert_eq!(
            values(PrivateKind::Address, "I live at 12 Elm Street, Apt 4B"),
            ["12 Elm", "4B"]
        );
    }

    #[test]
    fn card_numbers_in_any_grouping() {
        for card in [
            "4111 1111 1111 1111",
            "4111-1111-1111-1111",
            "4111111111111111",
            "3782 822463 10005",
        ] {
            assert_eq!(
                values(PrivateKind::Card, &format!("card {card} ok")),
                [card]
            );
        }
    }

    #[test]
    fn phones_of_other_countries() {
        for phone in [
            "+44 20 7946 0958",
            "020 7946 0958",
            "07700 900123",
            "+33 1 23 45 67 89",
        ] {
            assert_eq!(
                values(PrivateKind::Phone, &format!("call {phone} now")),
                [phone]
            );
        }
        assert!(values(PrivateKind::Phone, "flight HAT255 at 15:00").is_empty());
        assert!(values(PrivateKind::Id, "price 10.840000000000003").is_empty());
    }
}
