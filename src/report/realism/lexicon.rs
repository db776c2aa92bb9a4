//! What a user turn does, by documented lexicons and patterns
//! (docs/realism.md lists them): asks a question, gives an id or a number,
//! corrects the agent, expresses frustration. Each is a plain match on the
//! lower-cased text: cheap, explainable, and the same for both jobs, which
//! is what a comparison needs; it is not a classifier of intent.

use super::words::words;

/// Words that open a question when the turn has no `?`.
const QUESTION_OPENERS: [&str; 18] = [
    "what", "how", "why", "when", "where", "who", "which", "can", "could", "would", "will", "is",
    "are", "do", "does", "did", "should", "may",
];

/// Phrases with which a user says the agent got something wrong.
pub const CORRECTION_PHRASES: [&str; 22] = [
    "that's not",
    "that is not",
    "thats not",
    "not what i",
    "i said",
    "i meant",
    "i mean,",
    "actually,",
    "wrong",
    "incorrect",
    "not correct",
    "not right",
    "misunderstood",
    "i didn't ask",
    "i did not ask",
    "i already told",
    "i already said",
    "as i said",
    "let me clarify",
    "to clarify",
    "mistake",
    "no, ",
];

/// Phrases with which a user says they are frustrated.
pub const FRUSTRATION_PHRASES: [&str; 24] = [
    "frustrat",
    "annoy",
    "ridiculous",
    "unacceptable",
    "seriously",
    "waste of time",
    "wasting my time",
    "taking forever",
    "taking so long",
    "angry",
    "upset",
    "terrible",
    "useless",
    "come on",
    "!!",
    "ugh",
    "fed up",
    "disappointed",
    "not helpful",
    "how many times",
    "for the last time",
    "still not",
    "still waiting",
    "this is absurd",
];

/// The turn asks something: it holds a `?`, or its first word opens a question.
pub fn asks_question(text: &str) -> bool {
    text.contains('?')
        || words(text)
            .first()
            .is_some_and(|w| QUESTION_OPENERS.contains(&w.as_str()))
}

/// The turn gives an id or a number: a word with a digit, or an email.
pub fn has_id_or_number(text: &str) -> bool {
    words(text)
        .iter()
        .any(|w| w.chars().any(|c| c.is_ascii_digit()) || w.contains('@'))
}

fn has_phrase(text: &str, phrases: &[&str]) -> bool {
    let text = text.to_lowercase().replace('’', "'");
    phrases.iter().any(|p| text.contains(p))
}

/// The turn corrects the agent (a phrase of [`CORRECTION_PHRASES`], or the
/// turn opening with a bare "no"). Only turns after the agent spoke count.
pub fn corrects_agent(text: &str) -> bool {
    has_phrase(text, &CORRECTION_PHRASES)
        || words(text)
            .first()
            .is_some_and(|w| w == "no" || w == "nope")
            && !asks_question(text)
}

/// The turn expresses frustration (a phrase of [`FRUSTRATION_PHRASES`]).
pub fn expresses_frustration(text: &str) -> bool {
    has_phrase(text, &FRUSTRATION_PHRASES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_mark_or_an_opener_asks() {
        assert!(asks_question("My order hasn't come?"));
        assert!(asks_question("Can you check my order"));
        assert!(!asks_question("I want to return the lamp."));
    }

    #[test]
    fn digits_and_emails_are_ids_words_are_not() {
        assert!(has_id_or_number("Order #W2378156 please"));
        assert!(has_id_or_number("it's mia@example.com"));
        assert!(!has_id_or_number("the blue one"));
    }

    #[test]
    fn corrections_and_frustration_by_their_lexicons() {
        assert!(corrects_agent("No, I said the red one."));
        assert!(corrects_agent("That’s not what I ordered"));
        assert!(!corrects_agent("Yes, that works."));
        assert!(!corrects_agent("No problem? really"));
        assert!(expresses_frustration("This is ridiculous!!"));
        assert!(expresses_frustration("I'm so frustrated"));
        assert!(!expresses_frustration("Thanks, that helps."));
    }
}
