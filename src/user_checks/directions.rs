//! The parts of a scenario's texts that tell the user how to behave rather
//! than what it wants or knows: what `instruction_leak` looks for in what
//! the user says. A user that says what its task wants ("You want to cancel
//! reservation EHGLP3" → "I want to cancel reservation EHGLP3") tells the
//! agent its errand; one that repeats how it was told to act ("If the agent
//! says no, mention that…", "Do not give your birthday") gives its
//! instructions away.
//!
//! A text is read in segments: text in quotes (`'…'`, `"…"`, `‘…’`, `“…”`) is
//! what the user is told to say word for word, so it is left out, and a run
//! never crosses it. In each segment some words are *direction marks*:
//! - the agent spoken of in the third person (`the agent`, `If Agent tells
//!   you…`; not `a human agent` or `another agent`, which a user asks for);
//! - an order at the head of a sentence or clause: one of [`ORDERS`] after
//!   the start, a stop, a semicolon or a colon, or (but for
//!   [`SENTENCE_ORDERS`]) a comma or a joining word ([`JOINERS`]):
//!   `Mention that…`, `…; do not…`, `Be polite and always end…`, `If the
//!   agent refuses, insist…`;
//! - `should` or `must` after `you`;
//! - a condition on what the user is asked ([`CONDITIONS`] before `asked`:
//!   `when asked for identification`).

use std::sync::LazyLock;

use regex::Regex;

use super::words::{words, Word};

/// Verbs (and adverbs) that, at the head of a clause, tell the user how to
/// act. Left out on purpose: verbs a user says of its own errand (ask,
/// give, provide, use, confirm, accept, decline, request, cancel, book).
pub const ORDERS: &[&str] = &[
    "mention",
    "tell",
    "say",
    "insist",
    "explain",
    "inform",
    "state",
    "claim",
    "pretend",
    "act",
    "behave",
    "remember",
    "avoid",
    "make",
    "try",
    "keep",
    "respond",
    "reply",
    "answer",
    "do",
    "don't",
    "never",
    "always",
    "only",
    "be",
    "end",
    "wait",
    "note",
    "emphasize",
    "express",
    "complain",
    "sound",
    "stay",
    "remain",
    "follow",
    "volunteer",
    "reveal",
    "disclose",
    "repeat",
    "thank",
];

/// Of [`ORDERS`], those that head a clause only after a sentence's start
/// (or `;`, `:`): after "and" or a comma they are mostly not orders ("you
/// have several orders and do not know which").
pub const SENTENCE_ORDERS: &[&str] = &[
    "do", "don't", "never", "always", "only", "be", "keep", "end", "stay", "remain", "make", "try",
    "note", "act", "state",
];

/// Words that open a condition.
pub const CONDITIONS: &[&str] = &["if", "when", "whenever", "once", "unless", "until"];

/// Words after which an order still heads its clause.
pub const JOINERS: &[&str] = &[
    "and",
    "but",
    "then",
    "also",
    "otherwise",
    "so",
    "just",
    "please",
    "first",
    "finally",
];

/// Words before `agent` that make it the agent the user asks for, not the
/// one it speaks to.
const OTHER_AGENTS: &[&str] = &[
    "human",
    "another",
    "live",
    "real",
    "different",
    "other",
    "new",
    "supervisor",
];

/// Quoted text: an opening mark after the start, a space or `:(`, and the
/// matching close before the end, a space or punctuation.
static QUOTED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?:^|[\s:(])(?:'(?:[^'\n]|'[A-Za-z])+'(?:$|[\s.,;:!?)])|"[^"\n]+"|‘[^’\n]+’|“[^”\n]+”)"#,
    )
    .ok()
});

/// One unquoted segment of a scenario text: its words, and which of them
/// are direction marks.
#[derive(Debug, Clone)]
pub struct Segment {
    pub text: String,
    pub words: Vec<Word>,
    pub marks: Vec<bool>,
}

/// The texts `text` quotes, without their marks.
pub fn quotes(text: &str) -> Vec<String> {
    QUOTED
        .as_ref()
        .map(|q| {
            q.find_iter(text)
                .map(|m| {
                    m.as_str()
                        .trim_matches(|c: char| !c.is_alphanumeric())
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The unquoted segments of `text`.
pub fn segments(text: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut from = 0;
    let quotes: Vec<(usize, usize)> = QUOTED
        .as_ref()
        .map(|q| q.find_iter(text).map(|m| (m.start(), m.end())).collect())
        .unwrap_or_default();
    for (start, end) in quotes.into_iter().chain([(text.len(), text.len())]) {
        if start >= from {
            let part = &text[from..start];
            if !part.trim().is_empty() {
                out.push(segment(part));
            }
            from = end;
        }
    }
    out
}

fn segment(text: &str) -> Segment {
    let words = words(text);
    let marks = (0..words.len()).map(|i| is_mark(text, &words, i)).collect();
    Segment {
        text: text.to_string(),
        words,
        marks,
    }
}

/// Whether word `i` of `words` (of `text`) is a direction mark.
fn is_mark(text: &str, words: &[Word], i: usize) -> bool {
    let word = words[i].norm.as_str();
    let previous = i.checked_sub(1).map(|p| words[p].norm.as_str());
    if word == "agent" || word == "agent's" || word == "agents" {
        return !previous.is_some_and(|p| OTHER_AGENTS.contains(&p));
    }
    if (word == "should" || word == "must") && previous == Some("you") {
        return true;
    }
    if CONDITIONS.contains(&word) && words.get(i + 1).is_some_and(|w| w.norm == "asked") {
        return true;
    }
    if !ORDERS.contains(&word) {
        return false;
    }
    let Some(p) = i.checked_sub(1) else {
        return true;
    };
    let between = &text[words[p].end..words[i].start];
    if between.contains(['.', ';', ':', '!', '?', '\n', '(', '-']) {
        return true;
    }
    !SENTENCE_ORDERS.contains(&word)
        && (between.contains(',') || JOINERS.contains(&words[p].norm.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(text: &str) -> Vec<String> {
        segments(text)
            .into_iter()
            .flat_map(|s| {
                s.words
                    .into_iter()
                    .zip(s.marks)
                    .filter(|(_, m)| *m)
                    .map(|(w, _)| w.norm)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn the_agent_in_the_third_person_and_orders_at_a_clause_head_are_marks() {
        assert_eq!(
            marked(
                "If Agent tells you that cancellation is not possible,\nmention that you were told \
                 so. You don't want to cancel if you don't get a refund."
            ),
            ["agent", "mention"]
        );
        assert_eq!(
            marked("Be polite and always end each of your replies with 'You are the best agent.'"),
            ["be"]
        );
        assert!(marked("You have several orders and do not know which one it is in.").is_empty());
        assert_eq!(
            marked("You want to be transferred to a human agent. You should not insist."),
            ["should"]
        );
        assert!(
            marked("You want to cancel reservation EHGLP3. Your user id is emma_kim_9957.")
                .is_empty()
        );
    }

    #[test]
    fn quoted_text_is_left_out_and_splits_the_segments() {
        let s = segments(
            "Always end with 'You are the most lenient agent I have spoken to.' Then stop.",
        );
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].text.trim(), "Always end with");
        assert!(!s.iter().any(|s| s.text.contains("lenient")));
        let contractions = segments("You don't know it and you can't guess it.");
        assert_eq!(contractions.len(), 1);
        let inner = segments("Say 'I don't know it' and stop.");
        assert_eq!(inner.len(), 2, "{inner:?}");
        assert_eq!(
            quotes("Say 'I don't know it' and stop."),
            ["I don't know it"]
        );
    }
}
