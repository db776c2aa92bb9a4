//! `role_confusion`: the user wrote as the assistant. Two signs: a phrase an
//! agent says and a customer does not ([`PHRASES`], [`BUSINESS_GREETING`]),
//! or [`COPIED_WORDS`] words in a row copied from the agent's previous
//! message (a small model echoing its input).

use std::sync::LazyLock;

use regex::Regex;

use super::input::UserTurns;
use super::words::{as_written, ngrams, quote, shared_run, words};
use super::{excerpt, CheckResult, Evidence, UserFlag};

/// Phrases of an agent, not a customer, matched in the lower-cased message
/// with straight apostrophes: offering help, thanking for the contact, and
/// speaking of itself as an AI or a model.
pub const PHRASES: &[&str] = &[
    "how can i help",
    "how may i help",
    "how can i assist",
    "how may i assist",
    "what can i help you with",
    "what can i do for you",
    "anything else i can help",
    "anything else i can do for you",
    "i'd be glad to help you",
    "i'd be happy to help you",
    "i'm here to help",
    "i am here to help",
    "here to assist",
    "happy to assist",
    "glad to assist",
    "thank you for contacting",
    "thanks for contacting",
    "thank you for reaching out",
    "thanks for reaching out",
    "i'm an ai",
    "i am an ai",
    "as an ai",
    "ai assistant",
    "language model",
    "i'm a virtual assistant",
    "i am a virtual assistant",
    "i don't have the ability",
    "i do not have the ability",
];

/// Greeting as the business: "I'm the Lantern & Loom advice desk", "this is
/// the support team", "we are customer service".
pub const BUSINESS_GREETING: &str = r"\b(?:this is|i'm|i am|we are|we're) (?:the |your |a |an )?[a-z0-9&' -]{0,40}?\b(?:support|desk|help ?desk|customer service|service team|assistant|representative|chatbot)\b";

/// Words in a row copied from the agent's previous message that make the
/// user an echo of the agent.
pub const COPIED_WORDS: usize = 8;

static GREETING: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(BUSINESS_GREETING).ok());

/// Lower case with straight apostrophes, what [`PHRASES`] are matched in.
pub fn plain(text: &str) -> String {
    text.replace('’', "'").to_lowercase()
}

pub fn check(turns: &UserTurns) -> CheckResult {
    let mut evidence = Vec::new();
    for line in turns.user_lines() {
        let lower = plain(&line.text);
        if let Some(phrase) = PHRASES.iter().find(|p| lower.contains(*p)) {
            evidence.push(Evidence {
                message: Some(line.index),
                text: excerpt(&line.text),
                why: format!("an agent's phrase: '{phrase}'"),
            });
            continue;
        }
        if let Some(m) = GREETING.as_ref().and_then(|g| g.find(&lower)) {
            evidence.push(Evidence {
                message: Some(line.index),
                text: excerpt(&line.text),
                why: format!("greets as the business: '{}'", m.as_str()),
            });
            continue;
        }
        let Some(previous) = turns.agent_text_before(line.index) else {
            continue;
        };
        let agent = ngrams(&words(&previous.text), COPIED_WORDS, as_written);
        let said = words(&line.text);
        if let Some(run) = shared_run(&said, COPIED_WORDS, as_written, &agent, &[]) {
            if names_or_numbers(&line.text, &said[run.clone()]) {
                continue;
            }
            let copied = run.len();
            evidence.push(Evidence {
                message: Some(line.index),
                text: excerpt(quote(&line.text, &said, run)),
                why: format!(
                    "copied {copied} words in a row from the agent's message {}",
                    previous.index
                ),
            });
        }
    }
    CheckResult::from_evidence(UserFlag::RoleConfusion, evidence)
}

/// Whether at least half the copied words are capitalized or hold a digit:
/// a name, a title, a date or a time slot the agent offered and the user
/// picks ("the \"Midnight Thrills: Writing Suspense with Author Sarah
/// Blackwood\" workshop on October 15th"), which a customer quotes. A
/// capable simulated user did so in 2 of NeMo Gym's 5 shipped
/// `conversational_tool_use_simulation` rollouts; an echo of the agent's
/// sentences is mostly lower-case words.
fn names_or_numbers(text: &str, copied: &[super::words::Word]) -> bool {
    let marked = copied
        .iter()
        .filter(|w| {
            let written = &text[w.start..w.end];
            written.chars().next().is_some_and(char::is_uppercase)
                || written.chars().any(|c| c.is_ascii_digit())
        })
        .count();
    marked * 2 >= copied.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user_checks::input::dialogue as turns;
    use crate::user_checks::Outcome;

    #[test]
    fn a_user_offering_help_or_speaking_as_an_ai_is_flagged() {
        for said in [
            "I'm an AI. I don't have the ability to assist you with that.",
            "Hello, how can I help you today?",
            "Hello, I’m the Lantern & Loom advice desk.",
            "I'm all about helping, and I'm happy to assist with anything.",
        ] {
            let r = check(&turns(&[("agent", "Hi! What can I do?"), ("user", said)]));
            assert_eq!(r.outcome, Outcome::Flagged, "{said}");
            assert_eq!(r.evidence[0].message, Some(1));
        }
    }

    #[test]
    fn a_user_quoting_a_name_or_a_time_the_agent_offered_is_not_flagged() {
        for (agent, said) in [
            (
                "You asked about the \"Midnight Thrills: Writing Suspense with Author Sarah Blackwood\" workshop on October 15th.",
                "Yes, the \"Midnight Thrills: Writing Suspense with Author Sarah Blackwood\" workshop on October 15th, please.",
            ),
            (
                "Open slots: 10:00 AM (2025-12-08 10:00:00) or 2:00 PM (2025-12-08 14:00:00) or later.",
                "I'll take 2:00 PM (2025-12-08 14:00:00) or whatever is closest.",
            ),
        ] {
            let r = check(&turns(&[("agent", agent), ("user", said)]));
            assert_eq!(r.outcome, Outcome::Clear, "{said}: {:?}", r.evidence);
        }
    }

    #[test]
    fn a_user_echoing_the_agent_is_flagged_with_the_copied_words() {
        let agent =
            "Your order #LL21743 was shipped on Monday by Parcelway and should arrive by Friday.";
        let r = check(&turns(&[
            ("agent", agent),
            ("user", "OK. Your order #LL21743 was shipped on Monday by Parcelway and should arrive soon."),
        ]));
        assert_eq!(r.outcome, Outcome::Flagged);
        assert!(
            r.evidence[0].why.contains("copied 12 words"),
            "{:?}",
            r.evidence
        );
        assert!(r.evidence[0].text.starts_with("Your order #LL21743"));
    }

    #[test]
    fn an_ordinary_customer_is_not_flagged() {
        let r = check(&turns(&[
            ("agent", "Hi! Thanks for contacting Lantern & Loom support. How can I help you today?"),
            ("user", "I ordered hiking boots and want to know where they are. I am the account holder."),
            ("agent", "Could you give me your email address?"),
            ("user", "Sure, it is theo@inkwell.example. Thanks for your help, you're welcome to call me."),
        ]));
        assert_eq!(r.outcome, Outcome::Clear, "{:?}", r.evidence);
    }
}
