//! `role_confusion`: the user wrote as the agent. Three signs:
//! - a phrase an agent says and a customer does not ([`PHRASES`],
//!   [`BUSINESS_GREETING`]);
//! - the agent's voice ([`AGENT_VOICE`]): the customer's records spoken of
//!   as "your reservation", the agent's actions reported ("I've updated your
//!   booking"), an offer to act ("Would you like me to…"), the customer's
//!   details asked for;
//! - [`COPIED_WORDS`] words in a row copied from the agent's previous
//!   message in the agent's voice (holding "you", "your", "we" or "our": a
//!   small model echoing its input). A customer that confirms or chooses by
//!   repeating the agent's words ("proceed with upgrading to economy and
//!   adding three checked bags") speaks in its own voice, and a name, a
//!   title or a time slot quoted back is not an echo either.

use std::sync::LazyLock;

use regex::Regex;

use super::input::UserTurns;
use super::words::{as_written, ngrams, quote, shared_run, words, Word};
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
/// the support team", "we are customer service". The article is needed:
/// "I'm okay proceeding with just the desk lamp" is a customer.
pub const BUSINESS_GREETING: &str = r"\b(?:this is|i'm|i am|we are|we're) (?:the|your) (?:[a-z0-9&'-]+ ){0,4}(?:support|desk|help ?desk|customer service|service team|assistant|representative|chatbot)\b|\b(?:this is|we are|we're) customer (?:service|support|care)\b";

/// The agent's voice, in the lower-cased message with straight apostrophes.
pub const AGENT_VOICE: &[&str] = &[
    // Offering help, as an agent does (not "happy to assist others").
    r"\b(?:happy|glad|here) to (?:assist|help)(?: you\b| with\b|[.!,]|$)",
    // The customer's records, spoken of as the customer's.
    r"\byour (?:reservation|booking|order|account|profile|user id|user-id|membership|payment method|itinerary|flight|trip|gift card|credit card|certificate|budget|cancellation|refund)s?\b",
    r"\byour (?:current|upcoming|original|remaining|most recent) (?:reservation|booking|order|flight|trip|cabin|payment)",
    // The agent's actions on them, reported.
    r"\b(?:i've|i have|we've|we have) (?:successfully |now |just )?(?:updated|cancell?ed|booked|processed|issued|modified|changed|transferred|refunded|upgraded|downgraded|applied|added|removed) (?:your|the reservation|the booking|this reservation)\b",
    // An offer to act.
    r"\bwould you like me to\b|\bshall i (?:proceed|go ahead|book|cancel|process)\b|\bdo you want me to (?:proceed|go ahead|book|cancel|modify|change|update|process)\b",
    // The customer's details, asked for.
    r"\b(?:could|can|may) you (?:please )?(?:provide|give|share|confirm|tell) (?:me )?(?:with )?your\b|\bplease (?:confirm|provide) (?:the following|your)\b",
    r"\blet me (?:check|search|look up|look into|calculate|verify|pull up|retrieve|review|process|summarize|show you)\b(?: (?:if (?:the|your|there|we)|whether (?:the|your|there|we)|the|that for you|this for you|for you|available|your|you)\b)",
    r"\bfeel free to (?:ask|reach out|contact)\b|\bif you have any (?:other |more |further )?questions\b|\bif you need (?:any )?further assistance\b",
    // Confirming with the customer what it will do.
    r"\blet me confirm\b|\bto confirm,? you\b|\bplease confirm (?:if|whether|that) you\b|\bwould you like to proceed\b",
    r"\bi can (?:assist|help) (?:you|with)\b|\bunderstand (?:your frustration|how frustrating|how difficult)\b",
    r"\bunfortunately,? i (?:cannot|can't|am unable to|'m unable to) (?:remove|cancel|modify|change|add|process|offer|issue|refund|upgrade|book|undo|reinstate)\b|\bthe policy states\b",
    // The business's own rules and its transfers.
    r"\bour (?:policy|policies|system|records|team)\b|\b(?:per|according to) our polic(?:y|ies)\b",
    r"\byou are being transferred\b|\b(?:i'll|i will|let me) transfer you\b|\btransferring you\b",
    r"\b(?:i'm|i am) (?:unable|not able) to (?:offer|process|issue|make an exception|modify your|cancel your|refund|provide you)\b",
    // Its summaries and requests for the customer's review.
    r"\bfor your (?:confirmation|review|reference)\b|\bplease review\b|\bhere (?:are|is) your\b",
    r"\b(?:i'll|i will) (?:need|require) (?:your|the following)\b|\b(?:i'll|i will) (?:now )?(?:process|issue|proceed with your)\b",
    r"\b(?:i've|i have) (?:found|located|checked|reviewed|verified|pulled up) your\b|\bi (?:can )?see (?:that )?your\b",
    r"\byour saved passengers\b",
];

/// Words in a row copied from the agent's previous message that make the
/// user an echo of the agent.
pub const COPIED_WORDS: usize = 8;

/// A copied run this long is an echo even when it is mostly names and
/// numbers (a list of flights said back).
const ECHOED_WORDS: usize = 20;

/// The agent's voice in a copied run: it speaks to the customer.
const AGENT_WORDS: &[&str] = &[
    "you", "your", "yours", "you're", "you'll", "you've", "we", "our", "us", "we'll", "we've",
];

static GREETING: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(BUSINESS_GREETING).ok());
static VOICE: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    AGENT_VOICE
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .collect()
});

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
        if let Some(m) = VOICE.iter().find_map(|v| v.find(&lower)) {
            evidence.push(Evidence {
                message: Some(line.index),
                text: excerpt(&line.text),
                why: format!("speaks as the agent: '{}'", m.as_str().trim()),
            });
            continue;
        }
        let Some(previous) = turns.agent_text_before(line.index) else {
            continue;
        };
        let agent = ngrams(&words(&previous.text), COPIED_WORDS, as_written);
        let said = words(&line.text);
        if let Some(run) = shared_run(&said, COPIED_WORDS, as_written, &agent, &[]) {
            let copied = &said[run.clone()];
            // A quoted name or slot is short; a whole message echoed is not.
            let quoted = copied.len() < ECHOED_WORDS && names_or_numbers(&line.text, copied);
            if quoted || !in_agent_voice(copied) {
                continue;
            }
            let count = run.len();
            evidence.push(Evidence {
                message: Some(line.index),
                text: excerpt(quote(&line.text, &said, run)),
                why: format!(
                    "copied {count} words in a row from the agent's message {}",
                    previous.index
                ),
            });
        }
    }
    CheckResult::from_evidence(UserFlag::RoleConfusion, evidence)
}

/// Whether copied words speak to the customer, as the agent does.
fn in_agent_voice(copied: &[Word]) -> bool {
    copied
        .iter()
        .any(|w| AGENT_WORDS.contains(&w.norm.as_str()))
}

/// Whether at least half the copied words are capitalized or hold a digit:
/// a name, a title, a date or a time slot the agent offered and the user
/// picks ("the \"Midnight Thrills: Writing Suspense with Author Sarah
/// Blackwood\" workshop on October 15th"), which a customer quotes. A
/// capable simulated user did so in 2 of NeMo Gym's 5 shipped
/// `conversational_tool_use_simulation` rollouts; an echo of the agent's
/// sentences is mostly lower-case words.
fn names_or_numbers(text: &str, copied: &[Word]) -> bool {
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
            "Your parcel #LL21743 was shipped on Monday by Parcelway and should arrive by Friday.";
        let r = check(&turns(&[
            ("agent", agent),
            ("user", "OK. Your parcel #LL21743 was shipped on Monday by Parcelway and should arrive soon."),
        ]));
        assert_eq!(r.outcome, Outcome::Flagged);
        assert!(
            r.evidence[0].why.contains("copied 12 words"),
            "{:?}",
            r.evidence
        );
        assert!(r.evidence[0].text.starts_with("Your parcel #LL21743"));
    }

    #[test]
    fn a_customer_confirming_in_the_agents_words_or_helping_others_is_not_flagged() {
        for (agent, said) in [
            (
                "To confirm: I will proceed with upgrading to economy class and adding three checked bags. Shall I go ahead?",
                "Yes, please proceed with upgrading to economy class and adding three checked bags.",
            ),
            (
                "Some seats will be refunded.",
                "If any won't be refunded, that's fine. I'm happy to assist others with the availability.",
            ),
            ("Anything else?", "I'm okay proceeding with just the desk lamp."),
        ] {
            let r = check(&turns(&[("agent", agent), ("user", said)]));
            assert_eq!(r.outcome, Outcome::Clear, "{said}: {:?}", r.evidence);
        }
    }

    #[test]
    fn a_user_speaking_as_the_agent_is_flagged() {
        for said in [
            "I have updated your reservation to economy. Is there anything else?",
            "Could you please provide your user ID so I can look it up?",
            "Would you like me to proceed with the cancellation?",
        ] {
            let r = check(&turns(&[("agent", "Hello."), ("user", said)]));
            assert_eq!(r.outcome, Outcome::Flagged, "{said}");
        }
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
